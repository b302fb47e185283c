"""`RawObject`: one object as the server sent it (JSON bytes), decoded into its typed class on first use.

The informer hands these to the runtime's own event plumbing (sources, predicates, handlers): the
key, resourceVersion, generation and owner uids come from a cheap msgspec decode of the metadata, so
an event that a predicate drops (the controller's own status write) or that only needs the object's
name (`EnqueueRequestForObject`) never pays for the full decode. Whoever reads `.object` gets the
typed object, decoded once and shared by every handler of that event (as client-go shares them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from pyscaffold_op.runtime.objects.objmeta import OwnerRef


class _OwnerRef(msgspec.Struct):
    apiVersion: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    blockOwnerDeletion: bool | None = None


class _Meta(msgspec.Struct):
    name: str = ""
    namespace: str = ""
    resourceVersion: str = ""
    generation: int | None = None
    ownerReferences: list[_OwnerRef] | None = None


class _Envelope(msgspec.Struct):
    metadata: _Meta | None = None


_meta_decoder = msgspec.json.Decoder(_Envelope)
_EMPTY = _Meta()


def decode_meta(raw: bytes) -> _Meta:
    return _meta_decoder.decode(raw).metadata or _EMPTY


class RawObject:
    """An object's JSON, its metadata (decoded now) and its typed form (decoded on first `.object`)."""

    __slots__ = ("_decode", "_meta", "_object", "raw")

    def __init__(self, raw: bytes, decode: Callable[[bytes], Any], obj: Any = None) -> None:
        self.raw = raw
        self._decode = decode
        self._object = obj
        self._meta: _Meta | None = None

    @property
    def object(self) -> Any:
        if self._object is None:
            self._object = self._decode(self.raw)
        return self._object

    @property
    def decoded(self) -> bool:
        return self._object is not None

    @property
    def meta(self) -> _Meta:
        if self._meta is None:
            self._meta = decode_meta(self.raw)
        return self._meta

    @property
    def key(self) -> str:
        meta = self.meta
        return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name

    def owner_uids(self) -> list[str]:
        return [ref.uid for ref in self.meta.ownerReferences or ()]

    def owner_references(self) -> list[OwnerRef]:
        return [
            OwnerRef(r.apiVersion, r.kind, r.name, r.uid, bool(r.controller), bool(r.blockOwnerDeletion))
            for r in self.meta.ownerReferences or ()
        ]

    def __repr__(self) -> str:
        return f"RawObject({self.key!r}, rv={self.meta.resourceVersion!r}, decoded={self.decoded})"


_fields = msgspec.json.Decoder(dict[str, msgspec.Raw])
# What a write to the status subresource changes besides status (generation too, for a kind whose
# status is not a subresource), as in predicate.IgnoreStatusChanges.
_STATUS_NOISE = frozenset({"resourceVersion", "managedFields", "generation"})


def same_beyond_status(old: RawObject, new: RawObject) -> bool:
    """True when the two objects differ at most in `status` and the metadata a status write changes.

    Compares the JSON field by field: equal bytes are equal values (the whole dict compared at once,
    in C); only when some bytes differ is each field decoded and compared by value (another key order
    or number format is no change)."""
    a, b = _fields.decode(old.raw), _fields.decode(new.raw)
    meta_a, meta_b = a.pop("metadata", None), b.pop("metadata", None)
    a.pop("status", None)
    b.pop("status", None)
    if a != b and not _same_fields(a, b, _NOTHING):
        return False
    if meta_a is None or meta_b is None:
        return meta_a is meta_b
    try:
        fields_a, fields_b = _fields.decode(meta_a), _fields.decode(meta_b)
    except msgspec.DecodeError:  # metadata that is not an object: compare it whole
        return _same_value(meta_a, meta_b)
    for noise in _STATUS_NOISE:
        fields_a.pop(noise, None)
        fields_b.pop(noise, None)
    return fields_a == fields_b or _same_fields(fields_a, fields_b, _NOTHING)


_NOTHING: frozenset[str] = frozenset()


def _same_fields(a: dict[str, msgspec.Raw], b: dict[str, msgspec.Raw], skip: frozenset[str]) -> bool:
    keys = (a.keys() | b.keys()) - skip
    for key in keys:
        va, vb = a.get(key), b.get(key)
        if va is None or vb is None:
            if va is not vb:
                return False
        elif not _same_value(va, vb):
            return False
    return True


def _same_value(a: msgspec.Raw, b: msgspec.Raw) -> bool:
    return bytes(a) == bytes(b) or msgspec.json.decode(a) == msgspec.json.decode(b)


def unwrap(value: Any) -> Any:
    """The typed object of a RawObject; anything else as it is."""
    return value.object if type(value) is RawObject else value
