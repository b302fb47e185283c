"""docs/tutorial-at.md, done as a reader does it: every marked block written or run, in order.

The tutorial marks the blocks a reader acts on with an HTML comment just above them, which renderers
hide: `<!-- tutorial: write PATH -->` (a whole file), `<!-- tutorial: patch -->` (a unified diff, as
`git apply`), `<!-- tutorial: run -->` (commands; they must succeed), `<!-- tutorial: start: TEXT -->`
(a long-running command in its own terminal, ready once it printed TEXT) and `<!-- tutorial: output -->`
(what the block before it prints: each line must appear in order, `…` standing for what varies).
Unmarked blocks (installing pyop, deploying to a real cluster) are not run.

Two things differ from a reader's machine, so that test runs in parallel do not collide: `/tmp/` is
this test's own folder, and `make run` gets `ARGS=--health-probe-bind-address=127.0.0.1:0` from the
environment (the Makefile's `ARGS ?=`). The project it builds must then be identical to testdata/at.
"""

from __future__ import annotations

import filecmp
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from pyscaffold_op.dev.golden_at import AT_DIR, project_files
from pyscaffold_op.dev.regen import REPO_ROOT

pytestmark = [
    pytest.mark.slow,
    # builds wheels and virtual environments from the package index: slower than the suite's 120 s default
    pytest.mark.timeout(900),
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
    pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed"),
]

TUTORIAL = REPO_ROOT / "docs" / "tutorial-at.md"
# A fence of three or more backticks, closed by the same: a diff of a README holds ``` lines itself.
_MARKED = re.compile(r"<!-- tutorial: (\w+)(?::)?( [^\n]*?)? -->\n(`{3,})[^\n]*\n(.*?)\n\3\n", re.DOTALL)


@dataclass
class Step:
    verb: str
    arg: str
    body: str
    line: int
    expected: str | None = None


def parse(markdown: str) -> list[Step]:
    steps: list[Step] = []
    for match in _MARKED.finditer(markdown):
        verb, arg, body = match.group(1), (match.group(2) or "").strip(), match.group(4) + "\n"
        line = markdown.count("\n", 0, match.start()) + 1
        if verb == "output":
            assert steps and steps[-1].verb in ("run", "start"), f"line {line}: output of nothing"
            steps[-1].expected = body
            continue
        assert verb in ("write", "patch", "run", "start"), f"line {line}: unknown tutorial verb {verb!r}"
        steps.append(Step(verb, arg, body, line))
    return steps


def check_output(expected: str, actual: str, where: str) -> None:
    """Each expected line is found, in order, in a line of `actual`; `…` matches anything."""
    lines = [" ".join(line.split()) for line in actual.splitlines()]
    at = 0
    for want in expected.splitlines():
        parts = [" ".join(part.split()) for part in want.split("…")]
        for index in range(at, len(lines)):
            if _matches(parts, lines[index]):
                at = index + 1
                break
        else:
            raise AssertionError(f"{where}: expected output line not found: {want!r}\n--- actual:\n{actual}")


def _matches(parts: list[str], line: str) -> bool:
    position = 0
    for part in parts:
        found = line.find(part, position)
        if found < 0:
            return False
        position = found + len(part)
    return True


def test_parse_finds_every_kind_of_marked_block() -> None:
    steps = parse(TUTORIAL.read_text())
    verbs = {step.verb for step in steps}
    assert verbs == {"write", "patch", "run", "start"}, verbs
    written = {step.arg for step in steps if step.verb == "write"}
    assert written == {
        "config/samples/programming-kubernetes_v1alpha1_at.yaml",
        "src/programming_kubernetes/api/v1alpha1/at_types.py",
        "src/programming_kubernetes/controllers/at_controller.py",
        "tests/test_at_controller.py",
        "tests/e2e/test_at_e2e.py",
    }
    with pytest.raises(AssertionError, match="not found"):
        check_output("a … c\nb", "a b c\nx", "probe")  # in order: 'b' must come after 'a … c'
    check_output("a … c\nx", "a b c\nx", "probe")


class Session:
    """The reader's terminals: commands run in order from one folder; long-running ones in the background."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.cwd = tmp / "work"
        self.cwd.mkdir()
        self.env = {
            **{k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "ARGS")},
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "ARGS": "--health-probe-bind-address=127.0.0.1:0",
            "PYTHONDONTWRITEBYTECODE": "1",
            # kubectl's discovery cache is keyed by host:port; other runs' emulators on a reused
            # loopback port left theirs in ~/.kube/cache (a stale one made `kubectl wait` get 404)
            "KUBECACHEDIR": str(tmp / "kube-cache"),
        }
        self.background: list[tuple[subprocess.Popen[bytes], Path]] = []

    def local(self, text: str) -> str:
        return text.replace("/tmp/", f"{self.tmp}/")

    def do(self, step: Step) -> None:
        where = f"{TUTORIAL.name} line {step.line}"
        if step.verb == "write":
            (self.cwd / step.arg).write_text(step.body)
        elif step.verb == "patch":
            done = subprocess.run(
                ["git", "apply", "-"], input=step.body, cwd=self.cwd, capture_output=True, text=True
            )
            assert done.returncode == 0, f"{where}: {done.stderr}"
        elif step.verb == "run":
            state = self.tmp / "cwd"
            script = f"set -eo pipefail\n{self.local(step.body)}\npwd > {state}\n"
            done = subprocess.run(
                ["bash", "-c", script], cwd=self.cwd, env=self.env, timeout=300,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )  # fmt: skip
            assert done.returncode == 0, f"{where}: exit {done.returncode}\n{done.stdout}"
            self.cwd = Path(state.read_text().strip())
            if step.expected is not None:
                check_output(self.local(step.expected), done.stdout, where)
        else:
            self.start(step, where)

    def start(self, step: Step, where: str) -> None:
        log = self.tmp / f"terminal-{len(self.background) + 1}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                ["bash", "-c", f"set -eo pipefail\n{self.local(step.body)}"], cwd=self.cwd, env=self.env,
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        self.background.append((process, log))
        deadline = time.monotonic() + 120
        while step.arg not in log.read_text(errors="replace"):
            assert process.poll() is None, f"{where}: exited {process.returncode}\n{log.read_text()}"
            assert time.monotonic() < deadline, f"{where}: never printed {step.arg!r}\n{log.read_text()}"
            time.sleep(0.1)
        if step.expected is not None:
            check_output(self.local(step.expected), log.read_text(errors="replace"), where)

    def stop(self) -> list[str]:
        """Ctrl-C in every background terminal, newest first; their logs."""
        logs = []
        for process, log in reversed(self.background):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            logs.append(log.read_text(errors="replace"))
        return logs


def test_the_tutorial_builds_the_at_operator(tmp_path: Path) -> None:
    session = Session(tmp_path)
    try:
        for step in parse(TUTORIAL.read_text()):
            session.do(step)
    finally:
        logs = session.stop()
    manager_log = logs[0]
    assert "manager stopped" in manager_log and "Traceback" not in manager_log, manager_log

    project = session.cwd
    expected, actual = project_files(AT_DIR), project_files(project)
    assert actual == expected, f"missing {sorted(expected - actual)}, unexpected {sorted(actual - expected)}"
    differ = [
        name for name in sorted(expected) if not filecmp.cmp(project / name, AT_DIR / name, shallow=False)
    ]
    assert not differ, f"the tutorial's project differs from testdata/at in {differ}"
