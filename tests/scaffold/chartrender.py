"""Render a chart folder with tests/scaffold/gotemplate.py, the way `helm template` lays it out."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from .gotemplate import Renderer


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Helm's values merge: maps merge key by key, anything else replaces."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def render_chart(
    chart_dir: Path, overrides: dict[str, Any] | None = None, *, namespace: str, name: str = "release"
) -> dict[str, str]:
    """templates/<path> -> rendered text, for every template (not _*.tpl, as Helm does)."""
    values = merge(yaml.safe_load((chart_dir / "values.yaml").read_text()) or {}, overrides or {})
    chart = yaml.safe_load((chart_dir / "Chart.yaml").read_text())
    renderer = Renderer(values, chart, {"Name": name, "Namespace": namespace})
    templates = chart_dir / "templates"
    for helper in sorted(templates.rglob("_*.tpl")):
        renderer.load_helpers(helper.read_text())
    out: dict[str, str] = {}
    for path in sorted(templates.rglob("*.yaml")):
        out[path.relative_to(templates).as_posix()] = renderer.render(path.read_text())
    return out


def objects(rendered: dict[str, str]) -> list[dict[str, Any]]:
    """Every object of the rendered files; each document must parse as YAML."""
    out: list[dict[str, Any]] = []
    for path, text in rendered.items():
        try:
            docs = [doc for doc in yaml.safe_load_all(text) if doc is not None]
        except yaml.YAMLError as err:
            raise AssertionError(f"{path} renders invalid YAML: {err}\n{text}") from err
        for doc in docs:
            assert isinstance(doc, dict) and "kind" in doc, (path, doc)
            out.append(doc)
    return out


def by_key(items: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    keyed = {(obj["kind"], obj["metadata"]["name"]): obj for obj in items}
    assert len(keyed) == len(items), "two objects share a kind and name"
    return keyed
