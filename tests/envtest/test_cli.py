"""`pyop envtest serve`: prints the kubeconfig path, serves until stopped; --help stays light."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
import yaml

from .conftest import CRDS


def test_cli_does_not_import_the_server() -> None:
    code = "import sys, pyscaffold_op.cli; assert 'aiohttp' not in sys.modules, 'aiohttp imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_serve_bad_crds_path(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pyscaffold_op", "envtest", "serve", "--crds", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2 and "no such file or folder" in proc.stderr


@pytest.mark.slow
def test_serve(tmp_path: Path) -> None:
    kc = tmp_path / "kc" / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pyscaffold_op",
            "envtest",
            "serve",
            "--crds",
            str(CRDS),
            "--no-kubelet",
            "--kubeconfig-out",
            str(kc),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == str(kc)
        config = yaml.safe_load(kc.read_text())
        server = config["clusters"][0]["cluster"]["server"]
        assert config["users"][0]["user"]["token"]
        r = httpx2.get(f"{server}/apis/cnat.programming-kubernetes.info/v1alpha1/namespaces/default/ats")
        assert r.status_code == 200 and r.json()["kind"] == "AtList"
    finally:
        proc.terminate()
        proc.wait(10)


def test_serve_port_in_use() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "pyscaffold_op", "envtest", "serve", "--no-kubelet", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert proc.returncode == 2 and f"--port {port}" in proc.stderr
