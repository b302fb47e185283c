"""The finished at operator in `testdata/at/`: untouched files stay scaffold output, its manifests are
reproducible, it lints clean, and its own test suite passes (run as its `make test` would)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pyscaffold_op.dev.golden_at import AT_DIR, GENERATED, HAND_FINISHED, drift

pytestmark = pytest.mark.skipif(not AT_DIR.is_dir(), reason="testdata/at is missing")


def test_only_the_listed_files_differ_from_a_fresh_scaffold() -> None:
    problems = drift()
    assert not problems, (
        "testdata/at drifted from scaffold output + its hand-finished files; review, then run "
        "`make testdata`:\n" + "\n".join(problems)
    )


def test_hand_finished_files_really_are_finished() -> None:
    project = AT_DIR.parent / "project"
    for relative in (*HAND_FINISHED, *GENERATED):
        scaffolded = project / relative  # absent: a file the example adds (its own e2e scenario)
        assert (AT_DIR / relative).is_file(), relative
        finished = (AT_DIR / relative).read_bytes()
        assert not scaffolded.exists() or finished != scaffolded.read_bytes(), relative


def test_make_manifests_reproduces_the_checked_in_crd_and_rbac(tmp_path: Path) -> None:
    from pyscaffold_op.gen import generate_manifests

    copy = tmp_path / "at"
    shutil.copytree(AT_DIR, copy)
    changed = generate_manifests(copy)
    assert changed == []
    for relative in GENERATED:
        assert (copy / relative).read_bytes() == (AT_DIR / relative).read_bytes()


def test_manifests_pass_the_offline_api_server_checks() -> None:
    from pyscaffold_op.gen import generate_manifests

    # structural-schema rules on the CRD, the sample against the CRD, nothing stale
    assert generate_manifests(AT_DIR, check=True) == []


def test_finished_project_is_ruff_clean() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "."],
        cwd=AT_DIR,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_the_at_operators_own_tests_pass() -> None:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--log-level=DEBUG",
            "--timeout=120",
        ],
        cwd=AT_DIR,
        capture_output=True,
        text=True,
        env=env,
        timeout=280,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert " passed" in result.stdout
