"""`Client`: typed CRUD against the API server for `KubeObject`s (CustomResources and built-in models).

Mirrors controller-runtime's client.Client. Objects passed to create/update are filled in place with the
server's answer (uid, resourceVersion, defaults), as the Go client does, and returned for convenience.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, TypeVar, runtime_checkable

import msgspec

from pyscaffold_op.apimachinery import KubeObject
from pyscaffold_op.apimachinery.labels import SelectorLike, render
from pyscaffold_op.runtime.client.apply import apply_body
from pyscaffold_op.runtime.client.rest import RestTransport
from pyscaffold_op.runtime.client.restconfig import RestConfig
from pyscaffold_op.runtime.objects import objmeta
from pyscaffold_op.runtime.objects.kinds import ResourceInfo, info_for, info_of, replace_contents

if TYPE_CHECKING:
    from typing_extensions import Unpack

T = TypeVar("T")
K = TypeVar("K", bound=KubeObject)
PatchType = Literal["merge", "json", "apply", "strategic"]


class ListOptions(TypedDict, total=False):
    """The keyword-only options of every `list` (client, cached client, cache, `Reader`): written once.

    `labels`/`fields`: a dict of equalities or a selector string; `limit`: the page size of each
    request to the server (the cache, which holds every object, ignores it).
    """

    labels: SelectorLike
    fields: SelectorLike
    limit: int | None


class DeleteOptions(TypedDict, total=False):
    """The keyword-only options of every `delete` (client, `ClientProtocol`): written once."""

    propagation_policy: Literal["Background", "Foreground", "Orphan"] | None
    grace_period_seconds: int | None
    preconditions: Mapping[str, str] | None
    dry_run: bool


class PatchOptions(TypedDict, total=False):
    """The keyword-only options of every `patch` (client, status client, protocol): written once."""

    namespace: str | None
    patch_type: PatchType
    field_manager: str | None
    force: bool | None
    dry_run: bool


@dataclass(frozen=True, kw_only=True)
class PatchRequest:
    """One PATCH: what to patch, how, and on which subresource (None: the object itself)."""

    kind: Any
    name: str | None = None
    patch: Any = None
    namespace: str | None = None
    patch_type: PatchType = "merge"
    field_manager: str | None = None
    force: bool | None = None
    dry_run: bool = False
    subresource: str | None = None


PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",  # JSON is YAML; the server parses it either way
}


@runtime_checkable
class Reader(Protocol):
    """What reconcilers read with (controller-runtime's client.Reader); the cache implements it too."""

    async def get(self, kind: type[T], name: str, namespace: str | None = None) -> T: ...

    async def list(
        self, kind: type[T], namespace: str | None = None, **options: Unpack[ListOptions]
    ) -> list[T]: ...


@runtime_checkable
class ClientProtocol(Reader, Protocol):
    """The whole client interface (client.Client): type against this to pass fakes in unit tests."""

    async def create(self, obj: T, *, field_manager: str | None = None, dry_run: bool = False) -> T: ...

    async def update(self, obj: T, *, field_manager: str | None = None, dry_run: bool = False) -> T: ...

    async def patch(
        self, kind: Any, name: str | None = None, patch: Any = None, **options: Unpack[PatchOptions]
    ) -> Any: ...

    async def delete(
        self,
        obj_or_kind: Any,
        name: str | None = None,
        namespace: str | None = None,
        **options: Unpack[DeleteOptions],
    ) -> None: ...

    async def apply(
        self, obj: K, *, field_owner: str | None = None, force: bool = False, dry_run: bool = False
    ) -> K: ...

    def status(self) -> StatusClient: ...


class Client:
    """Reads and writes straight to the API server."""

    def __init__(
        self, transport: RestTransport, *, field_manager: str | None = None, owns_transport: bool = False
    ) -> None:
        self.transport = transport
        self.field_manager = field_manager
        self._owns_transport = owns_transport

    # -- helpers ------------------------------------------------------------------------------------
    def _ns(self, info: ResourceInfo, namespace: str | None) -> str | None:
        if not info.namespaced:
            return None
        return namespace or self.transport.default_namespace

    def _write_params(self, field_manager: str | None, dry_run: bool) -> dict[str, Any]:
        return {"fieldManager": field_manager or self.field_manager, "dryRun": "All" if dry_run else None}

    # -- reads --------------------------------------------------------------------------------------
    async def get(self, kind: type[T], name: str, namespace: str | None = None) -> T:
        info = info_for(kind)  # type: ignore[arg-type]  # mypy: type[T] is not Hashable to functools.cache
        data = await self.transport.request("GET", info.path(self._ns(info, namespace), name))
        return info.decode(data)

    async def list(
        self, kind: type[T], namespace: str | None = None, **options: Unpack[ListOptions]
    ) -> list[T]:
        """All objects of `kind` (in `namespace`, or in every namespace when None) matching the selectors.

        `labels`/`fields` are a dict of equalities or a selector string (`"app=x,tier in (a,b)"`).
        `limit` is the page size; every page is fetched.
        """
        items, _rv = await self.list_with_version(kind, namespace, **options)
        return items

    async def list_with_version(
        self, kind: type[T], namespace: str | None = None, **options: Unpack[ListOptions]
    ) -> tuple[builtins.list[T], str]:
        info = info_for(kind)  # type: ignore[arg-type]  # mypy: type[T] is not Hashable to functools.cache
        path = info.path(namespace if info.namespaced else None)
        params: dict[str, Any] = {
            "labelSelector": render(options.get("labels")),
            "fieldSelector": render(options.get("fields")),
            "limit": options.get("limit"),
        }
        items: list[T] = []
        while True:
            page, rv, cont = info.decode_list(await self.transport.request("GET", path, params=params))
            items.extend(page)
            if not cont:
                return items, rv
            params["continue"] = cont

    # -- writes -------------------------------------------------------------------------------------
    async def create(self, obj: T, *, field_manager: str | None = None, dry_run: bool = False) -> T:
        info = info_of(obj)
        ns = self._ns(info, objmeta.namespace(obj) or None)
        data = await self.transport.request(
            "POST", info.path(ns), body=info.encode(obj), params=self._write_params(field_manager, dry_run)
        )
        replace_contents(obj, info.decode(data))
        return obj

    async def update(self, obj: T, *, field_manager: str | None = None, dry_run: bool = False) -> T:
        """PUT the whole object; raises Conflict when its resourceVersion is stale."""
        return await self._put(obj, None, field_manager, dry_run)

    async def _put(self, obj: T, subresource: str | None, field_manager: str | None, dry_run: bool) -> T:
        info = info_of(obj)
        path = info.path(self._ns(info, objmeta.namespace(obj) or None), objmeta.name(obj), subresource)
        data = await self.transport.request(
            "PUT", path, body=info.encode(obj), params=self._write_params(field_manager, dry_run)
        )
        replace_contents(obj, info.decode(data))
        return obj

    async def patch(
        self, kind: type[T] | T, name: str | None = None, patch: Any = None, **options: Unpack[PatchOptions]
    ) -> T:
        """Patch an object; `kind` may be a class (with `name`) or an object (its name and namespace).

        `patch` is a dict/list, JSON text, or for "apply" a full object. Options (keyword-only):
        `namespace`, `patch_type` ("merge" by default, "json", "strategic", or "apply": server-side apply,
        which needs a field manager, the argument or the client's default), `field_manager`, `force`
        (apply only: take fields over), `dry_run`.
        """
        return await self.send_patch(PatchRequest(kind=kind, name=name, patch=patch, **options))

    async def send_patch(self, req: PatchRequest) -> Any:
        """Send one PatchRequest (what `patch` and `status().patch` build)."""
        kind, name, namespace, patch = req.kind, req.name, req.namespace, req.patch
        patch_type = req.patch_type
        info, name, namespace = _named("patch", kind, name, namespace)
        if patch_type not in PATCH_CONTENT_TYPES:
            raise ValueError(f"patch_type must be one of {sorted(PATCH_CONTENT_TYPES)}, got {patch_type!r}")
        if patch is None and not isinstance(kind, type):
            patch = kind
        body = _patch_body(info, patch)
        params = self._write_params(req.field_manager, req.dry_run)
        if patch_type == "apply":
            if not params["fieldManager"]:
                raise ValueError(
                    "server-side apply needs field_manager= (apply's field_owner=), or the client's default"
                )
            params["force"] = "true" if req.force else None
        elif req.force:
            raise ValueError("force= is only valid for patch_type='apply'")
        data = await self.transport.request(
            "PATCH",
            info.path(self._ns(info, namespace), name, req.subresource),
            body=body,
            params=params,
            content_type=PATCH_CONTENT_TYPES[patch_type],
        )
        result = info.decode(data)
        if not isinstance(kind, type):
            replace_contents(kind, result)
            return kind
        return result

    async def apply(
        self, obj: K, *, field_owner: str | None = None, force: bool = False, dry_run: bool = False
    ) -> K:
        """Server-side apply of an apply configuration (`apply_configuration`): the fields set on `obj`
        become `field_owner`'s (the client's field manager by default); fields it owned before and no
        longer sets are removed. Creates the object if it does not exist.

        Another owner's field with a different value raises Conflict, unless `force` (controller-runtime's
        ForceOwnership) takes it over. Returns the server's whole object; `obj` is left as it was, so it
        can be applied again.
        """
        return await self._apply(obj, None, field_owner, force, dry_run)

    async def _apply(
        self, obj: K, subresource: str | None, field_owner: str | None, force: bool, dry_run: bool
    ) -> K:
        if not isinstance(obj, KubeObject):  # a dict, or another library's object: no record of set fields
            raise TypeError(
                f"apply takes an apply configuration, a pyop kind's object (apply_configuration(Kind, name, "
                f"namespace)), not {type(obj).__name__}; send other bodies with patch(..., "
                "patch_type='apply', field_manager=...)"
            )
        info = info_of(obj)
        body = apply_body(obj, api_version=info.api_version, kind=info.kind, only=subresource)
        result: K = await self.send_patch(
            PatchRequest(
                kind=type(obj),
                name=objmeta.name(obj),
                patch=body,
                namespace=objmeta.namespace(obj) or None,
                patch_type="apply",
                field_manager=field_owner,
                force=force,
                dry_run=dry_run,
                subresource=subresource,
            )
        )
        return result

    async def delete(
        self,
        obj_or_kind: Any,
        name: str | None = None,
        namespace: str | None = None,
        **options: Unpack[DeleteOptions],
    ) -> None:
        """Delete by object or by kind + name. Raises NotFound when it does not exist.

        Options (keyword-only): `propagation_policy` ("Background" by default, "Foreground", "Orphan",
        or None for the server's default), `grace_period_seconds`, `preconditions` (uid and/or
        resourceVersion), `dry_run`."""
        info, name, namespace = _named("delete", obj_or_kind, name, namespace)
        body: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        propagation_policy = options.get("propagation_policy", "Background")
        if propagation_policy:
            body["propagationPolicy"] = propagation_policy
        if options.get("grace_period_seconds") is not None:
            body["gracePeriodSeconds"] = options.get("grace_period_seconds")
        if preconditions := options.get("preconditions"):
            body["preconditions"] = dict(preconditions)
        if options.get("dry_run"):
            body["dryRun"] = ["All"]
        await self.transport.request(
            "DELETE", info.path(self._ns(info, namespace), name), body=json.dumps(body).encode()
        )

    def status(self) -> StatusClient:
        """Writes to the status subresource (`client.status().update(obj)`)."""
        return StatusClient(self)

    async def close(self) -> None:
        """Close the connection pool if this client owns it (`new_client`); a manager's clients share the
        manager's pool, which the manager closes."""
        if self._owns_transport:
            await self.transport.close()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class StatusClient:
    """controller-runtime's SubResourceWriter for `status`: the server ignores spec changes sent here."""

    def __init__(self, client: Client) -> None:
        self._client = client

    async def update(self, obj: T, *, field_manager: str | None = None, dry_run: bool = False) -> T:
        return await self._client._put(obj, "status", field_manager, dry_run)

    async def patch(
        self, kind: Any, name: str | None = None, patch: Any = None, **options: Unpack[PatchOptions]
    ) -> Any:
        req = PatchRequest(kind=kind, name=name, patch=patch, subresource="status", **options)
        return await self._client.send_patch(req)

    async def apply(
        self, obj: K, *, field_owner: str | None = None, force: bool = False, dry_run: bool = False
    ) -> K:
        """Server-side apply of `obj`'s status (controller-runtime's `Status().Apply`): only metadata and
        the status set on the apply configuration are sent. Returns the server's whole object."""
        return await self._client._apply(obj, "status", field_owner, force, dry_run)


def _named(
    verb: str, obj_or_kind: Any, name: str | None, namespace: str | None
) -> tuple[ResourceInfo, str, str | None]:
    """The kind, name and namespace a write by object or by kind + name is for."""
    info = info_of(obj_or_kind)
    if not isinstance(obj_or_kind, type):
        name = name or objmeta.name(obj_or_kind)
        namespace = namespace or objmeta.namespace(obj_or_kind) or None
    if not name:
        raise ValueError(f"{verb} needs a name (or an object)")
    return info, name, namespace


def _patch_body(info: ResourceInfo, patch: Any) -> bytes:
    if isinstance(patch, bytes):
        return patch
    if isinstance(patch, str):
        return patch.encode()
    if isinstance(patch, dict | list):
        try:
            return msgspec.json.encode(patch)  # a twentieth of json.dumps' time
        except (TypeError, ValueError):  # what msgspec refuses (bool or None keys): the stdlib's rules
            return json.dumps(patch).encode()
    return info.encode(patch)  # a whole object (server-side apply)


def new_client(config: RestConfig, *, field_manager: str | None = None, timeout: float = 30.0) -> Client:
    """An uncached client for `config` (owns its connection pool; `await client.close()`)."""
    return Client(RestTransport(config, timeout=timeout), field_manager=field_manager, owns_transport=True)


class CachedClient(Client):
    """The manager's client: get/list of kinds the cache has an informer for (the kinds controllers
    watch) are served from the cache; every other read and every write goes to the API server.

    Cache reads can be a little behind the server; a write with a stale resourceVersion fails with
    Conflict, and the reconcile is retried. Use `mgr.api_reader` when a read must be fresh.
    """

    def __init__(self, transport: RestTransport, cache: Any, *, field_manager: str | None = None) -> None:
        super().__init__(transport, field_manager=field_manager)
        self.cache = cache

    async def get(self, kind: type[T], name: str, namespace: str | None = None) -> T:
        if self.cache.has_informer(kind):
            return await self.cache.get(kind, name, namespace)
        return await super().get(kind, name, namespace)

    async def list(
        self, kind: type[T], namespace: str | None = None, **options: Unpack[ListOptions]
    ) -> list[T]:
        if self.cache.has_informer(kind):
            return await self.cache.list(kind, namespace, **options)
        return await super().list(kind, namespace, **options)
