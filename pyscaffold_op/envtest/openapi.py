"""A minimal /openapi/v3: enough for kubectl to see that the server validates fields itself
(`fieldValidation` on every PATCH), so `kubectl create/apply` send `fieldValidation=Strict` instead
of downloading schemas. Schemas of CRDs are published; built-in kinds get open objects."""

from __future__ import annotations

import hashlib
from typing import Any

from pyscaffold_op.envtest.jsonutil import dumps
from pyscaffold_op.envtest.resources import Registry, ServedResource

_PARAMS = [
    {"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
    for n in ("dryRun", "fieldManager", "fieldValidation", "force")
]


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
