"""Request routing, independent of the HTTP framework.

`Api.handle(Request) -> Response` is shared by the aiohttp server and the in-process httpx transport, so
both ways in behave identically. Every failure becomes a `Status` body; nothing a client sends can
crash the server. The verbs live in `verbs_read` and `verbs_write`.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

from pyscaffold_op.envtest import discovery, openapi, subresources
from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.auth import ADMIN_USER, MASTERS, Policy
from pyscaffold_op.envtest.decode import MAX_BODY, check_object_depth, decode_body
from pyscaffold_op.envtest.jsonutil import dumps, loads
from pyscaffold_op.envtest.metatypes import check_meta_types
from pyscaffold_op.envtest.objectstore import Store
from pyscaffold_op.envtest.protocol import (
    JSON,
    PROTOBUF,
    Request,
    Response,
    Target,
    check_write_options,
    error_response,
    json_response,
    media_type,
)
from pyscaffold_op.envtest.resources import ServedResource
from pyscaffold_op.envtest.reviews import ReviewVerbs
from pyscaffold_op.envtest.verbs_read import ReadVerbs
from pyscaffold_op.envtest.verbs_write import WriteVerbs
from pyscaffold_op.envtest.webhookadmission import VALIDATING, Admission, Attributes, warning_header

log = logging.getLogger("pyscaffold_op.envtest")

__all__ = ["MAX_BODY", "Api", "Request", "Response", "error_response"]


class Api(ReadVerbs, WriteVerbs, ReviewVerbs):
    def __init__(
        self, store: Store, server_address: str = "127.0.0.1", bookmark_interval: float = 1.0
    ) -> None:
        self.store = store
        self.server_address = server_address
        self.bookmark_interval = bookmark_interval
        self.policy = Policy()
        self.admission = Admission(store)

    async def handle(self, req: Request) -> Response:
        try:
            if len(req.body) > MAX_BODY:
                raise E.too_large(MAX_BODY)
            if self.store.namespaces_pending and req.method != "GET":
                self.store.namespace_activity(req.method, _path_namespace(req.path))
            return await self._dispatch(req)
        except E.StatusError as err:
            return error_response(err)
        except Exception as err:  # a bug here must not drop the connection: answer 500 like the server
            log.exception("envtest: internal error on %s %s", req.method, req.path)
            return error_response(E.internal(f"{type(err).__name__}: {err}"))

    # -- routing -----------------------------------------------------------------------------------

    async def _dispatch(self, req: Request) -> Response:
        parts = [p for p in req.path.split("/") if p]
        reg = self.store.registry
        if req.method == "GET":
            if parts == ["version"]:
                return json_response(200, discovery.VERSION)
            if parts in (["healthz"], ["readyz"], ["livez"]):
                return Response(200, b"ok", "text/plain")
            if parts == ["openapi", "v2"]:
                body, ctype = openapi.v2(req.headers.get("accept", ""))
                return Response(200, body, ctype)
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
                return json_response(200, doc)
            if parts == ["api"]:
                return json_response(200, discovery.api_versions(self.server_address))
            if parts == ["apis"]:
                return json_response(200, discovery.api_group_list(reg))
            if len(parts) == 2 and parts[0] == "apis":
                doc = discovery.api_group(reg, parts[1])
                if doc is None:
                    raise E.not_found_path()
                return json_response(200, doc)
            if parts == ["api", "v1"] or (len(parts) == 3 and parts[0] == "apis"):
                group, version = ("", "v1") if parts[0] == "api" else (parts[1], parts[2])
                doc = discovery.resource_list(reg, group, version)
                if doc is None:
                    raise E.not_found_path()
                return json_response(200, doc)
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
        if target.info.conversion_webhook is not None and not target.info.storage:
            return await self._via_storage(req, target, watch)
        return await self._serve(req, target, watch)

    async def _serve(self, req: Request, target: Target, watch: bool) -> Response:
        if target.info.review:
            return self._review(req, target)
        if target.subresource and (served := subresources.serve(self, req, target)) is not None:
            return served
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
                return await self._create(req, target)
            if m == "DELETE":
                return await self._delete_collection(req, target)
            raise E.method_not_allowed(m)
        if m == "GET":
            return self._get(req, target)
        if m == "PUT":
            return await self._update(req, target)
        if m == "PATCH":
            return await self._patch(req, target)
        if m == "DELETE" and not target.subresource:
            return await self._delete(req, target)
        raise E.method_not_allowed(m)

    def _target(self, group: str, version: str, rest: list[str]) -> Target:
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
        return Target(info, ns, name, sub)

    # -- helpers -----------------------------------------------------------------------------------

    def _out(self, info: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
        """The object as served under the requested version (CRD versions share storage, no conversion)."""
        if info.from_storage is not None:
            return info.from_storage(obj)
        if obj.get("apiVersion") != info.api_version:
            return {**obj, "apiVersion": info.api_version}
        return obj

    def _body(
        self, req: Request, info: ServedResource, *, check_kind: bool = True, options: str = ""
    ) -> dict[str, Any]:
        """The decoded body, checked in the handlers' order: media type (415), then the request's
        `options` kind (CreateOptions, ...: 422), then decoding (400)."""
        ctype = media_type(req)
        if ctype == PROTOBUF and not info.custom:
            from pyscaffold_op.envtest.protobuf import ProtobufError, decode

            if options:
                check_write_options(req, options)
            try:
                obj = decode(req.body)
            except ProtobufError as err:
                # kubectl's typed generators send protobuf; only simple kinds are described here
                raise E.unsupported_media(
                    "the body of the request was in an unknown format - accepted media types include: "
                    f"application/json, application/yaml ({err})"
                ) from None
            return self._checked(obj, req, info, check_kind)
        if ctype not in (JSON, "application/yaml", "application/apply-patch+yaml"):
            # NegotiateInputSerializer: a missing Content-Type is JSON, anything unknown is 415
            accepted = [JSON, "application/yaml"] + ([] if info.custom else [PROTOBUF])
            raise E.unsupported_media(
                "the body of the request was in an unknown format - accepted media types include: "
                + ", ".join(accepted)
            )
        if options:
            check_write_options(req, options)
        if not req.body:
            raise E.bad_request("the body of the request was empty")
        obj = decode_body(req.body, ctype != JSON, info.kind)
        return self._checked(obj, req, info, check_kind)

    def _checked(self, obj: Any, req: Request, info: ServedResource, check_kind: bool) -> dict[str, Any]:
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
        check_object_depth(obj, req.body, info.kind)
        return obj

    def _check_namespace(self, obj: dict[str, Any], t: Target) -> None:
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

    def _user(self, req: Request) -> dict[str, Any]:
        auth = req.headers.get("authorization", "")
        user = self.policy.authenticate(auth[7:]) if auth.lower().startswith("bearer ") else None
        if user is None:
            return {"username": ADMIN_USER, "groups": [MASTERS, "system:authenticated"]}
        return {"username": user.username, "groups": [*user.groups, "system:authenticated"]}

    async def _convert(self, obj: dict[str, Any], to: ServedResource) -> dict[str, Any]:
        """An object of one served version of a resource in another: by the CRD's conversion webhook,
        else (strategy None) only the apiVersion changes."""
        if obj.get("apiVersion") == to.api_version:
            return obj
        if to.conversion_webhook is not None:
            from pyscaffold_op.envtest import crdconversion

            services = self.admission.services
            return (await crdconversion.convert(services, to.conversion_webhook, [obj], to.api_version))[0]
        return {**obj, "apiVersion": to.api_version}

    async def _via_storage(self, req: Request, t: Target, watch: bool) -> Response:
        """Serve a request for a version other than the storage one of a CRD with a conversion
        webhook: through the storage version, converting bodies and answers (crdconversion)."""
        from pyscaffold_op.envtest import crdconversion, patch, tables
        from pyscaffold_op.envtest.protocol import wants_table

        conv = t.info.conversion_webhook
        assert conv is not None
        storage = self.store.registry.storage_for(t.info.group, t.info.plural)
        if storage is None:
            raise E.not_found_path()
        st = Target(storage, t.namespace, t.name, t.subresource)
        services, sv, to = self.admission.services, storage.api_version, t.info.api_version
        headers = {k: v for k, v in req.headers.items() if k != "accept"}
        table = wants_table(req)
        body = req.body
        if req.method in ("POST", "PUT") and t.subresource != "scale":
            obj = await self._convert(self._body(req, t.info), storage)
            headers["content-type"] = JSON
            body = dumps(obj)
        elif req.method == "PATCH" and t.subresource != "scale":
            ctype = req.headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype == "application/apply-patch+yaml":
                body = dumps(await self._convert(self._body(req, t.info), storage))
            else:  # patch the object as the client sees it, then store the converted result
                try:
                    ops = loads(req.body) if req.body else None
                except ValueError as err:
                    raise E.bad_request(f"error decoding patch: {err}") from None
                current = self.store.get(storage, t.namespace or "", t.name or "")
                seen = await self._convert(self._out(storage, current), t.info)
                if ctype == "application/json-patch+json":
                    patched = patch.json_patch(seen, ops)
                elif ctype == "application/merge-patch+json" and isinstance(ops, dict):
                    patched = patch.merge_patch(seen, ops)
                else:
                    return await self._serve(req, t, watch)  # the usual 415/400 answers
                patched.setdefault("metadata", {}).setdefault(
                    "resourceVersion", current["metadata"]["resourceVersion"]
                )
                body = dumps(await self._convert(patched, storage))
                headers["content-type"] = JSON
                req = Request("PUT", req.path, req.query, headers, body)
        inner = Request(req.method, req.path, req.query, headers, body)
        resp = await self._serve(inner, st, watch)
        if resp.stream is not None:
            resp.stream = crdconversion.convert_stream(services, conv, resp.stream, sv, to)
            return resp
        if resp.status >= 300 or resp.content_type != JSON:
            return resp
        resp.body = await crdconversion.convert_body(services, conv, resp.body, sv, to)
        if table:  # built here from the converted objects, with the request version's columns
            doc = loads(resp.body)
            listed = isinstance(doc.get("items"), list)
            items = [
                {"apiVersion": to, "kind": t.info.kind, **o} for o in (doc["items"] if listed else [doc])
            ]
            meta = (
                doc.get("metadata", {}) if listed else {"resourceVersion": doc["metadata"]["resourceVersion"]}
            )
            include = req.q("includeObject", "Metadata") or "Metadata"
            resp.body = dumps(tables.to_table(t.info, items, include, meta))
        return resp

    async def _admitted(
        self,
        req: Request,
        t: Target,
        operation: str,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
        write: Callable[[Any, bool], Any],
    ) -> tuple[Any, list[str]]:
        """Run `write(obj, dry_run)` through the admission webhooks: mutating ones on the decoded
        object, then `write` as a dry run (defaulting and schema validation), the validating ones on
        its result, then the real `write`. Returns what `write` returned and the webhooks' warnings."""
        dry_run = self._dry_run(req)
        if not self.admission.active() or (operation != "CREATE" and old is None):
            return write(obj, dry_run), []  # nothing to call, or the write fails on its own (404)
        info = t.info
        if obj is not None and info.custom:  # custom resources are pruned and defaulted on decode
            from pyscaffold_op import apiextensions

            obj = copy.deepcopy(obj)
            apiextensions.prune(obj, info.schema)
            apiextensions.apply_defaults(obj, info.schema)
        name = t.name or ((obj or {}).get("metadata") or {}).get("name") or ""
        namespace = (t.namespace or "") if info.namespaced else ""
        a = Attributes(operation, info, namespace, name, obj, old, t.subresource, dry_run, self._user(req))
        mutated, warnings = await self.admission.mutate(a, self._convert)
        if self.admission.matching(VALIDATING, a):
            if operation != "DELETE":
                a.obj = self._out(info, write(copy.deepcopy(mutated), True))
            warnings += await self.admission.validate(a, self._convert)
        return write(mutated, dry_run), warnings

    @staticmethod
    def _warn(resp: Response, *warnings: str) -> Response:
        """Add Warning headers: preformatted ones (`299 - ...`) and plain webhook warnings."""
        values = [w if w.startswith("299 ") else warning_header([w]) for w in warnings if w]
        if values:
            resp.headers["Warning"] = ", ".join(values)
        return resp

    # -- verbs -------------------------------------------------------------------------------------


def _path_namespace(path: str) -> str | None:
    """The namespace of a request for objects in one (`.../namespaces/<ns>/<resource>...`), if any."""
    parts = [p for p in path.split("/") if p]
    start = 2 if parts[:1] == ["api"] else 3
    if parts[start : start + 1] == ["watch"]:
        start += 1
    if len(parts) > start + 2 and parts[start] == "namespaces":
        return parts[start + 1]
    return None
