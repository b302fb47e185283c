"""Request routing, independent of the HTTP framework.

`Api.handle(HttpRequest) -> Response` is shared by the HTTP front and in-process callers, so
both ways in behave identically. Every failure becomes a `Status` body; nothing a client sends can
crash the server. The verbs live in `verbs_read` and `verbs_write`.
"""

from __future__ import annotations

import logging
from typing import Protocol

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.admission.gate import AdmissionGate
from pyscaffold_op.envtest.admission.webhooks import warning_header
from pyscaffold_op.envtest.jsonutil import dumps, loads
from pyscaffold_op.envtest.registry.kindrules import DEPRECATED
from pyscaffold_op.envtest.registry.resources import Registry
from pyscaffold_op.envtest.server import csr, discovery, openapi, protoanswer, subresources, wire
from pyscaffold_op.envtest.server.access import AccessControl
from pyscaffold_op.envtest.server.auth import Policy
from pyscaffold_op.envtest.server.decode import MAX_BODY
from pyscaffold_op.envtest.server.protocol import (
    JSON,
    HttpRequest,
    Response,
    Target,
    error_response,
    json_response,
)
from pyscaffold_op.envtest.server.rbac import RbacAuthorizer
from pyscaffold_op.envtest.server.reviews import ReviewVerbs
from pyscaffold_op.envtest.server.verbs_read import ReadVerbs
from pyscaffold_op.envtest.server.verbs_write import WriteVerbs
from pyscaffold_op.envtest.storage.objectstore import Store
from pyscaffold_op.envtest.types import NAMESPACES

log = logging.getLogger("pyscaffold_op.envtest")

__all__ = ["MAX_BODY", "Api", "HttpRequest", "Response", "error_response"]


class NamespaceActivity(Protocol):
    """What the front tells the namespace controller (`controllers.namespace`): writes postpone it."""

    @property
    def pending(self) -> bool: ...
    def activity(self, method: str, namespace: str | None) -> None: ...


class Api:
    """Routes each request to its verb: the reading, writing and review verbs are collaborators
    over the same store (and policy), not base classes. Writes pass the admission gate (webhooks);
    a CRD version other than the storage one with a conversion webhook is served via storage."""

    def __init__(
        self, store: Store, server_address: str = "127.0.0.1", bookmark_interval: float = 1.0
    ) -> None:
        self.store = store
        self.server_address = server_address
        self.policy = Policy()
        # the stored Roles and bindings answer access reviews (and gate requests in RBAC mode)
        self.policy.rbac = RbacAuthorizer(store)
        # authentication (HTTPS), authorization (RBAC mode; impersonated requests in every mode)
        self.access = AccessControl(self.policy)
        self.gate = AdmissionGate(store, self.policy)
        self.admission = self.gate.admission
        self.reads = ReadVerbs(store, bookmark_interval)
        self.writes = WriteVerbs(store, self.gate)
        self.reviews = ReviewVerbs(self.policy)
        # the namespace controller, told of every write while a namespace waits to be emptied
        self.namespace_activity: NamespaceActivity | None = None

    async def handle(self, req: HttpRequest) -> Response:
        try:
            req.user = self.access.admit(req)
            if len(req.body) > MAX_BODY:
                raise E.too_large(MAX_BODY)
            ns = self.namespace_activity
            if ns is not None and ns.pending and req.method != "GET":
                ns.activity(req.method, _path_namespace(req.path))
            resp = await self._dispatch(req)
        except E.StatusError as err:
            resp = error_response(err)
        except Exception as err:  # a bug here must not drop the connection: answer 500 like the server
            log.exception("envtest: internal error on %s %s", req.method, req.path)
            resp = error_response(E.internal(f"{type(err).__name__}: {err}"))
        if req.protobuf_answer:
            return protoanswer.transcode(resp)
        return resp

    # -- routing -----------------------------------------------------------------------------------

    async def _dispatch(self, req: HttpRequest) -> Response:
        parts = [p for p in req.path.split("/") if p]
        reg = self.store.registry
        if _unhandled(parts, reg):
            return Response(404, b"404 page not found\n", "text/plain; charset=utf-8")
        if req.method == "GET":
            if parts == ["version"]:
                return json_response(200, discovery.VERSION)
            if parts in (["healthz"], ["readyz"], ["livez"]):
                return Response(200, b"ok", "text/plain")
            if parts == ["openapi", "v2"]:
                body, ctype = openapi.v2(req.headers.get("accept", ""), reg)
                return Response(200, body, ctype)
            if parts[:2] == ["openapi", "v3"]:
                if len(parts) == 2:
                    return json_response(200, openapi.root(reg))
                gv_body = openapi.document(reg, "/".join(parts[2:]))
                if gv_body is None:
                    raise E.not_found_path()
                return Response(200, gv_body, "application/json")
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
        if target is None:  # kube-apiserver's crdHandler hands the request to the mux's NotFound
            return Response(404, b"404 page not found\n", "text/plain; charset=utf-8")
        if protoanswer.MARKER in req.headers.get("accept", ""):
            protoanswer.negotiate(req, target.info.custom)
        if target.info.conversion_webhook is not None and not target.info.storage:
            resp = await self._via_storage(req, target, watch)
        else:
            resp = await self._serve(req, target, watch)
        if req.method != "GET" and "as=PartialObjectMetadata" in req.headers.get("accept", ""):
            return _partial_answer(req, resp)
        return resp

    async def _serve(self, req: HttpRequest, target: Target, watch: bool) -> Response:
        info = target.info
        deprecated = DEPRECATED.get((info.group, info.version, info.plural))
        if deprecated is None:
            return await self._serve_resource(req, target, watch)
        # the deprecation filter warns on every request to the resource, failed ones too
        warning = warning_header([deprecated])
        try:
            resp = await self._serve_resource(req, target, watch)
        except E.StatusError as err:
            err.warnings.insert(0, warning)
            raise
        resp.headers["Warning"] = ", ".join(w for w in (warning, resp.headers.get("Warning")) if w)
        return resp

    async def _serve_resource(self, req: HttpRequest, target: Target, watch: bool) -> Response:
        info = target.info
        if not _acceptable(req.headers.get("accept", "")):  # NegotiateOutputMediaType, first
            raise E.StatusError(
                406,
                "NotAcceptable",
                "406: Not Acceptable\n\nAvailable representations: " + ", ".join(_OFFERED),
                {},
            )
        if info.review:
            return self.reviews.review(req, target)
        if info.verbs is not None:
            if info.group_resource == ("", "bindings"):
                return subresources.binding_collection(self, req, target)
            if not info.allows(_verb(req.method, target.name is None, watch)):
                raise E.method_not_allowed(req.method)
        if target.subresource and (served := subresources.serve(self, req, target)) is not None:
            return served
        generic = ("status", "scale")  # the subresources the verbs below serve (and a CSR's approval)
        if target.subresource == "finalize" and info.group_resource == NAMESPACES:
            if req.method != "PUT" or target.name is None:  # FinalizeREST is an Updater only
                raise E.method_not_allowed(req.method)
        elif target.subresource and target.subresource not in generic and not csr.is_approval(target):
            raise E.not_found_path()
        if target.subresource == "status" and not target.info.status:
            raise E.not_found_path()
        if target.subresource == "scale" and not target.info.scale:
            raise E.not_found_path()
        m = req.method
        if target.name is None:
            if m == "GET":
                return self.reads.watch(req, target) if watch else self.reads.list(req, target)
            if m == "POST":
                return await self.writes.create(req, target, csr.requester_filler(self, req, target))
            if m == "DELETE":
                return await self.writes.delete_collection(req, target)
            raise E.method_not_allowed(m)
        if m == "GET":
            return self.reads.get(req, target)
        if m in ("PUT", "PATCH") and csr.is_approval(target):
            csr.check_approver(self, req, target)
        if m == "PUT":
            return await self.writes.update(req, target)
        if m == "PATCH":
            return await self.writes.patch(req, target)
        if m == "DELETE" and not target.subresource:
            return await self.writes.delete(req, target)
        raise E.method_not_allowed(m)

    def _target(self, group: str, version: str, rest: list[str]) -> Target | None:
        """The resource a path names; None for a path in a custom resources' group that names no
        served resource (an unknown plural or version, a cluster-scoped kind under a namespace)."""
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
        if info is None or len(rest) > 3 or (ns is not None and not info.namespaced):
            if group and any(i.custom and i.group == group for i in reg.all()):
                return None
            raise E.not_found_path()
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else ""
        if info.namespaced and name is not None and ns is None:
            raise E.not_found_path()
        return Target(info, ns, name, sub)

    async def _via_storage(self, req: HttpRequest, t: Target, watch: bool) -> Response:
        """Serve a request for a version other than the storage one of a CRD with a conversion
        webhook: through the storage version, converting bodies and answers (admission.conversionwebhook)."""
        from pyscaffold_op.envtest.admission import conversionwebhook
        from pyscaffold_op.envtest.registry import patch
        from pyscaffold_op.envtest.server import tables
        from pyscaffold_op.envtest.server.protocol import wants_table

        conv = t.info.conversion_webhook
        assert conv is not None
        storage = self.store.registry.storage_for(t.info.group, t.info.plural)
        if storage is None:
            raise E.not_found_path()
        st = Target(storage, t.namespace, t.name, t.subresource)
        services, sv, to = self.admission.services, storage.api_version, t.info.api_version
        convert = self.gate.convert
        headers = {k: v for k, v in req.headers.items() if k != "accept"}
        table = wants_table(req)
        body = req.body
        if req.method in ("POST", "PUT") and t.subresource != "scale":
            obj = await convert(wire.read_body(req, t.info), storage)
            headers["content-type"] = JSON
            body = dumps(obj)
        elif req.method == "PATCH" and t.subresource != "scale":
            ctype = req.headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype == "application/apply-patch+yaml":
                body = dumps(await convert(wire.read_body(req, t.info), storage))
            else:  # patch the object as the client sees it, then store the converted result
                try:
                    ops = loads(req.body) if req.body else None
                except ValueError as err:
                    raise E.bad_request(f"error decoding patch: {err}") from None
                current = self.store.get(storage, t.namespace or "", t.name or "")
                seen = await convert(wire.served(storage, current), t.info)
                if ctype == "application/json-patch+json":
                    patched = patch.json_patch(seen, ops)
                elif ctype == "application/merge-patch+json" and isinstance(ops, dict):
                    patched = patch.merge_patch(seen, ops)
                else:
                    return await self._serve(req, t, watch)  # the usual 415/400 answers
                patched.setdefault("metadata", {}).setdefault(
                    "resourceVersion", current["metadata"]["resourceVersion"]
                )
                body = dumps(await convert(patched, storage))
                headers["content-type"] = JSON
                req = HttpRequest("PUT", req.path, req.query, headers, body)
        inner = HttpRequest(req.method, req.path, req.query, headers, body)
        resp = await self._serve(inner, st, watch)
        if resp.stream is not None:
            resp.stream = conversionwebhook.convert_stream(services, conv, resp.stream, sv, to)
            resp.watcher = None  # its lines need converting: they go through the stream
            return resp
        if resp.status >= 300 or resp.content_type != JSON:
            return resp
        resp.body = await conversionwebhook.convert_body(services, conv, resp.body, sv, to)
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


def _verb(method: str, collection: bool, watch: bool) -> str:
    """The API verb of a request (the RBAC attribute)."""
    if method == "GET":
        return "watch" if watch else "list" if collection else "get"
    if method == "DELETE":
        return "deletecollection" if collection else "delete"
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())


def _path_namespace(path: str) -> str | None:
    """The namespace of a request for objects in one (`.../namespaces/<ns>/<resource>...`), if any."""
    parts = [p for p in path.split("/") if p]
    start = 2 if parts[:1] == ["api"] else 3
    if parts[start : start + 1] == ["watch"]:
        start += 1
    if len(parts) > start + 2 and parts[start] == "namespaces":
        return parts[start + 1]
    return None


_ROOTS = ("api", "apis", "version", "healthz", "readyz", "livez", "openapi", "logs", "metrics")


def _unhandled(parts: list[str], reg: Registry) -> bool:
    """A path no handler of the real server's mux is registered for (outside its roots, or under
    /apis/ for a group it does not serve): Go's NotFoundHandler answers, in plain text."""
    if parts and parts[0] not in _ROOTS:
        return True
    return len(parts) >= 2 and parts[0] == "apis" and not reg.serves_group(parts[1])


# what the server can write: the media types of its serializers, then their stream forms
_OFFERED = (
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf;stream=watch",
)
_ACCEPTED = frozenset({"", "*/*", "application/*", *(m.split(";")[0] for m in _OFFERED)})


def _acceptable(accept: str) -> bool:
    """Whether any media range of the Accept header is one the server can answer with."""
    return any(part.split(";")[0].strip().lower() in _ACCEPTED for part in accept.split(","))


def _partial_answer(req: HttpRequest, resp: Response) -> Response:
    """A write's answer as PartialObjectMetadata when the request accepts that first, as kube-apiserver's
    transformResponseObject does for every verb (client-go's metadata client patches with it; a Status
    stays a Status)."""
    from pyscaffold_op.envtest.server import partial

    if not 200 <= resp.status < 300 or resp.stream is not None or not resp.content_type.startswith(JSON):
        return resp
    version = partial.requested(req, listing=False)
    obj = loads(resp.body) if version else None
    if not isinstance(obj, dict) or obj.get("kind") == "Status" or "metadata" not in obj:
        return resp
    resp.body = dumps(partial.partial(obj, version or "v1")) + b"\n"
    return resp
