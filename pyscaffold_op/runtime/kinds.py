"""Resource information for a kind class: where it lives in the API and how to (de)serialize it.

One thin adapter over the three kinds of classes the client accepts: our pydantic `KubeObject`s (the
user's `CustomResource` subclasses and the built-in models of `pyscaffold_op.models`), lightkube's typed
models (`lightkube.resources.core_v1.Pod`, msgspec structs) and lightkube generic resources (dict
subclasses). A lightkube object holding a pydantic model (or the reverse) is refused with the fix.
Decoding goes straight from bytes (pydantic-core or msgspec), which is what keeps a 10,000-object list
cheap.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, cast

import msgspec
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from pyscaffold_op.apimachinery import CustomResource, KubeObject

_decode = msgspec.json.decode


def typed_module(group: str, version: str) -> str:
    """The `pyscaffold_op.models` module of a built-in group/version (`apps`, `v1` -> `apps_v1`)."""
    return f"pyscaffold_op.models.{group.split('.')[0] or 'core'}_{version}"


class ObjectDecodeError(ValueError):
    """An object the API server sent does not fit its Python type: for a custom resource, most often a
    CRD in the cluster older than the types (a field added, or made required, since `make install`).
    Its message is one line naming the kind, the object, each bad field and the fix; the controller logs
    it without a traceback (the pydantic error is its `__cause__`)."""


def _decode_error(info: ResourceInfo, data: bytes, err: PydanticValidationError) -> ObjectDecodeError:
    try:
        meta = _decode(data).get("metadata") or {}
        ns, name = meta.get("namespace"), meta.get("name")
        obj = f"{ns}/{name}" if ns else str(name)
    except (msgspec.DecodeError, AttributeError, TypeError):
        obj = "?"
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in err.errors()[:5]
    )
    more = f" (and {err.error_count() - 5} more)" if err.error_count() > 5 else ""
    hint = (
        "the CRD in the cluster may be older than the types: run make install (in tests: make manifests)"
        if issubclass(info.cls, CustomResource)
        else "the server's object does not fit the model"
    )
    return ObjectDecodeError(
        f"{info.kind} {obj} from the API server does not fit {info.cls.__module__}.{info.cls.__qualname__}: "
        f"{problems}{more}; {hint}"
    )


class MixedModelsError(TypeError):
    """A lightkube object holds one of pyop's pydantic models, or a pyop model holds a lightkube one."""


def mixed_lightkube(holder: Any, value: Any, where: str) -> MixedModelsError:
    info = getattr(type(holder), "_api_info", None)
    kind = type(holder).__name__
    typed = (
        f"{typed_module(info.resource.group, info.resource.version)}.{kind}"
        if info
        else "pyscaffold_op.models"
    )
    return MixedModelsError(
        f"lightkube {kind} holds pyop's {type(value).__name__} (pydantic) at {where}: build the object "
        f"from the typed models ({typed}, which use pyop's ObjectMeta), or keep it all lightkube "
        f"(lightkube.models.meta_v1.ObjectMeta)"
    )


def _enc_hook(value: Any) -> Any:
    if isinstance(value, BaseModel):
        raise MixedModelsError(
            f"a lightkube object holds pyop's {type(value).__name__} (pydantic): build the whole object "
            "from pyscaffold_op.models (typed models), or use only lightkube.models inside it"
        )
    raise TypeError(f"Encoding objects of type {type(value).__name__} is unsupported")


def _encode(obj: Any) -> bytes:
    return msgspec.json.encode(obj, enc_hook=_enc_hook)


class _ListMeta(msgspec.Struct):
    resourceVersion: str | None = None
    continue_: str | None = msgspec.field(name="continue", default=None)


class _ListEnvelope(msgspec.Struct):
    items: list[msgspec.Raw] | None = None
    metadata: _ListMeta | None = None


class _WatchEvent(msgspec.Struct):
    type: str
    object: msgspec.Raw


class _MetaOnly(msgspec.Struct):
    resourceVersion: str | None = None


class _ObjMetaOnly(msgspec.Struct):
    metadata: _MetaOnly | None = None


@dataclass(frozen=True, eq=False)
class ResourceInfo:
    cls: type
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    shape: str  # "pydantic" | "struct" | "dict"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_kind(self) -> tuple[str, str]:
        return self.group, self.kind

    def path(
        self, namespace: str | None = None, name: str | None = None, subresource: str | None = None
    ) -> str:
        parts = ["/api", self.version] if not self.group else ["/apis", self.group, self.version]
        if self.namespaced and namespace:
            parts += ["namespaces", namespace]
        parts.append(self.plural)
        if name:
            parts.append(name)
            if subresource:
                parts.append(subresource)
        return "/".join(parts)

    # -- decoding ---------------------------------------------------------------------------------
    def decode(self, data: bytes | msgspec.Raw) -> Any:
        if self.shape == "pydantic":
            # shape "pydantic" is only given to KubeObject subclasses (info_for)
            try:
                return cast("type[BaseModel]", self.cls).model_validate_json(bytes(data))
            except PydanticValidationError as err:
                raise _decode_error(self, bytes(data), err) from err
        if self.shape == "struct":
            return _decode(data, type=self.cls)
        return self.cls(_decode(data))

    def split_list(self, data: bytes) -> tuple[list[bytes], str, str | None]:
        """(each item's JSON, resourceVersion, continue token) of a list response, items undecoded."""
        env = _decode(data, type=_ListEnvelope)
        meta = env.metadata or _ListMeta()
        return [bytes(raw) for raw in env.items or []], meta.resourceVersion or "", meta.continue_

    def decode_list(self, data: bytes) -> tuple[list[Any], str, str | None]:
        """(items, resourceVersion, continue token) of a list response."""
        env = _decode(data, type=_ListEnvelope)
        meta = env.metadata or _ListMeta()
        return [self.decode(raw) for raw in env.items or []], meta.resourceVersion or "", meta.continue_

    # -- encoding ---------------------------------------------------------------------------------
    def to_dict(self, obj: Any) -> dict[str, Any]:
        if isinstance(obj, KubeObject):
            return obj.to_dict()
        out = dict(obj) if isinstance(obj, dict) else msgspec.to_builtins(obj, enc_hook=_enc_hook)
        out.setdefault("apiVersion", self.api_version)
        out.setdefault("kind", self.kind)
        if out.get("apiVersion") is None:
            out["apiVersion"] = self.api_version
        if out.get("kind") is None:
            out["kind"] = self.kind
        return out

    def encode(self, obj: Any) -> bytes:
        if isinstance(obj, KubeObject):
            return _encode(obj.to_dict())
        if self.shape == "struct" and isinstance(obj, msgspec.Struct):
            if getattr(obj, "apiVersion", None) is None or getattr(obj, "kind", None) is None:
                kind_struct: Any = obj  # a lightkube model: a Struct with apiVersion and kind fields
                kind_struct.apiVersion, kind_struct.kind = self.api_version, self.kind
            return _encode(obj)
        return _encode(self.to_dict(obj))

    def copy(self, obj: Any) -> Any:
        """A deep copy, so readers of the cache can never change what the informer holds."""
        if self.shape == "struct":
            return _decode(_encode(obj), type=self.cls)
        if self.shape == "pydantic":
            return obj.model_copy(deep=True)
        return self.cls(_decode(_encode(obj)))


def decode_watch_event(line: bytes) -> tuple[str, msgspec.Raw]:
    event = _decode(line, type=_WatchEvent)
    return event.type, event.object


def raw_resource_version(raw: bytes | msgspec.Raw) -> str:
    """Only metadata.resourceVersion of an object (BOOKMARK events carry nothing else)."""
    meta = _decode(raw, type=_ObjMetaOnly).metadata
    return (meta.resourceVersion if meta else None) or ""


@functools.cache
def info_for(cls: type) -> ResourceInfo:
    """The ResourceInfo of a kind class (cached per class)."""
    if isinstance(cls, type) and issubclass(cls, KubeObject):
        gvk = getattr(cls, "gvk", None)
        if gvk is None:
            raise TypeError(f"{cls.__name__} has no gvk: not a concrete kind (CustomResource or built-in)")
        return ResourceInfo(
            cls, gvk.group, gvk.version, gvk.kind, cls.plural, bool(cls.namespaced), "pydantic"
        )
    api = getattr(cls, "_api_info", None)
    if api is None:
        raise TypeError(
            f"{cls!r} is not a kind class: use a CustomResource subclass, a built-in model of "
            "pyscaffold_op.models (core_v1.Pod, apps_v1.Deployment, ...) or a lightkube resource class"
        )
    from lightkube.core import resource as lk

    if api.parent is not None:
        raise TypeError(f"{cls.__name__} is a subresource; pass the main resource class")
    namespaced = issubclass(cls, lk.NamespacedResource)
    shape = "struct" if issubclass(cls, msgspec.Struct) else "dict"
    r = api.resource
    return ResourceInfo(cls, r.group, r.version, r.kind, api.plural, namespaced, shape)


def info_of(obj_or_cls: Any) -> ResourceInfo:
    return info_for(obj_or_cls if isinstance(obj_or_cls, type) else type(obj_or_cls))


def replace_contents(target: Any, source: Any) -> None:
    """Make `target` equal `source` in place (the Go client fills the object you pass; so do we)."""
    if target is source:
        return
    if isinstance(target, KubeObject):
        object.__setattr__(target, "__dict__", source.__dict__)
        object.__setattr__(target, "__pydantic_fields_set__", set(source.__pydantic_fields_set__))
        object.__setattr__(target, "__pydantic_extra__", source.__pydantic_extra__)
        object.__setattr__(target, "__pydantic_private__", source.__pydantic_private__)
    elif isinstance(target, dict):
        target.clear()
        target.update(source)
    else:
        for field in target.__struct_fields__:
            setattr(target, field, getattr(source, field))
