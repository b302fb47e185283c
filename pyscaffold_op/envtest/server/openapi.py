"""/openapi/v2 and /openapi/v3 as kube-apiserver serves them, so `kubectl explain` works.

The built-in group-versions' documents are kube-apiserver's own, captured by
pyscaffold_op/dev/openapi_capture.py into `_openapi.json.xz` (loaded on the first OpenAPI request,
not at startup). A CRD's group-version gets the document the apiextensions server builds: the
capture holds the one it published for two template CRDs (namespaced with status and scale, and
cluster-scoped), whose placeholder names are replaced with the CRD's; the kind's schema is the
CRD's, with `apiVersion`, `kind` and `metadata` (a reference to ObjectMeta) as the server sets them.

/openapi/v2 as JSON is the captured document plus the CRDs' definitions and paths. Asked for as
gnostic protobuf (as kubectl does, to validate the items of a `kind: List`), it is the same
document's swagger, info and definitions (openapi_pb.py), so kubectl refuses unknown fields of a
List's items as it does against a real server."""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import lzma
import re
from pathlib import Path
from typing import Any

from pyscaffold_op.envtest.jsonutil import dumps
from pyscaffold_op.envtest.registry.resources import Registry, ServedResource

_DATA = Path(__file__).with_name("_openapi.json.xz")

# the template CRDs' names in the capture (pyscaffold_op/dev/openapi_capture.py)
_T_GROUP, _T_VERSION = "tmplgroup.pyop.invalid", "v9tmplversion"
_T_NS, _T_CL = ("Tmplnskind", "tmplnskinds"), ("Tmplclkind", "tmplclkinds")
_T_BASE = f"/apis/{_T_GROUP}/{_T_VERSION}/"


@functools.cache
def _data() -> dict[str, Any]:
    return json.loads(lzma.decompress(_DATA.read_bytes()))


V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


def v2(accept: str, registry: Registry) -> tuple[bytes, str]:
    """The v2 document and its media type: gnostic's `openapi_v2.Document` in protobuf
    (openapi_pb.py: the definitions, which kubectl validates a List's items with) when asked for,
    JSON otherwise."""
    doc = _v2_doc(registry)
    if V2_PROTOBUF in accept:
        from pyscaffold_op.envtest.server.openapi_pb import document

        # kube-openapi answers with a parseable media type (Go's mime rejects the '@' of the Accept)
        pb = _v2_static_pb() if doc is None else document(doc)
        return pb, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    return (_v2_static() if doc is None else dumps(doc)), "application/json"


def _v2_doc(registry: Registry) -> dict[str, Any] | None:
    """The captured document plus the CRDs' definitions and paths; None when there are no CRDs."""
    data = _data()
    customs = [
        i for g, vs in registry.group_versions().items() for v in vs for i in registry.resources_in(g, v)
    ]
    customs = [i for i in customs if i.custom]
    if not customs:
        return None
    doc = dict(data["v2"])
    doc["paths"], doc["definitions"] = dict(doc["paths"]), dict(doc["definitions"])
    for info in customs:
        paths, defs = _crd_part(
            data["crd_v2"]["paths"], data["crd_v2"]["definitions"], info, "#/definitions/"
        )
        doc["paths"].update(paths)
        doc["definitions"].update(defs)
    doc["paths"] = dict(sorted(doc["paths"].items()))
    doc["definitions"] = dict(sorted(doc["definitions"].items()))
    return doc


@functools.cache
def _v2_static_pb() -> bytes:
    from pyscaffold_op.envtest.server.openapi_pb import document

    return document(_data()["v2"])


@functools.cache
def _v2_static() -> bytes:
    return dumps(_data()["v2"])


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def root(registry: Registry) -> dict[str, Any]:
    """The discovery document: every served group-version (and, as kube-apiserver lists them, the
    built-in /api, /apis and /apis/<group> documents) with a hash of its current content."""
    captured = _data()["v3"]
    paths = {}
    for p in ("api", "apis"):
        paths[p] = {"serverRelativeURL": f"/openapi/v3/{p}?hash={_hash(_static(p))}"}
    for group, versions in registry.group_versions().items():
        if group and f"apis/{group}" in captured:
            p = f"apis/{group}"
            paths[p] = {"serverRelativeURL": f"/openapi/v3/{p}?hash={_hash(_static(p))}"}
        for v in versions:
            p = _gv_path(group, v)
            body = group_version(registry, group, v)
            if body is not None:
                paths[p] = {"serverRelativeURL": f"/openapi/v3/{p}?hash={_hash(body)}"}
    return {"paths": dict(sorted(paths.items()))}


def _hash(body: bytes) -> str:
    return hashlib.sha512(body).hexdigest().upper()


@functools.cache
def _static(path: str) -> bytes:
    return dumps(_data()["v3"][path])


def document(registry: Registry, path: str) -> bytes | None:
    """/openapi/v3/<path>: a group-version's document, or the built-in /api, /apis, /apis/<group>."""
    parts = path.split("/")
    if path in ("api", "apis"):
        return _static(path)
    if len(parts) == 2 and parts[0] == "api":
        return group_version(registry, "", parts[1])
    if len(parts) == 2 and parts[0] == "apis":
        return _static(path) if path in _data()["v3"] and parts[1] in registry.group_versions() else None
    if len(parts) == 3 and parts[0] == "apis":
        return group_version(registry, parts[1], parts[2])
    return None


def group_version(registry: Registry, group: str, version: str) -> bytes | None:
    infos = registry.resources_in(group, version)
    if not infos:
        return None
    customs = [i for i in infos if i.custom]
    p = _gv_path(group, version)
    if not customs and p in _data()["v3"]:
        return _static(p)
    return dumps(_crd_document(customs or infos, group, version))


def _camel(s: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in re.split(r"[.\-]", s) if w)


def _definition_name(info: ServedResource, kind: str | None = None) -> str:
    group = ".".join(reversed(info.group.split("."))) if info.group else "io.k8s.api.core"
    return f"{group}.{info.version}.{kind or info.kind}"


def _substitute(obj: Any, info: ServedResource, template: tuple[str, str]) -> Any:
    text = json.dumps(obj)
    tkind, tplural = template
    tcamel, camel = _camel(_T_GROUP), _camel(info.group)
    for old, new in (
        (".".join(reversed(_T_GROUP.split("."))), ".".join(reversed(info.group.split(".")))),
        (_T_GROUP, info.group),
        (tcamel, camel),
        (tcamel[:1].lower() + tcamel[1:], camel[:1].lower() + camel[1:]),
        (_T_VERSION.capitalize(), info.version[:1].upper() + info.version[1:]),
        (_T_VERSION, info.version),
        (f" a {tkind}", f" {'an' if info.kind[:1].lower() in 'aeiou' else 'a'} {info.kind}"),  # an At
        (tkind + "List", info.list_kind),
        (tplural, info.plural),
        (tkind, info.kind),
    ):
        text = text.replace(old, new)
    return json.loads(text)


def _crd_part(
    t_paths: dict[str, Any], t_schemas: dict[str, Any], info: ServedResource, ref: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One custom resource's paths and schemas, from the template CRDs' (v3 or v2 `ref` style)."""
    paths: dict[str, Any] = {}
    ns = f"{_T_BASE}namespaces/{{namespace}}/{_T_NS[1]}"
    if info.namespaced:
        template = _T_NS
        wanted = {f"{_T_BASE}{_T_NS[1]}", ns, f"{ns}/{{name}}"}
        wanted |= {f"{ns}/{{name}}/status"} if info.status else set()
        wanted |= {f"{ns}/{{name}}/scale"} if info.scale else set()
        paths = {p: v for p, v in t_paths.items() if p in wanted}
    else:
        template = _T_CL
        cl = f"{_T_BASE}{_T_CL[1]}"
        paths = {p: v for p, v in t_paths.items() if p in (cl, f"{cl}/{{name}}")}
        # cluster-scoped subresources: the namespaced template's, without the namespace
        for sub, on in (("status", info.status), ("scale", info.scale)):
            if on and f"{ns}/{{name}}/{sub}" in t_paths:
                item = copy.deepcopy(t_paths[f"{ns}/{{name}}/{sub}"])
                item["parameters"] = [q for q in item.get("parameters", []) if q.get("name") != "namespace"]
                text = json.dumps(item).replace("Namespaced" + _T_NS[0], _T_NS[0])
                paths[f"{cl}/{{name}}/{sub}"] = _substitute(json.loads(text), info, _T_NS)
    paths = _substitute(paths, info, template)
    t_kind = f"invalid.pyop.tmplgroup.{_T_VERSION}.{template[0]}"
    schemas: dict[str, Any] = {}
    for name, schema in t_schemas.items():
        if name.startswith("invalid.") and not name.startswith(t_kind):
            continue  # the other template's kinds
        if name.startswith("io.k8s.api.autoscaling.v1.Scale") and not info.scale:
            continue
        schemas[name] = schema
    schemas = _substitute(schemas, info, template)
    kind = schemas[_definition_name(info)]
    if info.schema and not (
        ref == "#/definitions/" and info.schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        # the server's fields (v2 has no root properties for a schema that keeps unknown fields)
        t_props = _data()["crd_v3"]["components"]["schemas"][f"{t_kind}"]["properties"]
        props = {k: copy.deepcopy(t_props[k]) for k in ("apiVersion", "kind", "metadata")}
        if ref == "#/definitions/":  # v2: a plain $ref beside the description, not allOf
            meta = props["metadata"]
            meta["$ref"] = meta.pop("allOf")[0]["$ref"].replace("#/components/schemas/", ref)
        own = copy.deepcopy(info.schema)
        own.setdefault("properties", {}).update(props)
        own["x-kubernetes-group-version-kind"] = kind["x-kubernetes-group-version-kind"]
        schemas[_definition_name(info)] = own
    return paths, schemas


def _crd_document(infos: list[ServedResource], group: str, version: str) -> dict[str, Any]:
    data = _data()
    template = data["crd_v3"]
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for info in infos:
        p, s = _crd_part(template["paths"], template["components"]["schemas"], info, "#/components/schemas/")
        paths.update(p)
        schemas.update(s)
    return {
        "openapi": template["openapi"],
        "info": template["info"],
        "paths": dict(sorted(paths.items())),
        "components": {**template["components"], "schemas": dict(sorted(schemas.items()))},
    }
