"""`pyop create api --daemon/--timer` (issue 39): the controller gets a per-object daemon and timer on
the runtime's builder.daemon/timer (kopf's @kopf.daemon/@kopf.timer), with tests that pass on the
emulator; the flags' rules; and nothing changes without them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import PACKAGE, RunPyop, assert_one_line_error

REPO_ROOT = Path(__file__).resolve().parents[2]


def navigator(*extra: str) -> list[str]:
    return ["create", "api", "--group", "crew", "--version", "v1", "--kind", "Navigator", "--no-make", *extra]


def test_the_flags_add_a_daemon_and_a_timer_to_the_controller(pyop: RunPyop, initialized: Path) -> None:
    assert pyop(*navigator("--daemon", "--timer"), cwd=initialized).code == 0
    controller = (initialized / f"src/{PACKAGE}/controllers/navigator_controller.py").read_text()
    assert "async def watch(self, ctx: DaemonContext) -> None:" in controller
    assert "async def tick(self, ctx: DaemonContext) -> None:" in controller
    assert "builder.daemon(self.watch)" in controller
    assert "builder.timer(self.tick, interval=TIMER_INTERVAL, idle=TIMER_IDLE)" in controller
    assert pyop(*navigator("--kind", "Pilot"), cwd=initialized).code == 0
    plain = (initialized / f"src/{PACKAGE}/controllers/pilot_controller.py").read_text()
    assert "DaemonContext" not in plain and '.named("pilot").complete(self)' in plain


def test_the_flags_rules(pyop: RunPyop, initialized: Path) -> None:
    run = pyop(*navigator("--daemon", "--controller=false"), cwd=initialized)
    assert_one_line_error(run, "--daemon adds to the controller: it needs --controller")
    run = pyop(
        *navigator("--timer", "--image", "memcached:1.6", "--plugins", "deploy-image/v1-alpha"),
        cwd=initialized,
    )
    assert_one_line_error(run, "--timer and --image")
    run = pyop(*navigator("--daemon", "--kind", "DaemonContext"), cwd=initialized)
    assert_one_line_error(run, "'DaemonContext'", "with --daemon")
    run = pyop(
        "create", "api", "--group", "apps", "--version", "v1", "--kind", "Deployment", "--resource=false",
        "--daemon", "--no-make", cwd=initialized,
    )  # fmt: skip
    assert_one_line_error(run, "--daemon and --timer scaffold for this project's own kinds")


def test_the_scaffolded_daemon_and_timer_tests_pass(pyop: RunPyop, initialized: Path) -> None:
    """On the emulator: the daemon starts with the object and stops when it is deleted; the timer
    waits for the object to be quiet, then ticks on its interval (a FakeClock moves the time)."""
    for args in (
        navigator("--daemon", "--timer"),
        navigator("--timer", "--kind", "Harbor", "--cluster-scoped"),
    ):
        assert pyop(*args, cwd=initialized).code == 0, args
    generated = subprocess.run(
        [sys.executable, "-m", "pyscaffold_op", "generate", "manifests"],
        cwd=initialized,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert generated.returncode == 0, generated.stderr
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "tests"],
        cwd=initialized,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": f"{REPO_ROOT}:{initialized / 'src'}", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    for test in (
        "test_the_daemon_runs_while_the_navigator_exists",
        "test_the_timer_ticks_once_the_navigator_is_quiet",
        "test_the_timer_ticks_once_the_harbor_is_quiet",
    ):
        assert f"{test} PASSED" in run.stdout, run.stdout
