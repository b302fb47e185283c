"""Render and lint a chart folder with the real Helm (`make oracles` builds it into bin/).

`helm template` lays the chart out as an install would (values merged into values.yaml the way `-f`
merges them, every template but `_*.tpl` rendered, each document parsed by Helm as YAML); `helm lint
--strict` judges the chart and each set of values. Without a helm binary the caller is skipped with a
reason saying it is not installed (a failure on CI, tests/conftest.py).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from pyscaffold_op.dev.oracles import missing_reason, oracle_bin

SOURCE = "# Source: "


def helm() -> Path:
    """The helm binary, or skip the test ("helm is not installed")."""
    path = oracle_bin("helm")
    if path is None:
        pytest.skip(missing_reason("helm"))
    return path


def _run(args: list[str], overrides: dict[str, Any] | None) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="pyop-helm-") as tmp:
        home = Path(tmp)
        env = {
            **os.environ,
            "HELM_CACHE_HOME": str(home / "cache"),
            "HELM_CONFIG_HOME": str(home / "config"),
            "HELM_DATA_HOME": str(home / "data"),
        }
        if overrides:
            values = home / "overrides.yaml"
            values.write_text(yaml.safe_dump(overrides), encoding="utf-8")
            args = [*args, "--values", str(values)]
        return subprocess.run([str(helm()), *args], capture_output=True, text=True, check=False, env=env)


def render_chart(
    chart_dir: Path, overrides: dict[str, Any] | None = None, *, namespace: str, name: str = "release"
) -> dict[str, str]:
    """templates/<path> -> the text `helm template` renders for it (files that render empty are left out)."""
    run = _run(["template", name, str(chart_dir), "--namespace", namespace], overrides)
    assert run.returncode == 0, f"helm template failed:\n{run.stderr}"
    out: dict[str, str] = {}
    for document in run.stdout.split("\n---\n"):
        head, _, text = document.removeprefix("---\n").partition("\n")
        if not head.startswith(SOURCE):
            assert not document.strip(" -\n"), f"a document without a {SOURCE!r} line:\n{document}"
            continue
        path = head.removeprefix(SOURCE).split("/templates/", 1)[1]
        out[path] = out.get(path, "") + ("---\n" if path in out else "") + text
    return out


def lint_chart(chart_dir: Path, overrides: dict[str, Any] | None = None, *, namespace: str = "lint") -> str:
    """`helm lint --strict` of the chart with these values; its output, asserted free of errors."""
    run = _run(["lint", "--strict", str(chart_dir), "--namespace", namespace], overrides)
    assert run.returncode == 0, f"helm lint --strict failed:\n{run.stdout}{run.stderr}"
    assert "[ERROR]" not in run.stdout and "[WARNING]" not in run.stdout, run.stdout
    return run.stdout


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
