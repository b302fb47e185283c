"""Metadata-only reads: `Accept: application/json;as=PartialObjectMetadata(List);g=meta.k8s.io;v=v1`
(client-go's metadata client, controller-runtime's metadata-only watches) answered with
PartialObjectMetadata objects, lists and watch events, as the API server transforms them."""

from __future__ import annotations

from typing import Any

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.server.protocol import HttpRequest

_VERSIONS = ("v1", "v1beta1")


def requested(req: HttpRequest, listing: bool) -> str | None:
    """The meta.k8s.io version of the PartialObjectMetadata form the request accepts first, or None for
    the object itself (or a Table); 406 when it accepts only a metadata form that does not fit
    (a List for a single object, or a single object for a list)."""
    accept = req.headers.get("accept", "")
    if "as=PartialObjectMetadata" not in accept:
        return None
    want = "PartialObjectMetadataList" if listing else "PartialObjectMetadata"
    for clause in accept.split(","):
        parts = [p.strip() for p in clause.split(";")]
        params = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
        as_ = params.get("as")
        if as_ is None:
            return None  # a plain media type comes first: the object itself
        if as_ == want and params.get("g") == "meta.k8s.io" and params.get("v") in _VERSIONS:
            return params["v"]
        if as_ == "Table":
            return None
    raise E.StatusError(
        406,
        "NotAcceptable",
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf",
    )


def partial(obj: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": obj["metadata"],
    }


def partial_list(items: list[dict[str, Any]], meta: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    return {
        "kind": "PartialObjectMetadataList",
        "apiVersion": f"meta.k8s.io/{version}",
        "metadata": meta,
        "items": [partial(o, version) for o in items],
    }
