"""What every verb takes from a request and gives back: the checked body, the field manager, dry run,
and the object as served. Plain functions: the verbs (`verbs_read`, `verbs_write`, `reviews`,
`subresources`) share them without inheriting from `Api`.
"""

from __future__ import annotations

from typing import Any

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.registry.resources import ServedResource
from pyscaffold_op.envtest.server import godecode
from pyscaffold_op.envtest.server.decode import check_object_depth, decode_body
from pyscaffold_op.envtest.server.metatypes import check_meta_types
from pyscaffold_op.envtest.server.protocol import (
    JSON,
    PROTOBUF,
    HttpRequest,
    Target,
    check_write_options,
    media_type,
)


def served(info: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
    """The object as served under the requested version (CRD versions share storage, no conversion)."""
    if info.from_storage is not None:
        return info.from_storage(obj)
    if obj.get("apiVersion") != info.api_version:
        return {**obj, "apiVersion": info.api_version}
    return obj


def read_body(
    req: HttpRequest,
    info: ServedResource,
    *,
    check_kind: bool = True,
    options: str = "",
    custom_kind_later: bool = False,
) -> dict[str, Any]:
    """The decoded body, checked in the handlers' order: media type (415), then the request's
    `options` kind (CreateOptions, ...: 422), then decoding (400). `custom_kind_later`: a custom
    resource's wrong `kind` is left to the caller (the server's strategy answers it with 422)."""
    ctype = media_type(req)
    if ctype == PROTOBUF and not info.custom:
        from pyscaffold_op.envtest.server.protobuf import decode_request

        if options:
            check_write_options(req, options)
        obj = decode_request(req.body, info.api_version, info.kind, check_kind)
        return _checked(obj, req, info, check_kind, custom_kind_later, typed=True)
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
    return _checked(obj, req, info, check_kind, custom_kind_later)


def _checked(
    obj: Any,
    req: HttpRequest,
    info: ServedResource,
    check_kind: bool,
    custom_kind_later: bool,
    *,
    typed: bool = False,
) -> dict[str, Any]:
    """The decoded body's checks; `typed`: it came from protobuf, so already of the Go types."""
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
        if kind and kind != info.kind and not (info.custom and custom_kind_later):
            raise E.bad_request(
                f"the kind in the data ({kind}) does not match the expected kind ({info.kind})"
            )
    if not info.custom and check_kind and not typed:
        # decoded into the kind's Go type, as the server does: every field's JSON type, at any depth
        raw = req.body if media_type(req) == JSON else None
        problem = godecode.decode_error(info.api_version, info.kind, obj, raw)
        if problem is not None:
            raise E.bad_request(
                f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: {problem}'
            )
    meta = obj.get("metadata")
    if meta is not None:
        check_meta_types(meta)
    check_object_depth(obj, req.body, info.kind)
    return obj


def check_namespace(obj: dict[str, Any], t: Target) -> None:
    ns = (obj.get("metadata") or {}).get("namespace")
    if t.info.namespaced and ns and ns != t.namespace:
        raise E.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )


def field_manager(req: HttpRequest) -> str:
    fm = req.q("fieldManager")
    if fm:
        return fm
    ua = req.headers.get("user-agent", "")
    return ua.split("/")[0] if ua else "unknown"


def dry_run(req: HttpRequest) -> bool:
    return "All" in req.query.get("dryRun", [])
