"""What changed between two states of an object: kopf's `diff`, for predicates and the reconcile context.

Objects are compared in their wire form (the JSON the server sends: camelCase field names), whatever
shape they arrive in: an informer's `RawObject`, a typed `KubeObject`, a dict. A path is the dotted
wire path (`"spec.replicas"`, `"metadata.labels"`): a typed object's `spec.create_fn` is
`spec.createFn` on the wire, and that is the name a path uses.

`essence(obj)` is what a user changes, as kopf's last-handled configuration keeps it: every top-level
field but `status`, plus `metadata.labels` and `metadata.annotations`; the server's bookkeeping
(resourceVersion, managedFields, generation, uid, timestamps) and status are left out, so a status
write or a resync is no change. `diff(old, new)` compares two essences field by field down to the
leaves of mappings; a list is one value (as kopf compares them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from pyscaffold_op.runtime.objects.rawobj import RawObject

Path = tuple[str, ...]
Op = Literal["add", "change", "remove"]

_MISSING: Any = object()
_META_KEPT = ("labels", "annotations")


@dataclass(frozen=True, slots=True)
class Change:
    """One difference: `op` is "add" (absent before), "remove" (absent now) or "change"; `old`/`new`
    are None on the side where the field is absent."""

    op: Op
    path: Path
    old: Any
    new: Any

    @property
    def field(self) -> str:
        """The dotted path (`"spec.replicas"`)."""
        return ".".join(self.path)


def wire(obj: Any) -> dict[str, Any]:
    """The object as the JSON the server sends (camelCase keys, no None fields)."""
    if obj is None:
        return {}
    if type(obj) is RawObject:
        data = msgspec.json.decode(obj.raw)
        return data if isinstance(data, dict) else {}
    if isinstance(obj, Mapping):
        return dict(obj)
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        result = to_dict()
        return result if isinstance(result, dict) else {}
    data = msgspec.to_builtins(obj)
    return data if isinstance(data, dict) else {}


def parse_path(path: str | Path) -> Path:
    """`"spec.x"` or `("spec", "x")` as a tuple; an empty path or segment is a ValueError."""
    parts = tuple(path.split(".")) if isinstance(path, str) else tuple(path)
    if not parts or any(not p for p in parts):
        raise ValueError(f"{path!r} is not a field path: use dotted wire names, such as 'spec.replicas'")
    return parts


def value_at(obj: Any, path: str | Path, default: Any = None) -> Any:
    """The value at `path` in the object's wire form, `default` when a step is missing."""
    node: Any = obj if isinstance(obj, dict) else wire(obj)
    for part in parse_path(path):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def essence(obj: Any) -> dict[str, Any]:
    """What a user changes: the wire form minus status, apiVersion, kind and the server's metadata."""
    data = wire(obj)
    out = {k: v for k, v in data.items() if k not in ("status", "metadata", "apiVersion", "kind")}
    meta = data.get("metadata") or {}
    kept = {k: meta[k] for k in _META_KEPT if meta.get(k)}
    if kept:
        out["metadata"] = kept
    return out


def diff(old: Any, new: Any) -> tuple[Change, ...]:
    """The changes from `old` to `new` (objects in any shape, or None), over their essences."""
    return tuple(_walk(essence(old) if old is not None else {}, essence(new) if new is not None else {}, ()))


def _walk(old: Any, new: Any, path: Path) -> Iterator[Change]:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys()):
            yield from _walk(old.get(key, _MISSING), new.get(key, _MISSING), (*path, key))
        return
    if old is _MISSING and new is not _MISSING:
        yield Change("add", path, None, new)
    elif new is _MISSING and old is not _MISSING:
        yield Change("remove", path, old, None)
    elif old != new:
        yield Change("change", path, old, new)
