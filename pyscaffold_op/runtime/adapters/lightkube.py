"""lightkube's objects in pyop's runtime (optional: `pip install pyscaffold-op[lightkube]`).

Everything the runtime knows about lightkube is here; the runtime finds this module through
`pyscaffold_op.runtime.adapters` the first time a lightkube class, object or configuration reaches it.

* kinds: lightkube's typed models (`lightkube.resources.core_v1.Pod`, msgspec structs) and generic
  resources (dict subclasses), described by `ResourceInfo` subclasses that decode with msgspec;
* metadata: lightkube's camelCase `ObjectMeta` and `OwnerReference`;
* configuration: a `lightkube.KubeConfig` or `SingleConfig`, read by attribute into a `RestConfig`;
* errors: an `httpx.HTTPStatusError` (lightkube's `ApiError` is one) as the runtime's typed error.

A lightkube object holding one of pyop's pydantic models (or the reverse) is refused with the fix
(`MixedModelsError`): the two libraries' `ObjectMeta` classes must not meet inside one object.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from pydantic import BaseModel

from pyscaffold_op.apimachinery import ObjectMeta as PydanticMeta
from pyscaffold_op.runtime.client.errors import error_for
from pyscaffold_op.runtime.client.restconfig import ExecConfig, RestConfig
from pyscaffold_op.runtime.objects.kinds import ResourceInfo
from pyscaffold_op.runtime.objects.objmeta import _CAMEL, OwnerRef

_decode = msgspec.json.decode


class MixedModelsError(TypeError):
    """A lightkube object holds one of pyop's pydantic models, or a pyop model holds a lightkube one."""


def typed_module(group: str, version: str) -> str:
    """The `pyscaffold_op.models` module of a built-in group/version (`apps`, `v1` -> `apps_v1`)."""
    return f"pyscaffold_op.models.{group.split('.')[0] or 'core'}_{version}"


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


# -- kinds ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class StructInfo(ResourceInfo):
    """A lightkube typed model: a msgspec Struct with camelCase fields."""

    def decode(self, data: bytes | msgspec.Raw) -> Any:
        return _decode(data, type=self.cls)

    def to_dict(self, obj: Any) -> dict[str, Any]:
        if not isinstance(obj, msgspec.Struct):
            return super().to_dict(obj)
        out: dict[str, Any] = msgspec.to_builtins(obj, enc_hook=_enc_hook)
        if out.get("apiVersion") is None:
            out["apiVersion"] = self.api_version
        if out.get("kind") is None:
            out["kind"] = self.kind
        return out

    def encode(self, obj: Any) -> bytes:
        if isinstance(obj, msgspec.Struct):
            if getattr(obj, "apiVersion", None) is None or getattr(obj, "kind", None) is None:
                kind_struct: Any = obj  # a Struct with apiVersion and kind fields
                kind_struct.apiVersion, kind_struct.kind = self.api_version, self.kind
            return _encode(obj)
        return _encode(self.to_dict(obj))

    def copy(self, obj: Any) -> Any:
        return _decode(_encode(obj), type=self.cls)


@dataclass(frozen=True, eq=False)
class GenericInfo(ResourceInfo):
    """A lightkube generic resource: a dict subclass."""

    def decode(self, data: bytes | msgspec.Raw) -> Any:
        return self.cls(_decode(data))

    def encode(self, obj: Any) -> bytes:
        return _encode(self.to_dict(obj))

    def copy(self, obj: Any) -> Any:
        return self.cls(_decode(_encode(obj)))


# -- configuration --------------------------------------------------------------------------------------
def rest_config_from(config: Any) -> RestConfig:
    """A `lightkube.KubeConfig` or `SingleConfig`, read by attribute (lightkube is not imported)."""
    single = config.get() if hasattr(config, "get") else config
    cluster, user = single.cluster, single.user
    base = Path(single.fname).parent if getattr(single, "fname", None) else None

    def path(value: str | None) -> str | None:
        if value is None or base is None or Path(value).is_absolute():
            return value
        return str(base / value)

    def data(value: str | None) -> bytes | None:
        return base64.b64decode(value) if value else None

    return RestConfig(
        server=cluster.server,
        namespace=single.namespace or "default",
        ca_data=data(cluster.certificate_auth_data),
        ca_file=path(cluster.certificate_auth),
        insecure=bool(cluster.insecure),
        tls_server_name=getattr(cluster, "tls_server_name", None),
        proxy_url=getattr(cluster, "proxy_url", None),
        cert_data=data(getattr(user, "client_cert_data", None)),
        cert_file=path(getattr(user, "client_cert", None)),
        key_data=data(getattr(user, "client_key_data", None)),
        key_file=path(getattr(user, "client_key", None)),
        token=getattr(user, "token", None),
        token_file=path(getattr(user, "token_file", None)),
        exec=_exec(getattr(user, "exec", None), path),
        username=getattr(user, "username", None),
        password=getattr(user, "password", None),
        source_file=str(single.fname) if getattr(single, "fname", None) else None,
        context_name=getattr(single, "context_name", None),
    )


def _exec(plugin: Any, path: Any) -> ExecConfig | None:
    if plugin is None:
        return None
    command = plugin.command
    return ExecConfig(
        command=path(command) if "/" in command else command,
        api_version=plugin.apiVersion,
        args=tuple(plugin.args or ()),
        env=tuple((e.name, e.value) for e in plugin.env or ()),
        install_hint=plugin.installHint or "",
    )


# -- errors ---------------------------------------------------------------------------------------------
def from_exception(err: BaseException) -> BaseException:
    """Map an `httpx.HTTPStatusError` (lightkube's ApiError is one) to our typed error; others unchanged."""
    response = getattr(err, "response", None)
    if response is not None and getattr(response, "status_code", None):
        try:
            body = response.content
        except Exception:  # a streamed response that was never read
            body = None
        return error_for(response.status_code, body)
    return err


# -- the adapter ----------------------------------------------------------------------------------------
class LightkubeAdapter:
    """`pyscaffold_op.runtime.adapters.ModelAdapter` for lightkube."""

    def info_for(self, cls: type) -> ResourceInfo:
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
        info = StructInfo if issubclass(cls, msgspec.Struct) else GenericInfo
        r = api.resource
        return info(cls, r.group, r.version, r.kind, api.plural, namespaced)

    @staticmethod
    def _meta(obj: Any) -> Any:
        meta = obj.metadata
        if meta is None:
            from lightkube.models.meta_v1 import ObjectMeta

            meta = obj.metadata = ObjectMeta()
        elif isinstance(meta, PydanticMeta):
            raise mixed_lightkube(obj, meta, ".metadata")
        return meta

    def get_field(self, obj: Any, snake: str) -> Any:
        return getattr(self._meta(obj), _CAMEL.get(snake, snake), None)

    def set_field(self, obj: Any, snake: str, value: Any) -> None:
        setattr(self._meta(obj), _CAMEL.get(snake, snake), value)

    def owner_references(self, obj: Any) -> list[OwnerRef]:
        return [
            OwnerRef(
                ref.apiVersion,
                ref.kind,
                ref.name,
                ref.uid,
                bool(ref.controller),
                bool(ref.blockOwnerDeletion),
            )
            for ref in self._meta(obj).ownerReferences or []
        ]

    def set_owner_references(self, obj: Any, refs: list[OwnerRef]) -> None:
        from lightkube.models.meta_v1 import OwnerReference

        self._meta(obj).ownerReferences = [
            OwnerReference(
                apiVersion=r.api_version,
                kind=r.kind,
                name=r.name,
                uid=r.uid,
                controller=r.controller or None,
                blockOwnerDeletion=r.block_owner_deletion or None,
            )
            for r in refs
        ] or None

    def replace_contents(self, target: Any, source: Any) -> None:
        for field in target.__struct_fields__:
            setattr(target, field, getattr(source, field))

    def rest_config(self, config: Any) -> RestConfig:
        return rest_config_from(config)


ADAPTER = LightkubeAdapter()
