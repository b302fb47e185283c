"""Request routing and the REST verbs, independent of the HTTP framework.

`Api.handle(Request) -> Response` is shared by the aiohttp server and the in-process httpx transport, so
both ways in behave identically. Every failure becomes a `Status` body; nothing a client sends can
crash the server.
"""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import yaml

from pyscaffold_op.envtest import discovery, managed, openapi, patch, tables
from pyscaffold_op.envtest import errors as E
from pyscaffold_op.envtest.jsonutil import dumps, loads
from pyscaffold_op.envtest.metatypes import check_meta_types
from pyscaffold_op.envtest.resources import ResourceInfo
from pyscaffold_op.envtest.scale import set_path, to_scale
from pyscaffold_op.envtest.selectors import combine, parse_field_selector, parse_label_selector
from pyscaffold_op.envtest.store import Store, now_rfc3339
from pyscaffold_op.envtest.watch import Watcher, event_line, stream

log = logging.getLogger("pyscaffold_op.envtest")

MAX_BODY = 3 * 1024 * 1024  # kube-apiserver's maxRequestBodyBytes
JSON = "application/json"
_PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names
    body: bytes = b""

    @classmethod
    def build(
        cls, method: str, path: str, query_string: str, headers: dict[str, str], body: bytes
    ) -> Request:
        return cls(
            method.upper(),
            path,
            parse_qs(query_string, keep_blank_values=True),
            {k.lower(): v for k, v in headers.items()},
            body,
        )

    def q(self, name: str, default: str | None = None) -> str | None:
        vals = self.query.get(name)
        return vals[0] if vals else default

    def flag(self, name: str) -> bool:
        return (self.q(name) or "").lower() in ("true", "1")


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = JSON
    stream: AsyncIterator[bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)


def _json(status: int, obj: Any) -> Response:
    return Response(status, dumps(obj))


def error_response(err: E.ApiError) -> Response:
    return _json(err.code, err.status())


@dataclass
class _Target:
    info: ResourceInfo
    namespace: str | None  # None: all namespaces (or cluster-scoped)
    name: str | None
    subresource: str


class Api:
    def __init__(
        self, store: Store, server_address: str = "127.0.0.1", bookmark_interval: float = 1.0
    ) -> None:
        self.store = store
        self.server_address = server_address
        self.bookmark_interval = bookmark_interval

    async def handle(self, req: Request) -> Response:
        try:
            if len(req.body) > MAX_BODY:
                raise E.too_large(MAX_BODY)
            return self._dispatch(req)
        except E.ApiError as err:
            return error_response(err)
        except Exception as err:  # a bug here must not drop the connection: answer 500 like the server
            log.exception("envtest: internal error on %s %s", req.method, req.path)
            return error_response(E.internal(f"{type(err).__name__}: {err}"))

    # -- routing -----------------------------------------------------------------------------------

    def _dispatch(self, req: Request) -> Response:
        parts = [p for p in req.path.split("/") if p]
        reg = self.store.registry
        if req.method == "GET":
            if parts == ["version"]:
                return _json(200, discovery.VERSION)
            if parts in (["healthz"], ["readyz"], ["livez"]):
                return Response(200, b"ok", "text/plain")
            if parts[:2] == ["openapi", "v3"]:
                doc = None
                if len(parts) == 2:
                    doc = openapi.root(reg)
                elif len(parts) == 4 and parts[2] == "api":
                    doc = openapi.group_version(reg, "", parts[3])
                elif len(parts) == 5 and parts[2] == "apis":
                    doc = openapi.group_version(reg, parts[3], parts[4])
                if doc is None:
                    raise E.not_found_path()
                return _json(200, doc)
            if parts == ["api"]:
                return _json(200, discovery.api_versions(self.server_address))
            if parts == ["apis"]:
                return _json(200, discovery.api_group_list(reg))
            if len(parts) == 2 and parts[0] == "apis":
                doc = discovery.api_group(reg, parts[1])
                if doc is None:
                    raise E.not_found_path()
                return _json(200, doc)
            if parts == ["api", "v1"] or (len(parts) == 3 and parts[0] == "apis"):
                group, version = ("", "v1") if parts[0] == "api" else (parts[1], parts[2])
                doc = discovery.resource_list(reg, group, version)
                if doc is None:
                    raise E.not_found_path()
                return _json(200, doc)
        if parts[:2] == ["api", "v1"]:
            group, version, rest = "", "v1", parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise E.not_found_path()
        watch = req.flag("watch")
        if rest and rest[0] == "watch":  # legacy /watch/ paths
            watch, rest = True, rest[1:]
        target = self._target(group, version, rest)
        if target.subresource == "log" and target.info.group_resource == ("", "pods") and req.method == "GET":
            return self._pod_log(req, target)
        if target.subresource and target.subresource not in ("status", "scale"):
            raise E.not_found_path()
        if target.subresource == "status" and not target.info.status:
            raise E.not_found_path()
        if target.subresource == "scale" and not target.info.scale:
            raise E.not_found_path()
        m = req.method
        if target.name is None:
            if m == "GET":
                return self._watch(req, target) if watch else self._list(req, target)
            if m == "POST":
                return self._create(req, target)
            if m == "DELETE":
                return self._delete_collection(req, target)
            raise E.method_not_allowed(m)
        if m == "GET":
            return self._get(req, target)
        if m == "PUT":
            return self._update(req, target)
        if m == "PATCH":
            return self._patch(req, target)
        if m == "DELETE" and not target.subresource:
            return self._delete(req, target)
        raise E.method_not_allowed(m)

    def _target(self, group: str, version: str, rest: list[str]) -> _Target:
        reg = self.store.registry
        if not rest:
            raise E.not_found_path()
        ns: str | None = None
        if (
            rest[0] == "namespaces"
            and len(rest) >= 3
            and not (len(rest) == 3 and rest[2] in ("status", "finalize"))
        ):
            ns, rest = rest[1], rest[2:]
        info = reg.get(group, version, rest[0])
        if info is None or len(rest) > 3:
            raise E.not_found_path()
        if ns is not None and not info.namespaced:
            raise E.not_found_path()
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else ""
        if info.namespaced and name is not None and ns is None:
            raise E.not_found_path()
        return _Target(info, ns, name, sub)

    # -- helpers -----------------------------------------------------------------------------------

    def _out(self, info: ResourceInfo, obj: dict[str, Any]) -> dict[str, Any]:
        """The object as served under the requested version (CRD versions share storage, no conversion)."""
        if info.from_storage is not None:
            return info.from_storage(obj)
        if obj.get("apiVersion") != info.api_version:
            return {**obj, "apiVersion": info.api_version}
        return obj

    def _body(self, req: Request, info: ResourceInfo, *, check_kind: bool = True) -> dict[str, Any]:
        ctype = req.headers.get("content-type", JSON).split(";")[0].strip().lower()
        if ctype == "application/vnd.kubernetes.protobuf":
            from pyscaffold_op.envtest.protobuf import ProtobufError, decode

            try:
                obj = decode(req.body)
            except ProtobufError as err:
                # kubectl's typed generators send protobuf; only simple kinds are described here
                raise E.unsupported_media(
                    "the body of the request was in an unknown format - accepted media types include: "
                    f"application/json, application/yaml ({err})"
                ) from None
            return self._checked(obj, req, info, check_kind)
        if ctype == "application/cbor":
            raise E.unsupported_media(
                "the body of the request was in an unknown format - accepted media types include: "
                "application/json, application/yaml, application/vnd.kubernetes.protobuf"
            )
        if not req.body:
            raise E.bad_request("the body of the request was empty")
        try:
            if ctype in ("application/yaml", "application/apply-patch+yaml"):
                obj = yaml.safe_load(req.body)
            else:
                obj = loads(req.body)
        except (ValueError, yaml.YAMLError) as err:
            raise E.bad_request(
                f"error decoding body: {str(err).splitlines()[0] if str(err) else err}"
            ) from None
        return self._checked(obj, req, info, check_kind)

    def _checked(self, obj: Any, req: Request, info: ResourceInfo, check_kind: bool) -> dict[str, Any]:
        if not isinstance(obj, dict):
            raise E.bad_request("the body of the request must be a JSON object")
        if check_kind:
            av, kind = obj.get("apiVersion"), obj.get("kind")
            if info.custom and (not av or not kind):
                missing = "Kind" if not kind else "apiVersion"
                raise E.bad_request(
                    f"Object '{missing}' is missing in '{req.body[:200].decode(errors='replace')}'"
                )
            if av and av != info.api_version:
                raise E.bad_request(
                    f"the API version in the data ({av}) does not match the expected API "
                    f"version ({info.api_version})"
                )
            if kind and kind != info.kind:
                raise E.bad_request(
                    f"the kind in the data ({kind}) does not match the expected kind ({info.kind})"
                )
        meta = obj.get("metadata")
        if meta is not None:
            check_meta_types(meta)
        return obj

    def _check_namespace(self, obj: dict[str, Any], t: _Target) -> None:
        ns = (obj.get("metadata") or {}).get("namespace")
        if t.info.namespaced and ns and ns != t.namespace:
            raise E.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )

    @staticmethod
    def _manager(req: Request) -> str:
        fm = req.q("fieldManager")
        if fm:
            return fm
        ua = req.headers.get("user-agent", "")
        return ua.split("/")[0] if ua else "unknown"

    @staticmethod
    def _dry_run(req: Request) -> bool:
        return "All" in req.query.get("dryRun", [])

    # -- verbs -------------------------------------------------------------------------------------

    def _get(self, req: Request, t: _Target) -> Response:
        obj = self.store.get(t.info, t.namespace or "", t.name or "")
        if t.subresource == "scale":
            return _json(200, to_scale(t.info, obj))
        obj = self._out(t.info, obj)
        if _wants_table(req):
            return _json(
                200,
                tables.to_table(
                    t.info,
                    [obj],
                    req.q("includeObject", "Metadata") or "Metadata",
                    {"resourceVersion": obj["metadata"]["resourceVersion"]},
                ),
            )
        return _json(200, obj)

    def _pod_log(self, req: Request, t: _Target) -> Response:
        """pods/log from the kubelet simulator (text/plain, like the kubelet's)."""
        pod = self.store.get(t.info, t.namespace or "", t.name or "")
        containers = [
            c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or [] if isinstance(c, dict)
        ]
        container = req.q("container") or (containers[0] if containers else "")
        if container not in containers:
            raise E.bad_request(f"container {container} is not valid for pod {t.name}")
        text = self.store.pod_logs(pod) if self.store.pod_logs is not None else None
        if text is None:
            raise E.bad_request(
                f'container "{container}" in pod "{t.name}" is waiting to start: ContainerCreating'
            )
        if req.q("tailLines"):
            with contextlib.suppress(ValueError):
                n = int(req.q("tailLines") or 0)
                text = "".join(text.splitlines(keepends=True)[-n:]) if n > 0 else ""
        return Response(200, text.encode(), "text/plain")

    def _selector(self, req: Request, info: ResourceInfo) -> Any:
        pred = combine(
            parse_label_selector(req.q("labelSelector")),
            parse_field_selector(req.q("fieldSelector"), info.field_selectors),
        )
        conv = info.from_storage
        if pred is not None and conv is not None:  # select on the served form (regarding.name, ...)
            inner = pred
            return lambda o: inner(conv(o))
        return pred

    def _list(self, req: Request, t: _Target) -> Response:
        info = t.info
        pred = self._selector(req, info)
        try:
            limit = int(req.q("limit") or 0)
        except ValueError:
            raise E.bad_request(f"invalid limit: {req.q('limit')}") from None
        rv_match = req.q("resourceVersionMatch")
        if rv_match and not req.q("resourceVersion"):
            raise E.invalid(
                "meta.k8s.io",
                "ListOptions",
                "",
                [
                    E.cause(
                        "FieldValueForbidden",
                        "resourceVersionMatch",
                        "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
                    )
                ],
            )
        if rv_match not in (None, "", "Exact", "NotOlderThan"):
            raise E.invalid(
                "meta.k8s.io",
                "ListOptions",
                "",
                [
                    E.cause(
                        "FieldValueNotSupported",
                        "resourceVersionMatch",
                        f'Unsupported value: "{rv_match}": supported values: "Exact", "NotOlderThan", ""',
                    )
                ],
            )
        exact = int(_rv(req.q("resourceVersion"))) if rv_match == "Exact" else None
        items, rv, cont, remaining = self.store.list(
            info, t.namespace, pred, max(limit, 0), req.q("continue"), exact_rv=exact
        )
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if cont:
            meta["continue"] = cont
            if remaining is not None:
                meta["remainingItemCount"] = remaining
        if _wants_table(req):
            items = [self._out(info, o) for o in items]
            return _json(
                200, tables.to_table(info, items, req.q("includeObject", "Metadata") or "Metadata", meta)
            )
        if info.custom:
            out_items = [self._out(info, o) for o in items]
        else:  # typed lists omit each item's apiVersion/kind, as the real server's do
            if info.from_storage is not None:
                items = [info.from_storage(o) for o in items]
            out_items = [{k: v for k, v in o.items() if k != "apiVersion" and k != "kind"} for o in items]
        return _json(
            200,
            {"apiVersion": info.api_version, "items": out_items, "kind": info.list_kind, "metadata": meta},
        )

    def _watch(self, req: Request, t: _Target) -> Response:
        info = t.info
        pred = self._selector(req, info)
        rv_param = req.q("resourceVersion")
        send_initial = req.q("sendInitialEvents")
        bookmarks = req.flag("allowWatchBookmarks")
        table = _wants_table(req)
        # the watcher converts itself: its selector sees the stored form
        raw_pred = combine(
            parse_label_selector(req.q("labelSelector")),
            parse_field_selector(req.q("fieldSelector"), info.field_selectors),
        )
        watcher = Watcher(info.api_version, t.namespace if info.namespaced else None, raw_pred)
        watcher.convert = info.from_storage
        if table:
            watcher.transform = lambda o: tables.to_table(info, [o], "Metadata", {}, with_columns=False)
        timeout = None
        if req.q("timeoutSeconds"):
            try:
                timeout = float(req.q("timeoutSeconds") or 0)
            except ValueError:
                raise E.bad_request(f"invalid timeoutSeconds: {req.q('timeoutSeconds')}") from None
        first: list[bytes] = []
        initial = rv_param in (None, "", "0") if send_initial is None else send_initial.lower() == "true"
        since: int | None
        since = None if rv_param in (None, "", "0") or initial else int(_rv(rv_param))
        if initial:
            items, _rv_now, _c, _r = self.store.list(info, t.namespace, pred)
            for o in items:
                obj = self._out(info, o)
                first.append(event_line("ADDED", watcher.transform(obj) if table else obj))
            if send_initial and send_initial.lower() == "true" and bookmarks:
                first.append(self._bookmark(info, initial_end=True))
        replay = self.store.watch(watcher, info.bucket, since)
        if replay is None:
            status = E.gone(f"too old resource version: {rv_param} ({self.store.rv})").status()
            return Response(200, stream=_once(event_line("ERROR", status)))
        for ev in replay:
            watcher.offer(ev)
        gr = info.bucket
        return Response(
            200,
            stream=stream(
                watcher,
                first,
                timeout_seconds=timeout,
                bookmark=(lambda: self._bookmark(info)) if bookmarks else None,
                bookmark_interval=self.bookmark_interval,
                on_close=lambda: self.store.unwatch(watcher, gr),
            ),
        )

    def _bookmark(self, info: ResourceInfo, initial_end: bool = False) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": str(self.store.rv)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        return event_line("BOOKMARK", {"kind": info.kind, "apiVersion": info.api_version, "metadata": meta})

    def _create(self, req: Request, t: _Target) -> Response:
        if t.subresource:
            raise E.method_not_allowed("POST")
        if t.info.namespaced and t.namespace is None:
            raise E.method_not_allowed("POST")
        obj = self._body(req, t.info)
        self._check_namespace(obj, t)
        if (obj.get("metadata") or {}).get("resourceVersion"):
            # etcd3's store.Create refuses it with a plain error, which the server answers as a bare 500
            raise E.ApiError(500, "", "resourceVersion should not be set on objects to be created")
        unknown = self._unknown_fields(req, t.info, obj)
        obj = _to_storage(t.info, obj)
        created = self.store.create(
            t.info, t.namespace or "", obj, manager=self._manager(req), dry_run=self._dry_run(req), fresh=True
        )
        resp = _json(201, self._out(t.info, created))
        if unknown:
            resp.headers["Warning"] = unknown
        return resp

    def _unknown_fields(self, req: Request, info: ResourceInfo, obj: dict[str, Any]) -> str:
        """fieldValidation=Strict rejects fields the CRD schema would prune; Warn reports them."""
        mode = req.q("fieldValidation", "") or ""
        if not info.custom or mode not in ("Strict", "Warn"):
            return ""
        from pyscaffold_op.envtest.schema import unknown_fields

        found = unknown_fields(obj, info.schema)
        if not found:
            return ""
        if mode == "Strict":
            msgs = [f'unknown field "{f}"' for f in found]
            raise E.bad_request(
                f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
                "strict decoding error: " + ", ".join(msgs)
            )
        return ", ".join(f'299 - "unknown field \\"{f}\\""' for f in found)

    def _update(self, req: Request, t: _Target) -> Response:
        if t.subresource == "scale":
            return self._update_scale(req, t, self._body(req, t.info, check_kind=False))
        obj = self._body(req, t.info)
        self._check_namespace(obj, t)
        self._unknown_fields(req, t.info, obj)
        obj = _to_storage(t.info, obj)
        updated = self.store.update(
            t.info,
            t.namespace or "",
            t.name or "",
            obj,
            subresource=t.subresource,
            manager=self._manager(req),
            dry_run=self._dry_run(req),
        )
        return _json(200, self._out(t.info, updated))

    def _patch(self, req: Request, t: _Target) -> Response:
        ctype = req.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype not in _PATCH_TYPES:
            raise E.unsupported_media(
                f"the body of the request was in an unknown format - accepted media types "
                f"include: {', '.join(_PATCH_TYPES)}"
            )
        info = t.info
        if ctype == "application/strategic-merge-patch+json" and info.custom:
            raise E.unsupported_media(
                "the body of the request was in an unknown format - accepted media types "
                "include: application/json-patch+json, application/merge-patch+json, "
                "application/apply-patch+yaml"
            )
        if ctype == "application/apply-patch+yaml":
            return self._apply(req, t)
        if req.q("force") is not None:
            raise E.invalid(
                "meta.k8s.io",
                "PatchOptions",
                "",
                [
                    E.cause(
                        "FieldValueForbidden", "force", "Forbidden: may not be specified for non-apply patch"
                    )
                ],
            )
        try:
            body = loads(req.body) if req.body else None
        except ValueError as err:
            raise E.bad_request(f"error decoding patch: {err}") from None
        ns, name = t.namespace or "", t.name or ""
        current = self.store.get(info, ns, name)
        # the patch functions never mutate their target, so the stored object serves as the base
        base = to_scale(info, current) if t.subresource == "scale" else self._out(info, current)
        if ctype == "application/json-patch+json":
            patched = patch.json_patch(base, body)
        elif ctype == "application/merge-patch+json":
            if not isinstance(body, dict):
                raise E.bad_request("merge patch must be a JSON object")
            patched = patch.merge_patch(base, body)
        else:
            patched = patch.strategic_merge_patch(base, body)
        if not isinstance(patched, dict):
            raise E.bad_request("patch result must be an object")
        if t.subresource == "scale":
            return self._update_scale(req, t, patched)
        check_meta_types(patched.setdefault("metadata", {}))
        patched = _to_storage(info, patched)
        if not patched["metadata"].get("resourceVersion"):
            patched["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        updated = self.store.update(
            info,
            ns,
            name,
            patched,
            subresource=t.subresource,
            manager=self._manager(req),
            dry_run=self._dry_run(req),
            require_rv=False,
        )
        return _json(200, self._out(info, updated))

    def _apply(self, req: Request, t: _Target) -> Response:
        info = t.info
        manager = req.q("fieldManager")
        if not manager:  # ValidatePatchOptions: 422 on the PatchOptions "kind"
            raise E.invalid(
                "meta.k8s.io",
                "PatchOptions",
                "",
                [
                    E.cause(
                        "FieldValueRequired", "fieldManager", "Required value: is required for apply patch"
                    )
                ],
            )
        applied = self._body(req, info)
        if not applied.get("apiVersion") or not applied.get("kind"):
            raise E.bad_request("apiVersion and kind must be set in an apply request")
        meta = applied.setdefault("metadata", {})
        if meta.get("name") and meta["name"] != t.name:
            raise E.bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the URL ({t.name})"
            )
        self._check_namespace(applied, t)
        ns, name = t.namespace or "", t.name or ""
        current = self.store.find(info.bucket, ns if info.namespaced else "", name)
        force = req.flag("force")
        now = now_rfc3339()
        if current is None:
            if t.subresource:
                raise E.not_found(info.group, info.plural, name)
            meta["name"] = name
            obj = managed.apply(
                None,
                applied,
                manager,
                force,
                now,
                info.schema,
                info.custom,
                info.api_version,
                info.group,
                info.plural,
                name,
            )
            created = self.store.create(
                info,
                ns,
                _to_storage(info, obj),
                dry_run=self._dry_run(req),
                managed_fields=obj["metadata"].get("managedFields"),
                fresh=True,
            )
            return _json(201, self._out(info, created))
        new = managed.apply(
            self._out(info, current),
            applied,
            manager,
            force,
            now,
            info.schema,
            info.custom,
            info.api_version,
            info.group,
            info.plural,
            name,
            t.subresource,
        )
        new = _to_storage(info, new)
        new["metadata"]["resourceVersion"] = (
            meta.get("resourceVersion") or current["metadata"]["resourceVersion"]
        )
        updated = self.store.update(
            info,
            ns,
            name,
            new,
            subresource=t.subresource,
            dry_run=self._dry_run(req),
            require_rv=False,
            managed_fields=new["metadata"].get("managedFields"),
        )
        return _json(200, self._out(info, updated))

    def _update_scale(self, req: Request, t: _Target, scale: dict[str, Any]) -> Response:
        info = t.info
        ns, name = t.namespace or "", t.name or ""
        current = self.store.get(info, ns, name)
        spec = scale.get("spec") or {}
        replicas = spec.get("replicas") if isinstance(spec, dict) else None
        if not isinstance(replicas, int) or replicas < 0:
            raise E.invalid(
                "autoscaling",
                "Scale",
                name,
                [
                    E.cause(
                        "FieldValueInvalid",
                        "spec.replicas",
                        f"Invalid value: {replicas}: must be greater than or equal to 0",
                    )
                ],
            )
        new = copy.deepcopy(current)
        set_path(new, (info.scale or {}).get("specReplicasPath", ".spec.replicas"), replicas)
        rv = (scale.get("metadata") or {}).get("resourceVersion")
        new["metadata"]["resourceVersion"] = rv or current["metadata"]["resourceVersion"]
        updated = self.store.update(info, ns, name, new, manager=self._manager(req), require_rv=False)
        return _json(200, to_scale(info, updated))

    def _delete_options(self, req: Request) -> dict[str, Any]:
        opts: dict[str, Any] = {}
        if req.body:
            try:
                parsed = loads(req.body)
            except ValueError as err:
                raise E.bad_request(f"error decoding DeleteOptions: {err}") from None
            if isinstance(parsed, dict):
                opts = parsed
        if req.q("propagationPolicy"):
            opts["propagationPolicy"] = req.q("propagationPolicy")
        if opts.get("orphanDependents") is not None and opts.get("propagationPolicy") is not None:
            raise E.invalid(
                "meta.k8s.io",
                "DeleteOptions",
                "",
                [
                    E.cause(
                        "FieldValueInvalid",
                        "propagationPolicy",
                        'Invalid value: "' + str(opts["propagationPolicy"]) + '": orphanDependents and '
                        "deletionPropagation cannot be both set",
                    )
                ],
            )
        if opts.get("orphanDependents") is True:
            opts["propagationPolicy"] = "Orphan"
        pp = opts.get("propagationPolicy")
        if pp not in (None, "Orphan", "Background", "Foreground"):
            raise E.invalid(
                "meta.k8s.io",
                "DeleteOptions",
                "",
                [
                    E.cause(
                        "FieldValueNotSupported",
                        "propagationPolicy",
                        f'Unsupported value: "{pp}": supported values: "Foreground", "Background", '
                        '"Orphan", "nil"',
                    )
                ],
            )
        return opts

    def _delete(self, req: Request, t: _Target) -> Response:
        info = t.info
        opts = self._delete_options(req)
        obj, gone = self.store.delete(
            info,
            t.namespace or "",
            t.name or "",
            propagation=opts.get("propagationPolicy"),
            preconditions=opts.get("preconditions"),
            dry_run=self._dry_run(req) or "All" in (opts.get("dryRun") or []),
        )
        if not gone:
            # like the real handler: 202 only when the client explicitly asked for cascading deletion
            # with orphanDependents=false; otherwise 200 with the object that finalizers still hold
            return _json(202 if opts.get("orphanDependents") is False else 200, self._out(info, obj))
        if info.custom or info.group_resource == ("", "pods"):
            return _json(200, self._out(info, obj))
        return _json(200, E.success(obj["metadata"]["name"], info.group, info.plural, obj["metadata"]["uid"]))

    def _delete_collection(self, req: Request, t: _Target) -> Response:
        info = t.info
        opts = self._delete_options(req)
        pred = self._selector(req, info)
        items, _rv, _c, _r = self.store.list(info, t.namespace, pred)
        deleted = []
        for obj in list(items):
            meta = obj["metadata"]
            try:
                o, _gone = self.store.delete(
                    info,
                    meta.get("namespace", ""),
                    meta["name"],
                    propagation=opts.get("propagationPolicy"),
                    dry_run=self._dry_run(req),
                )
                deleted.append(self._out(info, o))
            except E.ApiError as err:
                if err.code != 404:
                    raise
        return _json(
            200,
            {
                "apiVersion": info.api_version,
                "kind": info.list_kind,
                "metadata": {"resourceVersion": str(self.store.rv)},
                "items": deleted,
            },
        )


def _to_storage(info: ResourceInfo, obj: dict[str, Any]) -> dict[str, Any]:
    return info.to_storage(obj) if info.to_storage is not None else obj


def _rv(value: str | None) -> str:
    if value is None or not value.isdigit():
        raise (
            E.bad_request(f'invalid resource version: "{value}"')
            if value
            else E.bad_request("resourceVersion is required")
        )
    return value


def _wants_table(req: Request) -> bool:
    accept = req.headers.get("accept", "")
    return "as=Table" in accept


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data
