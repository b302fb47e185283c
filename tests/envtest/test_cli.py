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


def _serve(kc: Path, *flags: str) -> subprocess.Popen[str]:
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
            *flags,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == str(kc)
    return proc


@pytest.mark.slow
def test_serve_writes_a_clusters_kubeconfig(tmp_path: Path) -> None:
    """TLS by default, the kubeconfig as kind's: the CA, and the admin's client certificate
    (CN=kubernetes-admin, O=system:masters) with no token."""
    import base64
    import ssl

    from cryptography import x509

    kc = tmp_path / "kc" / "kubeconfig"
    proc = _serve(kc)
    try:
        config = yaml.safe_load(kc.read_text())
        cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
        assert cluster["server"].startswith("https://127.0.0.1:")
        assert set(user) == {"client-certificate-data", "client-key-data"}
        cert_pem = base64.b64decode(user["client-certificate-data"])
        subject = x509.load_pem_x509_certificate(cert_pem).subject
        assert subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value == "kubernetes-admin"
        assert subject.get_attributes_for_oid(x509.NameOID.ORGANIZATION_NAME)[0].value == "system:masters"
        ctx = ssl.create_default_context(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
        )
        (tmp_path / "c.crt").write_bytes(cert_pem)
        (tmp_path / "c.key").write_bytes(base64.b64decode(user["client-key-data"]))
        ctx.load_cert_chain(tmp_path / "c.crt", tmp_path / "c.key")
        r = httpx2.get(
            f"{cluster['server']}/apis/cnat.programming-kubernetes.info/v1alpha1/namespaces/default/ats",
            verify=ctx,
        )
        assert r.status_code == 200 and r.json()["kind"] == "AtList"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.slow
def test_serve_plain_http_on_request(tmp_path: Path) -> None:
    kc = tmp_path / "kubeconfig"
    proc = _serve(kc, "--no-tls")
    try:
        config = yaml.safe_load(kc.read_text())
        server = config["clusters"][0]["cluster"]["server"]
        assert server.startswith("http://") and config["users"][0]["user"]["token"]
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
