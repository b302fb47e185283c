"""kubebuilder's CronJob tutorial ported to pyop, `testdata/cronjob/`: the files it did not finish by hand
stay scaffold output, its manifests are reproducible and pass the API server's offline checks, it lints
clean, and its own test suite passes (as its `make test` runs it, on the emulator).
`tests/scaffold/test_e2e_scaffold.py` runs its `make test-e2e` (the manager as `make run` starts it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from pyscaffold_op.dev.golden_cronjob import CRONJOB, CRONJOB_DIR, GENERATED, HAND_FINISHED

pytestmark = pytest.mark.skipif(not CRONJOB_DIR.is_dir(), reason="testdata/cronjob is missing")


def test_only_the_listed_files_differ_from_a_fresh_scaffold() -> None:
    problems = CRONJOB.drift()
    assert not problems, (
        "testdata/cronjob drifted from scaffold output + its hand-finished files; review, then run "
        "`make testdata`:\n" + "\n".join(problems)
    )


def test_hand_finished_files_really_are_finished(tmp_path: Path) -> None:
    scaffold = tmp_path / "cronjob"
    CRONJOB.scaffold(scaffold)
    for relative in HAND_FINISHED:
        scaffolded = scaffold / relative  # absent: a file the port adds (the cron parser, a test)
        finished = (CRONJOB_DIR / relative).read_bytes()
        assert not scaffolded.exists() or finished != scaffolded.read_bytes(), relative


def test_make_manifests_reproduces_the_checked_in_crd_and_rbac(tmp_path: Path) -> None:
    from pyscaffold_op.gen import generate_manifests

    copy = tmp_path / "cronjob"
    shutil.copytree(CRONJOB_DIR, copy)
    assert generate_manifests(copy) == []
    for relative in GENERATED:
        assert (copy / relative).read_bytes() == (CRONJOB_DIR / relative).read_bytes()


def test_manifests_pass_the_offline_api_server_checks() -> None:
    from pyscaffold_op.gen import generate_manifests

    # structural-schema rules on the CRD, both samples against their versions' schemas, nothing stale
    assert generate_manifests(CRONJOB_DIR, check=True) == []


def test_the_port_is_ruff_clean() -> None:
    for args in (["check"], ["format", "--check"]):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *args, "--no-cache", "."],
            cwd=CRONJOB_DIR,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr


def test_the_ports_own_tests_pass() -> None:
    """Its `make test`: the controller (Jobs on schedule, concurrency policy, history limits, status,
    starting deadline), both versions' webhooks and the conversion, on the emulator."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYOP_ENVTEST", None)  # the emulator: the real server's run is the oracle-marked e2e
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "cronjob"  # its tests write nothing, but a crash must not litter testdata
        shutil.copytree(CRONJOB_DIR, copy, ignore=shutil.ignore_patterns("wheels", ".venv"))
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--timeout=120"],
            cwd=copy,
            capture_output=True,
            text=True,
            env=env,
            timeout=280,
            check=False,
        )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert " passed" in result.stdout and "deselected" in result.stdout  # tests/e2e is test-e2e's
