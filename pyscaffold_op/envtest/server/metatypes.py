"""Type checks of `metadata` in request bodies: the real server fails to decode ill-typed metadata
with a 400, and the emulator must answer the same instead of tripping over it later."""

from __future__ import annotations

from typing import Any

from pyscaffold_op.envtest import status as E

_META_STR = (
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "selfLink",
    "creationTimestamp",
    "deletionTimestamp",
)
_REF_STR = ("apiVersion", "kind", "name", "uid")


def _type_error(field: str, value: Any, want: str) -> E.StatusError:
    """The decoder's message for an ill-typed metadata field (the real server answers 400)."""
    got = {dict: "object", list: "array", str: "string", bool: "bool", int: "number", float: "number"}.get(
        type(value), "null"
    )
    return E.bad_request(f"json: cannot unmarshal {got} into Go struct field {field} of type {want}")


def check_meta_types(meta: Any) -> None:
    if not isinstance(meta, dict):
        raise _type_error("Object.metadata", meta, "v1.ObjectMeta")
    for k in _META_STR:
        if k in meta and meta[k] is not None and not isinstance(meta[k], str):
            raise _type_error(f"ObjectMeta.metadata.{k}", meta[k], "string")
    for k in ("generation", "deletionGracePeriodSeconds"):
        v = meta.get(k)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool)):
            raise _type_error(f"ObjectMeta.metadata.{k}", v, "int64")
    for k in ("labels", "annotations"):
        v = meta.get(k)
        if v is None:
            continue
        if not isinstance(v, dict) or not all(isinstance(x, str) for x in v.values()):
            raise _type_error(f"ObjectMeta.metadata.{k}", v, "map[string]string")
    fins = meta.get("finalizers")
    if fins is not None and (not isinstance(fins, list) or not all(isinstance(f, str) for f in fins)):
        raise _type_error("ObjectMeta.metadata.finalizers", fins, "[]string")
    refs = meta.get("ownerReferences")
    if refs is not None:
        if not isinstance(refs, list) or not all(isinstance(r, dict) for r in refs):
            raise _type_error("ObjectMeta.metadata.ownerReferences", refs, "[]v1.OwnerReference")
        for r in refs:
            for k in _REF_STR:
                if not isinstance(r.get(k, ""), str):
                    raise _type_error(f"OwnerReference.metadata.ownerReferences.{k}", r[k], "string")
            for k in ("controller", "blockOwnerDeletion"):
                if r.get(k) is not None and not isinstance(r[k], bool):
                    raise _type_error(f"OwnerReference.metadata.ownerReferences.{k}", r[k], "bool")
    mf = meta.get("managedFields")
    if mf is not None and (not isinstance(mf, list) or not all(isinstance(e, dict) for e in mf)):
        raise _type_error("ObjectMeta.metadata.managedFields", mf, "[]v1.ManagedFieldsEntry")
