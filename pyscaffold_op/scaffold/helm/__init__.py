"""`pyop create helm-chart`: a Helm chart in dist/chart/ made from the kustomize output of config/default.

kubebuilder's helm/v2-alpha plugin (`kubebuilder edit --plugins=helm/v2-alpha`), for pyop projects.
Every template is rewritten on each run, so CRDs, RBAC and webhooks from `make manifests` flow into the
chart; Chart.yaml, values.yaml, .helmignore and templates/_helpers.tpl are the user's once written and
are only rewritten with `force`. All files are planned first and written in one FilePlan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pyscaffold_op.errors import ProjectError, ValidationError
from pyscaffold_op.project import find_project_root, load_project
from pyscaffold_op.scaffold.transaction import FilePlan, apply

PRESERVED = ("Chart.yaml", "values.yaml", ".helmignore", "templates/_helpers.tpl")


@dataclass(frozen=True)
class HelmOptions:
    manifests: str | None = None
    """A file of kustomize output, "-" for stdin; None runs `kubectl kustomize config/default`."""
    output_dir: str = "dist"
    force: bool = False


@dataclass
class HelmResult:
    root: Path
    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    missing_values: list[str] = field(default_factory=list)
    """Values the templates read that a kept values.yaml lacks (dotted paths)."""


def create_helm_chart(options: HelmOptions, cwd: Path) -> HelmResult:
    from pyscaffold_op.scaffold.helm import files
    from pyscaffold_op.scaffold.helm.chart import build_chart
    from pyscaffold_op.scaffold.helm.manifests import name_prefix, optional_objects, read_manifests

    root = find_project_root(cwd)
    if root is None:
        raise ProjectError(f"no PROJECT file in {cwd} or above: run this in a project made by `pyop init`")
    project = load_project(root)
    chart_dir = _chart_dir(options.output_dir)
    objects, _source = read_manifests(root, options.manifests)
    prefix = name_prefix(root)
    namespace_guess = _first_namespace(objects)
    optional = optional_objects(root, namespace_guess, prefix) if namespace_guess else []
    chart = build_chart(objects, optional, prefix)

    plan = FilePlan(root)
    result = HelmResult(root=root)
    own = {
        "Chart.yaml": files.chart_yaml(project.project_name),
        "values.yaml": files.values_yaml(chart.values),
        ".helmignore": files.HELMIGNORE,
        "templates/_helpers.tpl": files.HELPERS,
    }
    for relpath, text in own.items():
        target = f"{chart_dir}/{relpath}"
        if (root / target).exists() and not options.force:
            result.kept.append(target)
            continue
        plan.write(target, text)
    plan.write(f"{chart_dir}/templates/NOTES.txt", files.notes(project.project_name, chart.deployment))
    for relpath, text in sorted(chart.templates.items()):
        plan.write(f"{chart_dir}/templates/{relpath}", text)
    kept_values = f"{chart_dir}/values.yaml"
    if kept_values in result.kept:
        result.missing_values = _missing(chart.values, _read_values(root / kept_values, kept_values))
    result.written = apply(plan)
    return result


def _chart_dir(output_dir: str) -> str:
    path = PurePosixPath(output_dir)
    if not output_dir or path.is_absolute() or ".." in path.parts or "\\" in output_dir:
        raise ValidationError(f"--output-dir {output_dir!r}: give a folder inside the project, e.g. dist")
    return str(path / "chart")


def _first_namespace(objects: list[dict[str, Any]]) -> str:
    for obj in objects:
        if obj.get("kind") == "Namespace":
            return str(obj.get("metadata", {}).get("name", ""))
    for obj in objects:
        namespace = obj.get("metadata", {}).get("namespace")
        if namespace:
            return str(namespace)
    return ""


def _read_values(path: Path, relpath: str) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        first = str(err).strip().splitlines()[0]
        raise ValidationError(f"{relpath} is not valid YAML: {first} (fix it, or use --force)") from err
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValidationError(f"{relpath} is not a mapping (fix it, or rewrite it with --force)")
    return data


def _missing(fresh: dict[str, Any], kept: dict[str, Any], prefix: str = "") -> list[str]:
    """Dotted paths of settings in `fresh` that `kept` lacks (the templates would read nil there).

    Sections and their settings only: what a user puts inside resources, labels... is theirs.
    """
    out: list[str] = []
    for key, value in fresh.items():
        path = f"{prefix}{key}"
        if key not in kept:
            out.append(path)
        elif (not prefix or path == "manager.image") and _both_dicts(value, kept[key]):
            out += _missing(value, kept[key], f"{path}.")
    return out


def _both_dicts(a: Any, b: Any) -> bool:
    return isinstance(a, dict) and isinstance(b, dict)
