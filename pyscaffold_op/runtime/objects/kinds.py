"""Resource information for a kind class: where it lives in the API and how to (de)serialize it.

The kinds the runtime knows are pyop's pydantic `KubeObject`s (the user's `CustomResource` subclasses
and the built-in models of `pyscaffold_op.models`); another library's kind classes come through their
adapter (`pyscaffold_op.runtime.adapters`), which subclasses `ResourceInfo`. Decoding goes straight
from bytes (pydantic-core), which is what keeps a 10,000-object list cheap.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, cast

import msgspec
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError
from pydantic_core import SchemaValidator

from pyscaffold_op.apimachinery import CustomResource, KubeObject

_decode = msgspec.json.decode


_encode = msgspec.json.encode


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

    @functools.cached_property
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
    # The methods below are for KubeObject classes (info_for); an adapter's subclass has its own.
    def decode(self, data: bytes | msgspec.Raw) -> Any:
        data = bytes(data)
        try:
            obj = self._wire_validator.validate_json(data)
        except PydanticValidationError as err:
            raise _decode_error(self, data, err) from err
        # What KubeObject's `_fill_type_meta` does, without its call: the type named must be this
        # one; an object without it (a list's items) gets it, as if assigned
        fields = obj.__dict__
        for name, expected in (("api_version", self.api_version), ("kind", self.kind)):
            value = fields[name]
            if value == expected:
                continue
            if value:  # another type: refused in the whole validator's words
                try:
                    return cast("type[BaseModel]", self.cls).model_validate_json(data)
                except PydanticValidationError as err:
                    raise _decode_error(self, data, err) from err
            fields[name] = expected
            obj.__pydantic_fields_set__.add(name)
        return obj

    @functools.cached_property
    def _wire_validator(self) -> SchemaValidator:
        return cast("type[KubeObject]", self.cls).wire_validator()

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
        out = dict(obj)  # a dict (an object without its model)
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
        return _encode(self.to_dict(obj))

    def copy(self, obj: Any) -> Any:
        """A deep copy, so readers of the cache can never change what the informer holds."""
        return obj.model_copy(deep=True)


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
        return ResourceInfo(cls, gvk.group, gvk.version, gvk.kind, cls.plural, bool(cls.namespaced))
    from pyscaffold_op.runtime.adapters import adapter_for

    return adapter_for(cls, "a kind class").info_for(cls)


def info_of(obj_or_cls: Any) -> ResourceInfo:
    if type(obj_or_cls) is dict:  # a plain dict (subclasses are adapters'): its apiVersion and kind say where
        from pyscaffold_op.runtime.objects.untyped import dict_info

        return dict_info(obj_or_cls)
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
        from pyscaffold_op.runtime.adapters import adapter_for

        adapter_for(target).replace_contents(target, source)
