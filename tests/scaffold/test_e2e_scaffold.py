"""`make test-e2e` of generated projects, run as a user runs it: the manager as `make run` starts it,
against `make envtest` (the emulator), the real kube-apiserver + etcd (`ENVTEST=real`) and, for the at
example, a cluster of real processes (`ENVTEST=cluster`: kwok runs its Pod).

The at example (testdata/at: the scaffold's e2e tests plus its own PENDING -> RUNNING -> DONE one), the
CronJob tutorial's port (testdata/cronjob: two versions, their webhooks and the conversion) and a
fresh scaffold with defaulting and validating webhooks, whose samples must reach the webhook server
through the API server (the webhook request counters of the manager's /metrics say so).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pyscaffold_op.dev.oracles import missing_reason, oracle_bin
from pyscaffold_op.dev.regen import REPO_ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(900),
    pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed"),
]

APISERVER = oracle_bin("kube-apiserver")
SERVERS = [
    pytest.param("emulator", id="emulator"),
    pytest.param(
        "real",
        id="real",
        marks=[
            pytest.mark.oracle,
            pytest.mark.skipif(
                APISERVER is None or oracle_bin("etcd") is None, reason=missing_reason("kube-apiserver")
            ),
        ],
    ),
]

CLUSTER_BINARIES = ("kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler", "kwok")
WITH_CLUSTER = [
    *SERVERS,
    pytest.param(
        "cluster",
        id="cluster",
        marks=[
            pytest.mark.oracle,
            pytest.mark.skipif(
                any(oracle_bin(b) is None for b in CLUSTER_BINARIES), reason=missing_reason("kwok")
            ),
        ],
    ),
]


def make_test_e2e(root: Path, server: str) -> subprocess.CompletedProcess[str]:
    """`make test-e2e`, its temporary files (the servers', the manager's certificates) under root/tmp."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYOP_ENVTEST", "USE_EXISTING_CLUSTER")}
    (root / "tmp").mkdir()
    env["TMPDIR"] = str(root / "tmp")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    if APISERVER is not None:
        env["PYOP_ENVTEST_ASSETS"] = str(APISERVER.parent)
    return subprocess.run(
        [
            "make", "test-e2e", f"ENVTEST={server}",
            f"PYTHON={sys.executable}", f"PYOP={sys.executable} -m pyscaffold_op",
        ],
        cwd=root, capture_output=True, text=True, timeout=800, env=env,
    )  # fmt: skip


@pytest.mark.parametrize("server", WITH_CLUSTER)
def test_the_at_example_passes_make_test_e2e(tmp_path: Path, server: str) -> None:
    root = tmp_path / "at"
    shutil.copytree(REPO_ROOT / "testdata" / "at", root, ignore=shutil.ignore_patterns("wheels", ".venv"))
    run = make_test_e2e(root, server)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 passed" in run.stdout, run.stdout
    header = "envtest: emulator" if server == "emulator" else "envtest: kube-apiserver v"  # real, cluster
    assert header in run.stdout
    # the suite stopped what it started: the manager's and the server's folders are gone
    assert not list((root / "tmp").glob("pyop-*")), list((root / "tmp").iterdir())


@pytest.mark.parametrize("server", WITH_CLUSTER)
def test_the_cronjob_tutorial_passes_make_test_e2e(tmp_path: Path, server: str) -> None:
    """Issue 35's failure class: both versions' samples are created through the API server, which calls
    the manager's webhooks (v1's and v2's, and /convert to store a v2 object as v1), and reconciled."""
    root = tmp_path / "cronjob"
    ignore = shutil.ignore_patterns("wheels", ".venv")
    shutil.copytree(REPO_ROOT / "testdata" / "cronjob", root, ignore=ignore)
    run = make_test_e2e(root, server)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 passed" in run.stdout, run.stdout
    assert not list((root / "tmp").glob("pyop-*")), list((root / "tmp").iterdir())


@pytest.mark.parametrize("server", SERVERS)
def test_a_scaffold_with_webhooks_passes_make_test_e2e(tmp_path: Path, server: str) -> None:
    root = tmp_path / "demo"
    root.mkdir()
    pyop = [sys.executable, "-m", "pyscaffold_op"]
    for args in (
        ["init", "--domain", "example.com", "--repo", "example.com/demo"],
        ["create", "api", "--group", "crew", "--version", "v1", "--kind", "Captain",
         "--resource", "--controller"],
        ["create", "webhook", "--group", "crew", "--version", "v1", "--kind", "Captain", "--defaulting",
         "--programmatic-validation"],
    ):  # fmt: skip
        done = subprocess.run([*pyop, *args], cwd=root, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    run = make_test_e2e(root, server)
    assert run.returncode == 0, run.stdout + run.stderr
    # the manager runs, its metrics filter answers 401/403/200, and the sample went through both webhooks
    assert "3 passed" in run.stdout, run.stdout


def test_a_fresh_project_passes_make_test_e2e(tmp_path: Path) -> None:
    """Before any `create api`: no CRD folder (make envtest once refused to start without one), no
    sample; the manager still runs and serves its metrics."""
    root = tmp_path / "fresh"
    root.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "pyscaffold_op", "init", "--domain", "example.com",
         "--repo", "example.com/fresh"],
        cwd=root, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run = make_test_e2e(root, "emulator")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed, 1 skipped" in run.stdout, run.stdout


def test_make_test_leaves_the_e2e_tests_to_make_test_e2e(tmp_path: Path) -> None:
    root = tmp_path / "at"
    shutil.copytree(REPO_ROOT / "testdata" / "at", root, ignore=shutil.ignore_patterns("wheels", ".venv"))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=root, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tests/e2e" not in done.stdout and "deselected" in done.stdout
