"""Fixtures for the scaffolder tests: run the CLI in-process, snapshot folders, ready-made projects."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pyscaffold_op.cli import main

AT_INIT = ["init", "--domain", "viper.run", "--repo", "github.com/AbyssViper/programming-kubernetes"]
AT_INIT += ["--project-name", "programming-kubernetes"]  # else the folder's name, which tests vary
AT_API = ["create", "api", "--group", "programming-kubernetes", "--version", "v1alpha1", "--kind", "At"]
AT_API += ["--no-make"]
PACKAGE = "programming_kubernetes"


@dataclass
class Run:
    code: int
    out: str
    err: str


RunPyop = Callable[..., Run]


@pytest.fixture
def pyop(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> RunPyop:
    """`pyop(*args, cwd=folder)` runs the CLI in-process like the console script and returns its outcome."""

    def run(*args: str, cwd: Path) -> Run:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        try:
            main(list(args))
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


def snapshot(root: Path) -> dict[str, str]:
    """Every file and folder under `root`: relative path -> sha256 of the content ("dir" for folders)."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        out[rel] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def assert_one_line_error(run: Run, *fragments: str) -> None:
    assert run.code == 2, (run.code, run.out, run.err)
    lines = run.err.strip().splitlines()
    assert len(lines) == 1, run.err
    assert lines[0].startswith("error: "), run.err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.fixture(scope="session")
def _initialized_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pyscaffold_op.scaffold.init import InitOptions, init_project

    root = tmp_path_factory.mktemp("at-init") / "project"
    root.mkdir()
    init_project(InitOptions(domain="viper.run", repo="github.com/AbyssViper/programming-kubernetes"), root)
    return root


@pytest.fixture(scope="session")
def _api_template(tmp_path_factory: pytest.TempPathFactory, _initialized_template: Path) -> Path:
    from pyscaffold_op.dev.regen import AT_API as OPTIONS
    from pyscaffold_op.scaffold.api import create_api

    root = tmp_path_factory.mktemp("at-api") / "project"
    shutil.copytree(_initialized_template, root)
    create_api(OPTIONS, root)
    return root


@pytest.fixture
def initialized(tmp_path: Path, _initialized_template: Path) -> Path:
    """A fresh copy of `pyop init` for the at example."""
    root = tmp_path / "project"
    shutil.copytree(_initialized_template, root)
    return root


@pytest.fixture
def with_api(tmp_path: Path, _api_template: Path) -> Path:
    """A fresh copy of the at example after `pyop create api ... --kind At --no-make`."""
    root = tmp_path / "project-with-api"
    shutil.copytree(_api_template, root)
    return root


def run_project_tests(root: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A generated project's own test suite, in a subprocess (what its `make test` runs)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--log-level=DEBUG"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
