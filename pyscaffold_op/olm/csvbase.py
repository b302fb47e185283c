"""`pyop generate kustomize manifests`: the CSV base in config/manifests/bases, filled from the project.

Owned CRDs come from the project's kinds (name, version, kind, the class docstring as description) and
their `+operator-sdk:csv:customresourcedefinitions:` markers (displayName, resources, spec and status
descriptors). Everything else in the base is the user's and kept: the markers decide only what they
name; a description, displayName, resources list or descriptor written by hand stays when no marker
says otherwise (operator-sdk overwrites them, a complaint of its users).
"""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path
from typing import Any

from pyscaffold_op import yamlio
from pyscaffold_op.olm.markers import ClassCsvMarkers, CsvMarker, class_csv_markers

MANIFESTS_DIR = Path("config/manifests")


def base_path(project_name: str) -> Path:
    return MANIFESTS_DIR / "bases" / f"{project_name}.clusterserviceversion.yaml"


def default_base(project_name: str, namespaced: bool) -> dict[str, Any]:
    """The base `pyop init` writes (templates/init: config/manifests/bases)."""
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {
            "annotations": {"alm-examples": "[]", "capabilities": "Basic Install"},
            "name": f"{project_name}.v0.0.0",
            "namespace": "placeholder",
        },
        "spec": {
            "apiservicedefinitions": {},
            "customresourcedefinitions": {},
            "description": f"{project_name} description. TODO.",
            "displayName": project_name,
            "icon": [{"base64data": "", "mediatype": ""}],
            "install": {"spec": {"deployments": []}, "strategy": ""},
            "installModes": [
                {"supported": namespaced, "type": "OwnNamespace"},
                {"supported": False, "type": "SingleNamespace"},
                {"supported": False, "type": "MultiNamespace"},
                {"supported": not namespaced, "type": "AllNamespaces"},
            ],
            "keywords": [project_name],
            "links": [{"name": project_name, "url": f"https://{project_name}.domain"}],
            "maintainers": [{"email": "your@email.com", "name": "Maintainer Name"}],
            "maturity": "alpha",
            "provider": {"name": "Provider Name", "url": "https://your.domain"},
            "version": "0.0.0",
        },
    }


def words(name: str) -> str:
    """`CronJob` -> `Cron Job`, `podName` -> `Pod Name` (operator-sdk's default display names)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return spaced[:1].upper() + spaced[1:]


def _doc(text: str | None) -> str:
    if not text:
        return ""
    first = text.strip().split("\n\n", 1)[0]
    return " ".join(first.split())


def _models_in(annotation: Any) -> list[type]:
    """The pydantic models directly in a field's type (`X`, `X | None`, `Annotated[X, ...]`); lists and
    maps are not entered (their descriptors would need index paths)."""
    from pydantic import BaseModel

    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _models_in(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return []


def descriptors(
    model: type, which: str, prefix: str = "", seen: frozenset[type] = frozenset()
) -> list[dict[str, Any]]:
    """The descriptors the markers of `model`'s fields (and of models nested in them) declare."""
    if model in seen:
        return []
    markers: ClassCsvMarkers = class_csv_markers(model)
    out: list[tuple[int, int, dict[str, Any]]] = []
    for index, (name, info) in enumerate(getattr(model, "model_fields", {}).items()):
        alias = info.serialization_alias or info.alias or name
        path = prefix + alias
        marker: CsvMarker
        for marker in markers.fields.get(name, []):
            if marker.args.get("type", which) != which:
                continue
            entry: dict[str, Any] = {"path": path}
            entry["displayName"] = marker.args.get("displayName") or words(alias)
            description = marker.args.get("description") or _doc(markers.docs.get(name))
            if description:
                entry["description"] = description
            if marker.args.get("xDescriptors"):
                entry["x-descriptors"] = [str(x) for x in marker.args["xDescriptors"]]
            out.append((marker.args.get("order", 0), index, entry))
        for nested in _models_in(info.annotation):
            out += [(0, index, d) for d in descriptors(nested, which, path + ".", seen | {model})]
    out.sort(key=lambda item: (item[0], item[1]))
    return [entry for _, _, entry in out]


def owned_entry(kind: type) -> tuple[dict[str, Any], set[str]]:
    """The owned-CRD description of a kind, and the keys its markers set (those win over the base)."""
    group, version, kind_name = kind.gvk  # type: ignore[attr-defined]
    markers = class_csv_markers(kind)
    args: dict[str, Any] = {}
    for marker in markers.kind:
        args.update(marker.args)
    entry: dict[str, Any] = {
        "name": f"{kind.plural}.{group}",  # type: ignore[attr-defined]
        "version": version,
        "kind": kind_name,
        "displayName": args.get("displayName") or words(kind_name),
    }
    description = args.get("description") or _doc(kind.__doc__)
    if description:
        entry["description"] = description
    decided: set[str] = {k for k in ("displayName", "description") if k in args}
    if "resources" in args:
        resources = []
        for item in args["resources"]:
            parts = [str(p) for p in (item if isinstance(item, list) else [item])]
            if len(parts) != 3:
                from pyscaffold_op.errors import GenerateError

                raise GenerateError(f"{kind_name}: resources entries are {{Kind,version,name}}, not {item!r}")
            resources.append({"kind": parts[0], "version": parts[1], "name": parts[2]})
        entry["resources"] = resources
        decided.add("resources")
    fields = getattr(kind, "model_fields", {})
    for which, key in (("spec", "specDescriptors"), ("status", "statusDescriptors")):
        info = fields.get(which)
        found = [
            d for model in (_models_in(info.annotation) if info else []) for d in descriptors(model, which)
        ]
        if found:
            entry[key] = found
    return entry, decided


def merge_owned(
    old: list[dict[str, Any]], kinds: list[type], project_groups: set[str]
) -> list[dict[str, Any]]:
    """The project's kinds' entries merged into the base's: hand-written values and descriptors stay
    unless a marker names them; entries of the project's groups whose kind is gone are dropped."""
    by_key = {(e.get("name"), e.get("version")): e for e in old if isinstance(e, dict)}
    out: list[dict[str, Any]] = []
    made = set()
    for kind in kinds:
        entry, decided = owned_entry(kind)
        key = (entry["name"], entry["version"])
        made.add(key)
        before = by_key.get(key, {})
        merged = dict(before)
        for k, v in entry.items():
            if k in ("specDescriptors", "statusDescriptors"):
                paths = {d["path"] for d in v}
                merged[k] = v + [d for d in before.get(k) or [] if d.get("path") not in paths]
            elif k in ("name", "version", "kind") or k in decided or k not in before:
                merged[k] = v
        out.append(merged)
    for key, entry in by_key.items():
        name = str(key[0] or "")
        if key not in made and name.partition(".")[2] not in project_groups:
            out.append(entry)
    return out


def render_base(root: Path) -> tuple[Path, str]:
    """The base's path and its new text."""
    from pyscaffold_op.gen.loader import load_kinds, project_imports
    from pyscaffold_op.olm import markers
    from pyscaffold_op.project import load_project

    project = load_project(root)
    path = root / base_path(project.project_name)
    if path.is_file():
        import yaml

        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if not isinstance(doc, dict) or doc.get("kind") != "ClusterServiceVersion":
            from pyscaffold_op.errors import GenerateError

            raise GenerateError(f"{path}: not a ClusterServiceVersion")
    else:
        doc = default_base(project.project_name, bool(project.namespaced))
    markers.clear()
    with project_imports(root, project.package):
        kinds = load_kinds(project, root)
        groups = {r.qualified_group() for r in project.resources if r.api is not None}
        spec = doc.setdefault("spec", {})
        crds = spec.get("customresourcedefinitions") or {}
        owned = merge_owned(list(crds.get("owned") or []), kinds, groups)
    if owned:
        crds["owned"] = owned
    else:
        crds.pop("owned", None)
    spec["customresourcedefinitions"] = crds
    return path, yamlio.dump(doc)


def generate_kustomize_manifests(root: Path, *, check: bool = False) -> list[Path]:
    """Write (or, with check, compare) the CSV base; the changed paths."""
    path, text = render_base(root)
    return [path] if yamlio.write_if_changed(path, text, check=check) else []
