"""Uniform access to metadata of the three object shapes the runtime handles.

* our pydantic `KubeObject`s: `CustomResource`s and the built-in models of `pyscaffold_op.models`
  (snake_case: `metadata.resource_version`, `owner_references`, ...)
* lightkube's msgspec models (camelCase: `metadata.resourceVersion`, `ownerReferences`, ...)
* lightkube generic resources and plain dicts (`obj["metadata"]["resourceVersion"]`)

Handlers, predicates, the cache and controllerutil all go through these functions, so none of them
cares which shape it was given.
"""

# No `from __future__ import annotations` here: it would bind the name `annotations`, which is one of
# this module's functions.

from dataclasses import dataclass
from typing import Any

from pyscaffold_op.apimachinery import KubeObject
from pyscaffold_op.apimachinery import ObjectMeta as PydanticMeta
from pyscaffold_op.apimachinery import OwnerReference as PydanticOwnerRef

# snake_case attribute -> camelCase wire / lightkube attribute
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


def _meta(obj: Any) -> Any:
    if isinstance(obj, dict):
        meta = obj.get("metadata")
        if meta is None:
            meta = obj["metadata"] = {}
        return meta
    meta = obj.metadata
    if meta is None:
        meta = _new_meta(obj)
        obj.metadata = meta
    elif isinstance(meta, PydanticMeta) and not isinstance(obj, KubeObject):
        from pyscaffold_op.runtime.objects.kinds import mixed_lightkube

        raise mixed_lightkube(obj, meta, ".metadata")
    return meta


def _new_meta(obj: Any) -> Any:
    from lightkube.models.meta_v1 import ObjectMeta as LightkubeMeta

    return LightkubeMeta()


def get_field(obj: Any, snake: str) -> Any:
    meta = _meta(obj)
    if isinstance(meta, dict):
        return meta.get(_CAMEL.get(snake, snake))
    if isinstance(meta, PydanticMeta):
        return getattr(meta, snake, None)
    return getattr(meta, _CAMEL.get(snake, snake), None)


def set_field(obj: Any, snake: str, value: Any) -> None:
    meta = _meta(obj)
    if isinstance(meta, dict):
        meta[_CAMEL.get(snake, snake)] = value
    elif isinstance(meta, PydanticMeta):
        setattr(meta, snake, value)
    else:
        setattr(meta, _CAMEL.get(snake, snake), value)


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
    set_field(obj, "finalizers", list(values) if values or _is_pydantic(obj) else None)


def deletion_timestamp(obj: Any) -> Any:
    return get_field(obj, "deletion_timestamp")


def _is_pydantic(obj: Any) -> bool:
    return not isinstance(obj, dict) and isinstance(getattr(obj, "metadata", None), PydanticMeta)


def owner_references(obj: Any) -> list[OwnerRef]:
    refs = get_field(obj, "owner_references") or []
    out = []
    for ref in refs:
        if isinstance(ref, dict):
            out.append(
                OwnerRef(
                    ref.get("apiVersion", ""),
                    ref.get("kind", ""),
                    ref.get("name", ""),
                    ref.get("uid", ""),
                    bool(ref.get("controller")),
                    bool(ref.get("blockOwnerDeletion")),
                )
            )
        elif isinstance(ref, PydanticOwnerRef):
            out.append(
                OwnerRef(
                    ref.api_version,
                    ref.kind,
                    ref.name,
                    ref.uid,
                    bool(ref.controller),
                    bool(ref.block_owner_deletion),
                )
            )
        else:  # lightkube meta_v1.OwnerReference
            out.append(
                OwnerRef(
                    ref.apiVersion,
                    ref.kind,
                    ref.name,
                    ref.uid,
                    bool(ref.controller),
                    bool(ref.blockOwnerDeletion),
                )
            )
    return out


def set_owner_references(obj: Any, refs: list[OwnerRef]) -> None:
    meta = _meta(obj)
    if isinstance(meta, dict):
        meta["ownerReferences"] = [r.to_dict() for r in refs]
    elif isinstance(meta, PydanticMeta):
        meta.owner_references = [PydanticOwnerRef.model_validate(r.to_dict()) for r in refs]
    else:
        from lightkube.models.meta_v1 import OwnerReference as LightkubeOwnerRef

        meta.ownerReferences = [
            LightkubeOwnerRef(
                apiVersion=r.api_version,
                kind=r.kind,
                name=r.name,
                uid=r.uid,
                controller=r.controller or None,
                blockOwnerDeletion=r.block_owner_deletion or None,
            )
            for r in refs
        ] or None


def controller_of(obj: Any) -> OwnerRef | None:
    """The owner reference marked `controller: true`, if any."""
    return next((r for r in owner_references(obj) if r.controller), None)
