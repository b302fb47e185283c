"""kubebuilder judges pyop's checks of the external-kind flags (issue 38): `hack/pathcheck` (built into
`bin/`) runs kubebuilder v4.16.0's own `resource.Validate` on an external resource with each path, and
golang.org/x/mod's `module.CheckPath` on each Go module; pyop must accept exactly what they accept."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pyscaffold_op.scaffold import gopath

REPO = Path(__file__).resolve().parents[2]
JUDGE_SRC = REPO / "hack" / "pathcheck"
JUDGE_BIN = REPO / "bin" / "pathcheck"
GO = shutil.which("go")

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(GO is None, reason="go is not installed (the judge hack/pathcheck is a Go program)"),
]

PATHS = [
    "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1",
    "sigs.k8s.io/gateway-api/apis/v1",
    "k8s.io/api/core/v1",
    "gopkg.in/yaml.v3/x",
    "example.com/a+b/c~d/e_f",
    "Example.COM/Upper/v1",
    "github.com",
    "certmanager/v1",
    ".github.com/x",
    "-github.com/x",
    "github.com//x",
    "github.com/x/",
    "/github.com/x",
    "github.com/./x",
    "github.com/../x",
    "github.com/x./y",
    "github.com/.x/y",
    "github.com/x;y/z",
    "github.com/x y/z",
    "github.com/x/é",
    "github.com/x@v1/y",
    "github.com/con/y",
    "github.com/LPT1.txt/y",
    "github.com/git~1/y",
    "github.com/git~a/y",
    "github.com/x/v0",
    "",
]
MODULES = [
    "github.com/cert-manager/cert-manager",
    "github.com/cert-manager/cert-manager/v2",
    "github.com/cert-manager/cert-manager/v1",
    "github.com/cert-manager/cert-manager/v02",
    "github.com/cert-manager/cert-manager/v2.1",
    "github.com/x/v",
    "gopkg.in/yaml.v3",
    "gopkg.in/yaml.v0",
    "gopkg.in/yaml.v03",
    "gopkg.in/yaml",
    "gopkg.in/yaml.v2-unstable",
    "GitHub.com/x",
    "github_com/x",
    "example.com",
    "localhost/x",
    "github.com/.x",
    "github.com/x+y",
    "-x.com/y",
    "x.com/y;z",
]


@pytest.fixture(scope="module")
def judge() -> Path:
    """`bin/pathcheck`, rebuilt when its sources are newer."""
    sources = [JUDGE_SRC / name for name in ("main.go", "go.mod", "go.sum")]
    newest = max(path.stat().st_mtime for path in sources)
    if not JUDGE_BIN.is_file() or JUDGE_BIN.stat().st_mtime < newest:
        JUDGE_BIN.parent.mkdir(exist_ok=True)
        tmp = JUDGE_BIN.with_name(f"pathcheck.{os.getpid()}.tmp")
        assert GO is not None
        build = subprocess.run(
            [GO, "build", "-o", str(tmp), "."], cwd=JUDGE_SRC, capture_output=True, text=True, timeout=900
        )
        assert build.returncode == 0, build.stderr
        tmp.replace(JUDGE_BIN)
    return JUDGE_BIN


def verdicts(judge: Path, what: str, values: list[str]) -> list[str]:
    lines = "".join(f"{what}\t{value}\n" for value in values)
    out = subprocess.run([str(judge)], input=lines, capture_output=True, text=True, check=True, timeout=60)
    return out.stdout.splitlines()


def test_external_api_path_as_kubebuilder_validates_it(judge: Path) -> None:
    go = verdicts(judge, "path", PATHS)
    ours = [gopath.external_api_path_problem(path) for path in PATHS]
    disagree = [(p, g, o) for p, g, o in zip(PATHS, go, ours, strict=True) if (g == "ok") != (o is None)]
    assert disagree == []
    assert sum(g == "ok" for g in go) >= 5  # the table holds valid paths too


def test_go_module_path_as_x_mod_checks_it(judge: Path) -> None:
    go = verdicts(judge, "module", MODULES)
    ours = [gopath.module_path_problem(module) for module in MODULES]
    disagree = [(m, g, o) for m, g, o in zip(MODULES, go, ours, strict=True) if (g == "ok") != (o is None)]
    assert disagree == []
    assert sum(g == "ok" for g in go) >= 5
