"""The generated `__main__` ends a manager's errors with one log line and exit status 1, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN_SRC = Path(__file__).parents[2] / "testdata" / "project" / "src"

# Runs the golden project's main() with a manager whose start() fails as a real one would.
PROBE = """
import sys
sys.path.insert(0, {src!r})
import programming_kubernetes.__main__ as entry
from pyscaffold_op.runtime import {error}

class Failing:
    async def start(self):
        raise {error}("the probe's {error}")

import pyscaffold_op.runtime.manager.cmd as cmd
cmd.build_manager = lambda *args, **kwargs: Failing()
sys.exit(entry.main(["--log-format", "text"]))
"""


@pytest.mark.parametrize("error", ["LeaderElectionLost", "ShutdownTimeout"])
def test_a_manager_error_is_one_line_and_exit_1(error: str) -> None:
    # Before: LeaderElectionLost escaped asyncio.run as a traceback.
    run = subprocess.run(
        [sys.executable, "-c", PROBE.format(src=str(GOLDEN_SRC), error=error)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr
    errors = [line for line in run.stderr.splitlines() if " ERROR " in line]
    assert len(errors) == 1 and errors[0].endswith(f"the probe's {error}"), run.stderr
