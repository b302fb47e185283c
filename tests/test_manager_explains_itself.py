"""The generated manager, run as `make run` runs it, explains a failed start in one line and exits 1."""

from __future__ import annotations

import ast
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyscaffold_op.dev.golden_at import AT_DIR

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: nobody
  user: {token: abc}
contexts:
- name: envtest
  context: {cluster: nowhere, user: nobody}
current-context: envtest
"""


def run_manager(*args: str, kubeconfig: Path) -> subprocess.CompletedProcess[str]:
    if not any(a.startswith("--health-probe-bind-address") for a in args):
        # a free port: another run on this host (a developer's manager, a parallel suite) may hold 8081
        args = ("--health-probe-bind-address=127.0.0.1:0", *args)
    env = {
        **os.environ,
        "KUBECONFIG": str(kubeconfig),
        "PYTHONPATH": os.pathsep.join(p for p in ("src", os.environ.get("PYTHONPATH", "")) if p),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "programming_kubernetes", "--log-format=text", *args],
        cwd=AT_DIR, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def the_error(run: subprocess.CompletedProcess[str]) -> str:
    """The one ERROR line of a failed start, after checking it is the only one and exit status 1."""
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    errors = [line for line in run.stderr.splitlines() if " ERROR " in line]
    assert len(errors) == 1, run.stderr
    return errors[0].split(" ERROR ", 1)[1].removeprefix("programming_kubernetes ")


@pytest.fixture
def refused(tmp_path: Path) -> Path:
    path = tmp_path / "kc"
    path.write_text(KUBECONFIG)
    return path


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.fixture
def server_without_crds(tmp_path: Path) -> Iterator[Path]:
    kubeconfig = tmp_path / "envtest-kc"
    server = subprocess.Popen(
        [sys.executable, "-m", "pyscaffold_op", "envtest", "serve", "--no-kubelet", "--no-workloads",
         "--kubeconfig-out", str(kubeconfig)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not kubeconfig.exists():
            assert server.poll() is None and time.monotonic() < deadline, "pyop envtest serve did not start"
            time.sleep(0.05)
        yield kubeconfig
    finally:
        server.terminate()
        server.wait(timeout=15)


def test_local_runs_bind_loopback_and_the_deployment_all_interfaces() -> None:
    # the generated __main__ runs pyop's run_manager: its flags, with their defaults
    probe = (
        "import dataclasses, programming_kubernetes.__main__ as m, pyscaffold_op.runtime as r; "
        "assert m.main.__code__.co_names.count('run_manager') == 1; "
        "print(repr(dataclasses.asdict(r.parse_manager_flags([]))))"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in ("src", os.environ.get("PYTHONPATH", "")) if p),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=AT_DIR, env=env, capture_output=True, text=True, check=True
    )
    args = ast.literal_eval(out.stdout)
    assert args["health_probe_bind_address"] == "127.0.0.1:8081"
    assert args["metrics_bind_address"] == "0"  # off unless asked for, as kubebuilder's main.go
    assert args["cache_sync_timeout"] == 120.0
    manager = (AT_DIR / "config/manager/manager.yaml").read_text()
    assert "- --health-probe-bind-address=:8081" in manager
    assert (
        "value: --metrics-bind-address=:8443"
        in (AT_DIR / "config/default/manager_metrics_patch.yaml").read_text()
    )


def test_uninstalled_crd_says_run_make_install(server_without_crds: Path) -> None:
    run = run_manager("--cache-sync-timeout=3s", kubeconfig=server_without_crds)
    assert the_error(run) == (
        'caches did not sync within 3s: no matches for kind "At" in version '
        '"programming-kubernetes.viper.run/v1alpha1"; run make install'
    )
    # Said when the first list fails, long before the timeout ends the manager.
    assert 'WARNING pyscaffold_op.runtime.informer no matches for kind "At"' in run.stderr


def test_refused_connection_names_server_kubeconfig_and_context(refused: Path) -> None:
    run = run_manager("--cache-sync-timeout=2s", kubeconfig=refused)
    assert the_error(run) == (
        f"caches did not sync within 2s: cannot connect to https://127.0.0.1:1 (kubeconfig {refused}, "
        "context envtest): connection refused"
    )


def test_taken_health_port_is_one_line_naming_the_flag(refused: Path, taken_port: int) -> None:
    run = run_manager(f"--health-probe-bind-address=127.0.0.1:{taken_port}", kubeconfig=refused)
    assert the_error(run) == (
        f"--health-probe-bind-address 127.0.0.1:{taken_port}: address already in use; pass another port, "
        'e.g. make run ARGS="--health-probe-bind-address=127.0.0.1:0"'
    )


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_passes_args_to_the_manager(refused: Path, taken_port: int, tmp_path: Path) -> None:
    project = tmp_path / "at"
    shutil.copytree(AT_DIR, project)
    env = {
        **os.environ,
        "KUBECONFIG": str(refused),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    run = subprocess.run(
        ["make", "-s", "run", f"PYTHON={sys.executable}",
         f"ARGS=--health-probe-bind-address=127.0.0.1:{taken_port} --log-format=text"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode != 0
    assert f"--health-probe-bind-address 127.0.0.1:{taken_port}: address already in use" in run.stderr, (
        run.stderr
    )
