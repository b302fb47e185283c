"""CustomResourceDefinitions from kinds: one CRD per group and kind, one entry per version."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyscaffold_op.apimachinery import CustomResource
from pyscaffold_op.apimachinery.naming import singularize
from pyscaffold_op.errors import GenerateError
from pyscaffold_op.gen.descriptions import truncate_descriptions
from pyscaffold_op.gen.markers import Marker
from pyscaffold_op.gen.pathcheck import column_problem, list_key_problems
from pyscaffold_op.gen.schema import SchemaConverter

# names the generator on every CRD, like controller-gen's `controller-gen.kubebuilder.io/version`
VERSION_ANNOTATION = "pyop.io/version"
_COLUMN_TYPES = ("integer", "number", "string", "boolean", "date")
_SCOPES = {"Namespaced": True, "Cluster": False}


@dataclass
class _Version:
    cls: type[CustomResource]
    markers: dict[str, list[Marker]] = field(default_factory=dict)

    def one(self, name: str) -> Marker | None:
        found = self.markers.get(name, [])
        return found[-1] if found else None


def _where(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _source_file(cls: type) -> str:
    """The file defining `cls`, relative to the working folder when it is inside it."""
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if not path:
        return cls.__module__
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _resource_names(versions: list[_Version]) -> dict[str, Any]:
    """names + scope, from class attributes checked against `+kubebuilder:resource` markers."""
    first = versions[0].cls
    for v in versions[1:]:
        if (v.cls.plural, v.cls.namespaced) != (first.plural, first.namespaced):
            raise GenerateError(
                f"{_where(v.cls)}: plural/namespaced ({v.cls.plural}, {v.cls.namespaced}) differ from "
                f"{_where(first)} ({first.plural}, {first.namespaced}); every version must agree"
            )
    names: dict[str, Any] = {
        "kind": first.gvk.kind,
        "listKind": f"{first.gvk.kind}List",
        "plural": first.plural,
        "singular": singularize(first.gvk.kind),
    }
    for v in versions:
        for marker in v.markers.get("kubebuilder:resource", []):
            path, scope = marker.get("path"), marker.get("scope")
            if path is not None and path != v.cls.plural:
                raise GenerateError(
                    f"{marker.where}: +kubebuilder:resource:path={path} disagrees with "
                    f"{v.cls.__name__}.plural = {v.cls.plural!r}; set one, or make them equal"
                )
            if scope is not None:
                if scope not in _SCOPES:
                    raise GenerateError(f"{marker.where}: scope must be Namespaced or Cluster, not {scope!r}")
                if _SCOPES[scope] != v.cls.namespaced:
                    raise GenerateError(
                        f"{marker.where}: +kubebuilder:resource:scope={scope} disagrees with "
                        f"{v.cls.__name__}.namespaced = {v.cls.namespaced}"
                    )
            if marker.get("singular"):
                names["singular"] = marker.get("singular")
            if marker.get("shortName"):
                names["shortNames"] = sorted({*names.get("shortNames", []), *marker.get("shortName")})
            if marker.get("categories"):
                names["categories"] = sorted({*names.get("categories", []), *marker.get("categories")})
    return names


def _printer_columns(v: _Version, schema: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    columns = []
    for marker in v.markers.get("kubebuilder:printcolumn", []):
        column: dict[str, Any] = {
            "jsonPath": marker.get("JSONPath"),
            "name": marker.get("name"),
            "type": marker.get("type"),
        }
        if column["type"] not in _COLUMN_TYPES:
            raise GenerateError(f"{marker.where}: printcolumn type must be one of {', '.join(_COLUMN_TYPES)}")
        if not str(column["jsonPath"]).startswith("."):
            raise GenerateError(f"{marker.where}: printcolumn JSONPath must start with '.'")
        problem = column_problem(schema, str(column["jsonPath"])) if schema is not None else None
        if problem is not None:  # kube-apiserver would show an empty column: pyop's lint
            raise GenerateError(
                f"{marker.where}: printcolumn {column['name']!r} JSONPath={column['jsonPath']}: {problem}"
            )
        for key in ("description", "format", "priority"):
            if marker.get(key) is not None:
                column[key] = marker.get(key)
        columns.append(column)
    return columns


def _subresources(v: _Version) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if v.one("kubebuilder:subresource:status"):
        out["status"] = {}
    scale = v.one("kubebuilder:subresource:scale")
    if scale is not None:
        out["scale"] = {
            "specReplicasPath": scale.get("specpath"),
            "statusReplicasPath": scale.get("statuspath"),
        }
        if scale.get("selectorpath"):
            out["scale"]["labelSelectorPath"] = scale.get("selectorpath")
    return out


def build_crd(
    classes: list[type[CustomResource]],
    converter: SchemaConverter | None = None,
    *,
    max_desc_len: int | None = None,
) -> dict[str, Any]:
    """The CRD of one group/kind from its versions' classes; `max_desc_len` is controller-gen's
    `crd:maxDescLen` (0 drops every description, n cuts them to n bytes at a sentence end)."""
    converter = converter or SchemaConverter()
    versions = []
    for cls in classes:
        grouped: dict[str, list[Marker]] = {}
        for marker in converter.markers_of(cls).kind:
            grouped.setdefault(marker.name, []).append(marker)
        if "kubebuilder:skipversion" not in grouped:
            versions.append(_Version(cls, grouped))
    if not versions:
        raise GenerateError(f"{_where(classes[0])}: every version is marked +kubebuilder:skipversion")
    versions.sort(key=lambda v: v.cls.gvk.version)
    seen = [v.cls.gvk.version for v in versions]
    if len(set(seen)) != len(seen):
        raise GenerateError(f"kind {versions[0].cls.gvk.kind} defines version {seen} more than once")
    storage = [v for v in versions if v.one("kubebuilder:storageversion")]
    if len(versions) == 1:
        storage = versions
    if len(storage) != 1:
        kind = versions[0].cls.gvk.kind
        listed = ", ".join(v.cls.gvk.version for v in storage) or "none"
        if storage:
            fix = f"keep the marker on one of {listed} and remove it from the others"
        else:
            files = ", ".join(_source_file(v.cls) for v in versions)
            fix = (
                f"add the line `# +kubebuilder:storageversion` directly above `class {kind}` "
                f"in one of {files}"
            )
        raise GenerateError(
            f"kind {kind} has versions {', '.join(seen)}: exactly one must be marked "
            f"+kubebuilder:storageversion (marked: {listed}); {fix}"
        )
    group = versions[0].cls.gvk.group
    names = _resource_names(versions)
    entries = []
    for v in versions:
        schema = converter.kind_schema(v.cls)
        if max_desc_len is not None:
            truncate_descriptions(schema, max_desc_len)
        entry: dict[str, Any] = {
            "name": v.cls.gvk.version,
            "schema": {"openAPIV3Schema": schema},
            "served": v.one("kubebuilder:unservedversion") is None,
            "storage": v is storage[0],
        }
        problems = list_key_problems(schema)
        if problems:
            raise GenerateError(
                f"{_source_file(v.cls)}: kind {v.cls.gvk.kind} {v.cls.gvk.version}: " + "; ".join(problems)
            )
        columns = _printer_columns(v, schema)
        if columns:
            entry["additionalPrinterColumns"] = columns
        subresources = _subresources(v)
        if subresources:
            entry["subresources"] = subresources
        selectable = [
            {"jsonPath": m.get("JSONPath")} for m in v.markers.get("kubebuilder:selectablefield", [])
        ]
        if selectable:
            entry["selectableFields"] = selectable
        deprecated = v.one("kubebuilder:deprecatedversion")
        if deprecated is not None:
            entry["deprecated"] = True
            if deprecated.get("warning"):
                entry["deprecationWarning"] = deprecated.get("warning")
        entries.append(entry)
    from pyscaffold_op import __version__

    metadata: dict[str, Any] = {
        "annotations": {VERSION_ANNOTATION: __version__},
        "name": f"{names['plural']}.{group}",
    }
    for v in versions:
        meta = v.one("kubebuilder:metadata")
        for key in ("annotations", "labels"):
            for item in (meta.get(key) or []) if meta else []:
                k, _, val = str(item).partition("=")
                metadata.setdefault(key, {})[k] = val
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": metadata,
        "spec": {
            "group": group,
            "names": names,
            "scope": "Namespaced" if versions[0].cls.namespaced else "Cluster",
            "versions": entries,
        },
    }


def build_crds(kinds: list[type[CustomResource]], *, max_desc_len: int | None = None) -> list[dict[str, Any]]:
    """One CRD per (group, kind), sorted by file name."""
    by_kind: dict[tuple[str, str], list[type[CustomResource]]] = {}
    for cls in kinds:
        if not cls.gvk.group:
            raise GenerateError(f"{_where(cls)}: a custom resource needs a non-empty API group")
        by_kind.setdefault((cls.gvk.group, cls.gvk.kind), []).append(cls)
    converter = SchemaConverter()
    crds = [build_crd(classes, converter, max_desc_len=max_desc_len) for classes in by_kind.values()]
    return sorted(crds, key=lambda crd: crd_file_name(crd))


def crd_file_name(crd: dict[str, Any]) -> str:
    """`<group>_<plural>.yaml`, as controller-gen names them."""
    return f"{crd['spec']['group']}_{crd['spec']['names']['plural']}.yaml"
