"""The at operator's README, "Try it with no cluster", done literally: `pyop envtest serve`, `make run`,
`kubectl apply` of the sample, and the phase reaching DONE, each a separate process as a user runs them."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pyscaffold_op.dev.golden_at import AT_DIR

pytestmark = [
    pytest.mark.slow,
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
    pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed"),
]

SAMPLE = AT_DIR / "config/samples/programming-kubernetes_v1alpha1_at.yaml"


def _wait(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _stop(process: subprocess.Popen[str]) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


def test_readme_flow_reaches_done(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "PYTHONDONTWRITEBYTECODE": "1"}
    server = subprocess.Popen(
        [sys.executable, "-m", "pyscaffold_op", "envtest", "serve", "--crds", "config/crd/bases",
         "--kubeconfig-out", str(kubeconfig)],
        cwd=AT_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    manager = None
    try:
        _wait(kubeconfig.exists, 20, "the emulator's kubeconfig")

        def kubectl(*args: str) -> str:
            done = subprocess.run(["kubectl", *args], env=env, capture_output=True, text=True, timeout=30)
            assert done.returncode == 0, done.stderr
            return done.stdout

        _wait(lambda: subprocess.run(["kubectl", "get", "ns"], env=env, capture_output=True).returncode == 0,
              20, "the emulator to answer")  # fmt: skip
        manager = subprocess.Popen(
            # A free health port: other test runs on this host may hold the default 127.0.0.1:8081.
            # PYOP: `make run` regenerates the manifests with it; the one on PATH may be another pyop.
            [
                "make",
                "-s",
                "run",
                f"PYTHON={sys.executable}",
                f"PYOP={sys.executable} -m pyscaffold_op",
                "ARGS=--health-probe-bind-address=127.0.0.1:0",
            ],
            cwd=AT_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip
        due = (datetime.now(UTC) + timedelta(seconds=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
        sample = tmp_path / "at.yaml"
        sample.write_text(SAMPLE.read_text().replace("2026-12-02T15:04:05Z", due))
        kubectl("apply", "-f", str(sample))

        def phase() -> str:
            return kubectl("get", "at", "at-sample", "-o", "jsonpath={.status.phase}")

        _wait(lambda: phase() == "DONE", 40, "the At to reach DONE")
        table = kubectl("get", "ats")
        assert table.split()[:5] == ["NAME", "SCHEDULE", "COMMAND", "PHASE", "AGE"]
        assert "DONE" in table and 'echo "hello world"' in table
        assert kubectl("get", "at", "at-sample", "-o", "jsonpath={.status.outcome}") == "Succeeded"
        assert "Completed" in kubectl("get", "pods")
        assert kubectl("logs", "at-sample-pod").strip() == "hello world"
    finally:
        if manager is not None:
            # make runs python as a child: interrupt the whole process group, as Ctrl-C does.
            if manager.poll() is None:
                os.killpg(manager.pid, signal.SIGINT)
            try:
                manager.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(manager.pid, signal.SIGKILL)
                manager.wait()
        _stop(server)
    # make itself dies of the interrupt; the manager inside must stop cleanly, without a traceback.
    log = manager.stdout.read() if manager.stdout else ""
    assert "manager stopped" in log and "Traceback" not in log, log
