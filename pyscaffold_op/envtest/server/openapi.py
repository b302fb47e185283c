"""A minimal /openapi/v3: enough for kubectl to see that the server validates fields itself
(`fieldValidation` on every PATCH), so `kubectl create/apply` send `fieldValidation=Strict` instead
of downloading schemas. Schemas of CRDs are published; built-in kinds get open objects.

/openapi/v2 is a document without definitions: kubectl fetches it (as gnostic protobuf) to validate
what /openapi/v3 cannot name, such as the items of a `kind: List`, and skips the kinds it lacks."""

from __future__ import annotations

import hashlib
from typing import Any

from pyscaffold_op.envtest.jsonutil import dumps
from pyscaffold_op.envtest.registry.resources import Registry, ServedResource

_PARAMS = [
    {"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
    for n in ("dryRun", "fieldManager", "fieldValidation", "force")
]


V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
_V2: dict[str, Any] = {
    "swagger": "2.0",
    "info": {"title": "Kubernetes", "version": "v1.32.0"},
    "paths": {},
    "definitions": {},
}


def _pb_string(field: int, value: str) -> bytes:
    data = value.encode()
    return bytes([field << 3 | 2, len(data)]) + data  # short strings: one-byte lengths


def v2(accept: str) -> tuple[bytes, str]:
    """The v2 document and its media type: gnostic's `openapi_v2.Document` in protobuf
    (swagger = 1, info = 2 with title = 1 and version = 2) when asked for, JSON otherwise."""
    if V2_PROTOBUF in accept:
        info = _pb_string(1, _V2["info"]["title"]) + _pb_string(2, _V2["info"]["version"])
        # kube-openapi answers with a parseable media type (Go's mime rejects the '@' of the Accept)
        doc = _pb_string(1, _V2["swagger"]) + bytes([2 << 3 | 2, len(info)]) + info
        return doc, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    return dumps(_V2), "application/json"


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def root(registry: Registry) -> dict[str, Any]:
    paths = {}
    for group, versions in registry.group_versions().items():
        for v in versions:
            p = _gv_path(group, v)
            digest = hashlib.sha256(dumps(group_version(registry, group, v) or {})).hexdigest()[:16].upper()
            paths[p] = {"serverRelativeURL": f"/openapi/v3/{p}?hash={digest}"}
    return {"paths": paths}


def _definition_name(info: ServedResource) -> str:
    group = ".".join(reversed(info.group.split("."))) if info.group else "io.k8s.api.core"
    return f"{group}.{info.version}.{info.kind}"


def group_version(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    infos = registry.resources_in(group, version)
    if not infos:
        return None
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for info in infos:
        gvk = [{"group": info.group, "version": info.version, "kind": info.kind}]
        base = f"/{_gv_path(group, version)}/" + ("namespaces/{namespace}/" if info.namespaced else "")
        item = f"{base}{info.plural}/{{name}}"
        op = {
            "parameters": _PARAMS,
            "x-kubernetes-group-version-kind": gvk[0],
            "x-kubernetes-action": "patch",
            "responses": {"200": {"description": "OK"}},
        }
        paths[item] = {"patch": op, "put": {**op, "x-kubernetes-action": "put"}}
        paths[f"{base}{info.plural}"] = {"post": {**op, "x-kubernetes-action": "post"}}
        schema: dict[str, Any] = (
            dict(info.schema)
            if info.schema
            else {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        )
        schema["x-kubernetes-group-version-kind"] = gvk
        schemas[_definition_name(info)] = schema
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }
