"""Work on a CRD done once per content, not once per API server: what a test suite pays per environment.

A suite that starts an emulator per test installs the same CRDs again and again; a CronJob CRD that
embeds a JobTemplate is ~1.4 MB, and its checks and compiled schema cost most of a second each time.
Here that work is keyed by the content it depends on, for the whole process:

* `canonical(schema)`: the one shared instance of a structural schema with this content. Served
  resources of every environment hold it, so what is memoized per schema object (the compiled
  pruning/defaulting/validation closures, CEL programs' type keys, `has_rules`) is built once and
  those memos stop growing with every environment. The instance is a private copy (decoded from the
  bytes the content was hashed from): no caller's dict is shared, so no caller's mutation can reach
  it; callers must treat it as read-only, as they treat a served schema.
* `compiled(schema)`: the `CompiledSchema` of a canonical schema (any other schema compiles anew).
* `memo(kind, key_parts, compute)`: a result keyed by content (a CRD's validation causes).

Both stores are bounded (least recently used out first), by entries and by the size of their content.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec

from pyscaffold_op.apiextensions.compiled import CompiledSchema

__all__ = ["canonical", "clear", "compiled", "digest", "memo", "stats"]

T = TypeVar("T")
Schema = dict[str, Any]

MAX_SCHEMAS = 256
MAX_SCHEMA_BYTES = 48 * 1024 * 1024  # encoded JSON; a 1.4 MB CRD's two schemas are ~1 MB of it
MAX_MEMOS = 1024

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()
_lock = threading.Lock()  # environments run on their own threads (`start_in_thread`)


@dataclass
class _Entry:
    schema: Schema
    size: int
    compiled: CompiledSchema | None = None


_schemas: OrderedDict[bytes, _Entry] = OrderedDict()
_by_id: dict[int, _Entry] = {}
_memos: OrderedDict[tuple[str, bytes], Any] = OrderedDict()
_bytes = 0
_counts = {"schema_hits": 0, "schema_misses": 0, "memo_hits": 0, "memo_misses": 0}


def digest(value: Any) -> bytes:
    """A content key of a JSON value (dict order counts: the same source gives the same order)."""
    return hashlib.blake2b(_encoder.encode(value), digest_size=20).digest()


def canonical(schema: Schema | None) -> Schema | None:
    """The shared, read-only instance of `schema`'s content (None stays None)."""
    global _bytes
    if schema is None:
        return None
    encoded = _encoder.encode(schema)
    key = hashlib.blake2b(encoded, digest_size=20).digest()
    with _lock:
        entry = _schemas.get(key)
        if entry is not None:
            _schemas.move_to_end(key)
            _counts["schema_hits"] += 1
            return entry.schema
        _counts["schema_misses"] += 1
        entry = _Entry(_decoder.decode(encoded), len(encoded))
        _schemas[key] = entry
        _by_id[id(entry.schema)] = entry
        _bytes += entry.size
        while _schemas and (len(_schemas) > MAX_SCHEMAS or _bytes > MAX_SCHEMA_BYTES) and len(_schemas) > 1:
            _, old = _schemas.popitem(last=False)
            _by_id.pop(id(old.schema), None)
            _bytes -= old.size
        return entry.schema


def compiled(schema: Schema | None) -> CompiledSchema:
    """`schema` compiled for pruning, defaulting and validation: shared (with the closures built so
    far) when `schema` is a canonical instance, a new compilation otherwise."""
    if schema is None:
        return CompiledSchema(None)
    with _lock:
        entry = _by_id.get(id(schema))
        if entry is None or entry.schema is not schema:
            return CompiledSchema(schema)
        if entry.compiled is None:
            entry.compiled = CompiledSchema(schema)
        return entry.compiled


def memo(kind: str, key: bytes, compute: Callable[[], T]) -> T:
    """`compute()`'s result for this content `key` (see `digest`), computed once per process."""
    with _lock:
        if (kind, key) in _memos:
            _memos.move_to_end((kind, key))
            _counts["memo_hits"] += 1
            return _memos[(kind, key)]  # type: ignore[no-any-return,unused-ignore]
        _counts["memo_misses"] += 1
    value = compute()
    with _lock:
        _memos[(kind, key)] = value
        while len(_memos) > MAX_MEMOS:
            _memos.popitem(last=False)
    return value


def stats() -> dict[str, int]:
    """Hits and misses so far, and what is held (for tests and benchmarks)."""
    with _lock:
        return {**_counts, "schemas": len(_schemas), "schema_bytes": _bytes, "memos": len(_memos)}


def clear() -> None:
    """Forget everything (tests)."""
    global _bytes
    with _lock:
        _schemas.clear()
        _by_id.clear()
        _memos.clear()
        _bytes = 0
        for k in _counts:
            _counts[k] = 0
