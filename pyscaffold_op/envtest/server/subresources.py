"""Subresources beyond status and scale: pods/log, pods/binding, pods/eviction and
serviceaccounts/token (`kubectl create token`). Each answers like kube-apiserver's REST handler."""

from __future__ import annotations

import base64
import json
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.registry import podbinding
from pyscaffold_op.envtest.server import wire
from pyscaffold_op.envtest.server.eviction import evict
from pyscaffold_op.envtest.server.protocol import HttpRequest, Response, Target, json_response
from pyscaffold_op.envtest.storage.objectstore import now_rfc3339

if TYPE_CHECKING:
    from pyscaffold_op.envtest.server.handlers import Api

# the API server's default --api-audiences (its --service-account-issuer)
ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_TOKEN_SECONDS = 3600


def serve(api: Api, req: HttpRequest, t: Target) -> Response | None:
    """The answer for a subresource served here; None leaves it to the generic verbs (status, scale)."""
    handler = _HANDLERS.get((t.info.group, t.info.plural, t.subresource))
    if handler is None or t.name is None:
        return None
    method, fn = handler
    if req.method != method:
        raise E.method_not_allowed(req.method)
    return fn(api, req, t)


def _pod_log(api: Api, req: HttpRequest, t: Target) -> Response:
    return api.reads.pod_log(req, t)


def _created() -> Response:
    return json_response(
        201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    )


def _binding(api: Api, req: HttpRequest, t: Target) -> Response:
    """POST pods/NAME/binding (what a scheduler sends): sets spec.nodeName once (registry.podbinding)."""
    body = wire.read_body(req, t.info, check_kind=False)
    node = ((body.get("target") or {}) if isinstance(body.get("target"), dict) else {}).get("name")
    api.store.get(t.info, t.namespace or "", t.name or "")  # 404 first
    if not node:
        raise E.invalid(
            "", "Binding", t.name or "", [E.cause("FieldValueRequired", "target.name", "Required value")]
        )
    meta = given if isinstance(given := body.get("metadata"), dict) else {}
    annotations = found if isinstance(found := meta.get("annotations"), dict) else None
    podbinding.bind(
        api.store,
        t.namespace or "",
        t.name or "",
        str(node),
        now_rfc3339(),
        annotations=annotations,
        dry_run=wire.dry_run(req),
    )
    return _created()


def binding_collection(api: Api, req: HttpRequest, t: Target) -> Response:
    """POST /api/v1/namespaces/NS/bindings: the pods/binding of the pod the body names."""
    if req.method != "POST" or t.name is not None or t.subresource:
        raise E.method_not_allowed(req.method)
    body = wire.read_body(req, t.info)
    name = (body.get("metadata") or {}).get("name") if isinstance(body.get("metadata"), dict) else None
    pods = api.store.registry.get("", "v1", "pods")
    assert pods is not None
    if not name:
        raise E.invalid(
            "",
            "Binding",
            "",
            [E.cause("FieldValueRequired", "metadata.name", "Required value: name is required")],
        )
    return _binding(api, req, Target(pods, t.namespace, name, "binding"))


def _token(api: Api, req: HttpRequest, t: Target) -> Response:
    """POST serviceaccounts/NAME/token: a TokenRequest answered with a JWT for the ServiceAccount,
    which TokenReviews then authenticate as system:serviceaccount:<ns>:<name>."""
    body = wire.read_body(req, t.info, check_kind=False)
    ns, name = t.namespace or "", t.name or ""
    sa = api.store.get(t.info, ns, name)
    spec = given if isinstance(given := body.get("spec"), dict) else {}
    seconds = spec.get("expirationSeconds") or DEFAULT_TOKEN_SECONDS
    if not isinstance(seconds, int) or seconds < 600:
        raise E.invalid(
            "authentication.k8s.io",
            "TokenRequest",
            name,
            [
                E.cause(
                    "FieldValueInvalid",
                    "spec.expirationSeconds",
                    f"Invalid value: {seconds}: may not specify a duration less than 10 minutes",
                )
            ],
        )
    if seconds > 2**32:
        raise E.invalid(
            "authentication.k8s.io",
            "TokenRequest",
            name,
            [
                E.cause(
                    "FieldValueTooLong",
                    "spec.expirationSeconds",
                    f"Invalid value: {seconds}: may not specify a duration larger than 2^32 seconds",
                )
            ],
        )
    audiences = spec.get("audiences") or [ISSUER]
    now = int(time.time())
    uid = sa["metadata"]["uid"]
    user = f"system:serviceaccount:{ns}:{name}"
    claims = {
        "aud": audiences,
        "exp": now + seconds,
        "iat": now,
        "iss": ISSUER,
        "jti": secrets.token_hex(16),
        "kubernetes.io": {"namespace": ns, "serviceaccount": {"name": name, "uid": uid}},
        "nbf": now,
        "sub": user,
    }
    token = (
        ".".join(
            _b64(json.dumps(part, separators=(",", ":")).encode())
            for part in ({"alg": "RS256", "kid": "pyop-envtest"}, claims)
        )
        + "."
        + _b64(secrets.token_bytes(64))
    )
    api.policy.add_token(token, user, ("system:serviceaccounts", f"system:serviceaccounts:{ns}"), uid)
    expires = datetime.fromtimestamp(now + seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    out = {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": None},
        "spec": {
            "audiences": audiences,
            "expirationSeconds": seconds,
            "boundObjectRef": spec.get("boundObjectRef"),
        },
        "status": {"token": token, "expirationTimestamp": expires},
    }
    return json_response(201, out)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


_HANDLERS: dict[tuple[str, str, str], tuple[str, Callable[[Api, HttpRequest, Target], Response]]] = {
    ("", "pods", "log"): ("GET", _pod_log),
    ("", "pods", "binding"): ("POST", _binding),
    ("", "pods", "eviction"): ("POST", evict),
    ("", "serviceaccounts", "token"): ("POST", _token),
}
