"""kubebuilder's reference projects replayed through pyop (issue 27): every command of
`test/testdata/generate.sh` at the pinned kubebuilder (project-v4, project-v4-multigroup,
project-v4-with-plugins), given to `pyop` as kubebuilder takes it, exits 0; the `make` targets the
script runs are run too (`make all`: manifests, ruff, pyright strict, the project's own tests;
`make build-installer`: dist/install.yaml), and a Helm chart the script asks for passes `helm lint`.

The command lists are read from the script (kubebuilder_testdata.py), so the test follows kubebuilder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pyscaffold_op.dev.oracles import REPO_ROOT, oracle_bin

from .conftest import RunPyop
from .kubebuilder_testdata import Step, generate_sh, projects, steps

pytestmark = [pytest.mark.slow]

TEXT = generate_sh()
PROJECTS = sorted(projects(TEXT)) if TEXT else []


def _make_env() -> dict[str, str]:
    """The generated project's make, with this checkout's pyop (and its pytest plugin) importable."""
    path = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "PYTHON": sys.executable}


def _make(root: Path, step: Step) -> None:
    run = subprocess.run(
        ["make", *step.args], cwd=root, env=_make_env(), capture_output=True, text=True, timeout=900
    )
    assert run.returncode == 0, (
        f"make {step.line()} in {root.name}:\n{run.stdout[-4000:]}\n{run.stderr[-3000:]}"
    )


def test_the_script_is_read() -> None:
    if TEXT is None:
        pytest.skip("go is not installed or cannot fetch kubebuilder's module (generate.sh)")
    assert PROJECTS == ["project-v4", "project-v4-multigroup", "project-v4-with-plugins"]
    lines = {step.line() for name in PROJECTS for step in steps(TEXT, name)}
    assert sum("--ssa" in line for line in lines) == 2  # server-side apply controllers, replayed too
    assert "edit --plugins=grafana.kubebuilder.io/v1-alpha" in lines


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed (make build-installer)")
@pytest.mark.parametrize("name", PROJECTS or ["(generate.sh not found)"])
def test_pyop_replays_kubebuilders_reference_project(pyop: RunPyop, tmp_path: Path, name: str) -> None:
    if TEXT is None:
        pytest.skip("go is not installed or cannot fetch kubebuilder's module (generate.sh)")
    root = tmp_path / name  # the folder names the project, as in kubebuilder's testdata/
    root.mkdir()
    for step in steps(TEXT, name):
        if step.tool == "make":
            _make(root, step)
            continue
        run = pyop(*step.args, cwd=root)
        assert run.code == 0, f"pyop {step.line()}: exit {run.code}\n{run.out}\n{run.err}"
    project = yaml.safe_load((root / "PROJECT").read_text())
    assert project["projectName"] == name
    installer = yaml.safe_load_all((root / "dist/install.yaml").read_text())
    assert any(doc and doc["kind"] == "Deployment" for doc in installer)
    if (root / "dist/chart").is_dir():
        helm = oracle_bin("helm")
        if helm is not None:
            lint = subprocess.run([str(helm), "lint", "dist/chart"], cwd=root, capture_output=True, text=True)
            assert lint.returncode == 0, lint.stdout + lint.stderr
