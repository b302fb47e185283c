"""Uniform access to the metadata of the object shapes the runtime handles.

* pyop's typed `KubeObject`s: `CustomResource`s and the built-in models of `pyscaffold_op.models`
  (snake_case: `metadata.resource_version`, `owner_references`, ...)
* untyped objects, plain dicts as the server sends them (`obj["metadata"]["resourceVersion"]`)
* another library's objects, through its adapter (`pyscaffold_op.runtime.adapters`)

Handlers, predicates, the cache and controllerutil all go through these functions, so none of them
cares which shape it was given. (The informer's `RawObject` reads its metadata itself: rawobj.py.)
"""

# No `from __future__ import annotations` here: it would bind the name `annotations`, which is one of
# this module's functions.

from dataclasses import dataclass
from typing import Any

from pyscaffold_op.apimachinery import KubeObject
from pyscaffold_op.apimachinery import ObjectMeta as PydanticMeta
from pyscaffold_op.apimachinery import OwnerReference as PydanticOwnerRef

# snake_case attribute -> camelCase wire name
_CAMEL = {
    "resource_version": "resourceVersion",
    "owner_references": "ownerReferences",
    "deletion_timestamp": "deletionTimestamp",
    "creation_timestamp": "creationTimestamp",
    "generate_name": "generateName",
}


@dataclass(frozen=True, slots=True)
class OwnerRef:
    """An owner reference, independent of the model library it came from."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool = False
    block_owner_deletion: bool = False

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0] if "/" in self.api_version else ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "name": self.name,
            "uid": self.uid,
        }
        if self.controller:
            out["controller"] = True
        if self.block_owner_deletion:
            out["blockOwnerDeletion"] = True
        return out


def _dict_meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if meta is None:
        meta = obj["metadata"] = {}
    return meta


def _typed_meta(obj: KubeObject) -> PydanticMeta:
    meta = obj.metadata
    if meta is None:
        meta = obj.metadata = PydanticMeta()
    return meta


def _adapter(obj: Any) -> Any:
    from pyscaffold_op.runtime.adapters import adapter_for

    return adapter_for(obj)


def get_field(obj: Any, snake: str) -> Any:
    if isinstance(obj, KubeObject):
        return getattr(_typed_meta(obj), snake, None)
    if isinstance(obj, dict):
        return _dict_meta(obj).get(_CAMEL.get(snake, snake))
    return _adapter(obj).get_field(obj, snake)


def set_field(obj: Any, snake: str, value: Any) -> None:
    if isinstance(obj, KubeObject):
        setattr(_typed_meta(obj), snake, value)
    elif isinstance(obj, dict):
        _dict_meta(obj)[_CAMEL.get(snake, snake)] = value
    else:
        _adapter(obj).set_field(obj, snake, value)


def name(obj: Any) -> str:
    return get_field(obj, "name") or ""


def namespace(obj: Any) -> str:
    return get_field(obj, "namespace") or ""


def key(obj: Any) -> str:
    """The cache key: "namespace/name", or "name" for cluster-scoped objects (MetaNamespaceKey)."""
    ns = namespace(obj)
    return f"{ns}/{name(obj)}" if ns else name(obj)


def uid(obj: Any) -> str:
    return get_field(obj, "uid") or ""


def resource_version(obj: Any) -> str:
    return get_field(obj, "resource_version") or ""


def generation(obj: Any) -> int:
    return get_field(obj, "generation") or 0


def labels(obj: Any) -> dict[str, str]:
    return get_field(obj, "labels") or {}


def annotations(obj: Any) -> dict[str, str]:
    return get_field(obj, "annotations") or {}


def finalizers(obj: Any) -> list[str]:
    return list(get_field(obj, "finalizers") or [])


def set_finalizers(obj: Any, values: list[str]) -> None:
    set_field(obj, "finalizers", list(values) if values or isinstance(obj, KubeObject) else None)


def deletion_timestamp(obj: Any) -> Any:
    return get_field(obj, "deletion_timestamp")


def owner_references(obj: Any) -> list[OwnerRef]:
    if isinstance(obj, KubeObject):
        return [
            OwnerRef(
                ref.api_version,
                ref.kind,
                ref.name,
                ref.uid,
                bool(ref.controller),
                bool(ref.block_owner_deletion),
            )
            for ref in _typed_meta(obj).owner_references or []
        ]
    if isinstance(obj, dict):
        return [
            OwnerRef(
                ref.get("apiVersion", ""),
                ref.get("kind", ""),
                ref.get("name", ""),
                ref.get("uid", ""),
                bool(ref.get("controller")),
                bool(ref.get("blockOwnerDeletion")),
            )
            for ref in _dict_meta(obj).get("ownerReferences") or []
        ]
    return list(_adapter(obj).owner_references(obj))


def set_owner_references(obj: Any, refs: list[OwnerRef]) -> None:
    if isinstance(obj, KubeObject):
        _typed_meta(obj).owner_references = [PydanticOwnerRef.model_validate(r.to_dict()) for r in refs]
    elif isinstance(obj, dict):
        _dict_meta(obj)["ownerReferences"] = [r.to_dict() for r in refs]
    else:
        _adapter(obj).set_owner_references(obj, refs)


def controller_of(obj: Any) -> OwnerRef | None:
    """The owner reference marked `controller: true`, if any."""
    return next((r for r in owner_references(obj) if r.controller), None)
