"""Go's YAML judges every file pyop writes: scaffolded with names YAML readers take for something else.

`hack/yamlcheck` (built once into `bin/`) reads each file as Kubernetes tools do (sigs.k8s.io/yaml, which
kubectl, Helm and kubebuilder use, and go-yaml v3) and prints it as JSON; every document must read there
as Python reads it (PyYAML's YAML 1.1 and ruamel's YAML 1.2 agree on it too). Project `y` used to give
`app.kubernetes.io/name: y`, which Go reads as `true`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from ruamel.yaml import YAML

from pyscaffold_op.dev.oracles import oracle_bin

from .chartrender import render_chart
from .conftest import RunPyop

REPO = Path(__file__).resolve().parents[2]
JUDGE_SRC = REPO / "hack" / "yamlcheck"
JUDGE_BIN = REPO / "bin" / "yamlcheck"
GO = shutil.which("go")
KUBECTL = shutil.which("kubectl")

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(
        GO is None, reason="go is not installed (the YAML judge hack/yamlcheck is a Go program)"
    ),
]

# plain, each of these is no string to some YAML reader: Go's bool, int, float, null or timestamp
WEBHOOK_FLAGS = ("--defaulting", "--programmatic-validation", "--no-make")
AWKWARD = ["y", "no", "123", "1e3", "on", "0x10", "2001-12-14"]


@pytest.fixture(scope="module")
def judge() -> Path:
    """`bin/yamlcheck`, rebuilt when its sources are newer."""
    sources = [JUDGE_SRC / name for name in ("main.go", "go.mod", "go.sum")]
    newest = max(path.stat().st_mtime for path in sources)
    if not JUDGE_BIN.is_file() or JUDGE_BIN.stat().st_mtime < newest:
        JUDGE_BIN.parent.mkdir(exist_ok=True)
        tmp = JUDGE_BIN.with_name(f"yamlcheck.{os.getpid()}.tmp")
        assert GO is not None
        build = subprocess.run(
            [GO, "build", "-o", str(tmp), "."], cwd=JUDGE_SRC, capture_output=True, text=True, timeout=600
        )
        assert build.returncode == 0, build.stderr
        tmp.replace(JUDGE_BIN)
    return JUDGE_BIN


def go_reads(judge: Path, paths: list[Path]) -> dict[str, dict[str, list[Any]]]:
    out = subprocess.run(
        [str(judge), *map(str, paths)], capture_output=True, text=True, check=True, timeout=120
    )
    result: dict[str, dict[str, list[Any]]] = json.loads(out.stdout)
    return result


def python_reads(path: Path) -> dict[str, list[Any]]:
    """The file's documents as YAML 1.1 (PyYAML) and YAML 1.2 (ruamel) read them, as JSON values
    (a date shows as its repr: never equal to a reading in Go)."""
    text = path.read_text(encoding="utf-8")
    yaml11 = [doc for doc in yaml.safe_load_all(text) if doc is not None]
    yaml12 = [doc for doc in YAML(typ="safe", pure=True).load_all(text) if doc is not None]
    return {
        name: json.loads(json.dumps(docs, default=repr)) for name, docs in (("1.2", yaml12), ("1.1", yaml11))
    }


def yaml_files(root: Path) -> list[Path]:
    """Every YAML file of the tree but .github's workflows: GitHub reads those (`on:` is a string to
    its parser, and the form GitHub documents and kubebuilder scaffolds), and Helm's templates."""
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file()
        and (path.suffix in {".yaml", ".yml"} or path.name == "PROJECT")
        and "templates" not in path.relative_to(root).parts  # Helm templates: judged once rendered
        and not {".venv", "__pycache__", ".github"} & set(path.relative_to(root).parts)
    )


def verdict(problems: list[str]) -> None:
    assert not problems, "\n".join(problems)


def judge_tree(judge: Path, files: list[Path]) -> list[str]:
    """Each document Go reads differently from Python, as a line."""
    readings = go_reads(judge, files)
    problems = []
    for path in files:
        python = python_reads(path)
        intended = python["1.2"]  # PROJECT's reading (`yaml12`), and pyop's intent everywhere
        for reader, docs in [("yaml 1.1", python["1.1"]), *readings[str(path)].items()]:
            if docs != intended:
                for index, (go, py) in enumerate(zip(docs, intended, strict=False)):
                    if go != py:
                        problems.append(f"{path} document {index} ({reader}): Go {go!r}, Python {py!r}")
                if len(docs) != len(intended):
                    problems.append(f"{path} ({reader}): {len(docs)} documents, Python {len(intended)}")
    return problems


def scaffold(pyop: RunPyop, root: Path, name: str, *, full: bool) -> None:
    root.mkdir()
    package = name if name.isidentifier() else "op"  # the repo's last element names a Python package
    steps = [
        [
            "init",
            "--domain",
            "on.example.com",
            "--repo",
            f"github.com/example/{package}",
            "--project-name",
            name,
        ],
        ["create", "api", "--group", "yes", "--version", "v1", "--kind", "Y", "--no-make"],
    ]
    if full:
        steps[0] += ["--owner", "~", "--multigroup"]
        steps += [
            ["create", "api", "--group", "no", "--version", "v1", "--kind", "On", "--no-make"],
            ["create", "webhook", "--group", "yes", "--version", "v1", "--kind", "Y", *WEBHOOK_FLAGS],
        ]
    steps.append(["generate", "manifests"])
    if full and KUBECTL is not None:
        steps.append(["create", "helm-chart"])
    for step in steps:
        run = pyop(*step, cwd=root)
        assert run.code == 0, (step, run.err)


def test_the_judge_reads_as_go_does(judge: Path, tmp_path: Path) -> None:
    sample = tmp_path / "s.yaml"
    sample.write_text("a: y\nb: 'y'\nc: 2001-12-14\nd: 017\ny: 1\n---\n- 1e3\n")
    readings = go_reads(judge, [sample])[str(sample)]
    assert readings["k8s"] == [{"a": True, "b": "y", "c": "2001-12-14", "d": 15, "true": 1}, [1000]]
    assert readings["v3"][0]["c"] == "2001-12-14T00:00:00Z"  # v3: a time


def test_every_file_of_a_project_named_y_reads_the_same_in_go(
    judge: Path, pyop: RunPyop, tmp_path: Path
) -> None:
    """Project `y`, package `y`, domain `on.example.com`, groups `yes` and `no`, owner `~`, a webhook,
    the manifests, the Helm chart rendered by helm with default values (release `y`, namespace `no`)."""
    root = tmp_path / "y"
    scaffold(pyop, root, "y", full=True)
    files = yaml_files(root)
    assert {"PROJECT", ".copier-answers.yml", "config/samples/yes_v1_y.yaml"} <= {
        path.relative_to(root).as_posix() for path in files
    }
    chart = root / "dist" / "chart"
    if KUBECTL is not None and oracle_bin("helm") is not None:
        rendered = tmp_path / "rendered"
        for relpath, text in render_chart(chart, namespace="no", name="y").items():
            target = rendered / relpath
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            files.append(target)
    verdict(judge_tree(judge, files))


@pytest.mark.parametrize("name", AWKWARD)
def test_init_and_create_api_read_the_same_in_go(
    judge: Path, pyop: RunPyop, tmp_path: Path, name: str
) -> None:
    root = tmp_path / "p"
    scaffold(pyop, root, name, full=False)
    verdict(judge_tree(judge, yaml_files(root)))
