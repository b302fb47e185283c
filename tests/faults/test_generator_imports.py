"""Issue 28 item 10: a types module that calls sys.exit(0) at import time is an error naming it (not an
exit 0 over stale manifests), and one whose import never returns is named by the watchdog after
$PYOP_IMPORT_TIMEOUT seconds (1 here; 60 by default) with exit status 2."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pyscaffold_op.gen.loader import IMPORT_TIMEOUT, IMPORT_TIMEOUT_ENV, ImportWatchdog, import_timeout
from tests.faults.test_generators import HEADER, project, run, snapshot

REPO = Path(__file__).parents[2]


def line_of(root: Path, text: str) -> int:
    source = (root / "src/demo/api/v1/thing_types.py").read_text().splitlines()
    return source.index(text) + 1


@pytest.mark.parametrize(("call", "shown"), [("sys.exit(0)", "sys.exit(0)"), ("sys.exit()", "sys.exit()")])
def test_sys_exit_at_import_is_an_error_naming_the_module(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, call: str, shown: str
) -> None:
    root = project(tmp_path, HEADER + "    size: int = 0\n\nimport sys\n\n" + call + "\n")
    before = snapshot(root)
    monkeypatch.chdir(root)
    line = run(["generate", "manifests"], capsys)
    assert line.startswith(f"error: importing demo.api.v1.thing_types called {shown} (at ")
    assert line.endswith(f"thing_types.py:{line_of(root, call)})")
    assert snapshot(root) == before


def test_an_import_that_never_returns_is_named(tmp_path: Path) -> None:
    root = project(tmp_path, HEADER + "    size: int = 0\n\nimport time\n\ntime.sleep(3600)\n")
    before = snapshot(root)
    env = {**os.environ, IMPORT_TIMEOUT_ENV: "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "pyscaffold_op", "generate", "manifests"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: importing demo.api.v1.thing_types did not return in 1s (waiting at ")
    assert f"thing_types.py:{line_of(root, 'time.sleep(3600)')})" in lines[0]
    assert IMPORT_TIMEOUT_ENV in lines[0]
    assert snapshot(root) == before


def test_the_watchdog_fires_only_on_a_long_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fired: list[tuple[str, str | None]] = []
    event = threading.Event()

    def expiry(module: str, where: str | None) -> None:
        fired.append((module, where))
        event.set()

    with ImportWatchdog(0.05, tmp_path, expiry) as dog:
        dog.importing("quick")
        dog.importing(None)  # returned in time: nothing
        dog.importing("slow")
        assert event.wait(30)
    assert fired == [("slow", None)]
    with ImportWatchdog(3600, tmp_path, expiry) as dog:  # leaving stops the thread
        dog.importing("x")
    dog._thread.join(30)
    assert not dog._thread.is_alive()

    assert IMPORT_TIMEOUT == 60.0
    monkeypatch.delenv(IMPORT_TIMEOUT_ENV, raising=False)
    assert import_timeout() == 60.0
    monkeypatch.setenv(IMPORT_TIMEOUT_ENV, "2.5")
    assert import_timeout() == 2.5
    monkeypatch.setenv(IMPORT_TIMEOUT_ENV, "never")
    with pytest.raises(Exception, match=IMPORT_TIMEOUT_ENV):
        import_timeout()
