"""pyop ships `py.typed`, so its annotations are part of its API: mypy must accept the package, and the
at example (testdata/at, what the tutorial builds) as a user's code type-checked against it.

Both runs use the `[tool.mypy]` configuration of pyproject.toml (with the pydantic plugin). mypy's cache
(.mypy_cache at the repository root) makes reruns take a few seconds; a cold run takes about half a minute.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
AT_SRC = REPO_ROOT / "testdata" / "at" / "src"

pytestmark = pytest.mark.slow


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYPYPATH": str(AT_SRC)}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
    )


@pytest.mark.parametrize(
    "target",
    [
        pytest.param("pyscaffold_op", id="package"),
        pytest.param("testdata/at/src", id="at-example"),
        pytest.param("tests/data/typing", id="testing-helpers"),
        pytest.param("examples/kopf", id="kopf-examples"),
    ],
)
def test_mypy_is_clean(target: str) -> None:
    result = _mypy(target)
    assert result.returncode == 0, f"mypy {target}:\n{result.stdout}{result.stderr}"


def test_pyright_strict_reads_eventually_as_mypy_does() -> None:
    """A generated project type-checks with pyright in strict mode (`make typecheck`): `eventually`'s
    overloads must give it the same types (issue 35: `At | None` checks returned `At | None`)."""
    import shutil

    if shutil.which("node") is None:
        pytest.skip("node is not installed (pyright runs on it)")
    target = "tests/data/typing/eventually_types.py"
    result = subprocess.run(
        [sys.executable, "-m", "pyright", "--pythonpath", sys.executable, target],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"pyright {target}:\n{result.stdout}{result.stderr}"
    assert "0 errors" in result.stdout
