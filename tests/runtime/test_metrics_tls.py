"""Metrics over TLS with cert-manager's certificate, as config/default/cert_metrics_manager_patch.yaml
deploys it: the manager started with --metrics-cert-path (and --metrics-cert-name/--metrics-cert-key) on a
Secret volume laid out the way the kubelet writes one, a client verifying the server with the CA of the
Secret and the Service's DNS name (what config/prometheus/monitor_tls_patch.yaml has Prometheus do), and
a rotation (the kubelet swapping the volume's `..data` link) picked up without a restart."""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import shutil
import ssl
from dataclasses import dataclass
from pathlib import Path

import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.envtest.environment import TOKEN
from pyscaffold_op.runtime import Manager
from pyscaffold_op.runtime.certs import x509
from pyscaffold_op.runtime.manager.cmd import ManagerFlags, build_manager, parse_manager_flags
from pyscaffold_op.testing import eventually

# what the kustomize replacements put into the Certificate's dnsNames and the ServiceMonitor's serverName
SERVICE_DNS_NAME = "demo-controller-manager-metrics-service.demo-system.svc"


@dataclass(frozen=True)
class IssuedSecret:
    """The three keys of the Secret cert-manager writes for a Certificate (metrics-server-cert)."""

    ca_crt: bytes
    tls_crt: bytes
    tls_key: bytes


class SelfSignedIssuer:
    """cert-manager's selfsigned-issuer in small: one CA that signs every (re)issued certificate."""

    def __init__(self, name: str = "selfsigned-ca") -> None:
        self.key = x509.new_key()
        self.subject = x509.name(name)
        self.ca_crt = x509.certificate(self.subject, self.key, ca=True)

    def issue(self) -> IssuedSecret:
        """A new key and serving certificate for the metrics Service's DNS names."""
        key = x509.new_key()
        crt = x509.certificate(
            x509.name(SERVICE_DNS_NAME),
            key,
            x509.Issuer(self.subject, self.key),
            hosts=(SERVICE_DNS_NAME, SERVICE_DNS_NAME + ".cluster.local"),
            now=datetime.datetime.now(datetime.UTC),
        )
        return IssuedSecret(self.ca_crt, crt, key.private_pem())


def write_secret_volume(volume: Path, secret: IssuedSecret, files: dict[str, str], generation: int) -> None:
    """Write `secret` as the kubelet's atomic writer does: the files in a new timestamped folder, `..data`
    pointing at it (swapped by a rename, so readers never see half a rotation), each file a link
    through `..data`, and the previous folder removed. `files` maps the Secret's keys to their paths
    (the volume's `items`)."""
    folder = volume / f"..2026_12_04_00_00_{generation:02d}.{os.getpid()}"
    folder.mkdir(parents=True)
    contents = {"ca.crt": secret.ca_crt, "tls.crt": secret.tls_crt, "tls.key": secret.tls_key}
    for key, path in files.items():
        (folder / path).write_bytes(contents[key])
    staged = volume / "..data_tmp"
    staged.symlink_to(folder.name)
    staged.rename(volume / "..data")
    for path in files.values():
        link = volume / path
        if not link.is_symlink():
            link.symlink_to(Path("..data") / path)
    for old in volume.glob("..20*"):  # then the previous generation goes
        if old != folder:
            shutil.rmtree(old)


async def served_certificate(mgr: Manager, ca: bytes) -> tuple[bytes, str]:
    """(the certificate the metrics server presents, the status line of GET /metrics) over a connection
    that verifies the server with `ca` and the Service's DNS name, as Prometheus does."""
    assert mgr.metrics_address is not None
    host, port = mgr.metrics_address
    verify = ssl.create_default_context(cadata=ca.decode())
    reader, writer = await asyncio.open_connection(host, port, ssl=verify, server_hostname=SERVICE_DNS_NAME)
    try:
        peer = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
        request = f"GET /metrics HTTP/1.1\r\nHost: {SERVICE_DNS_NAME}\r\nAuthorization: Bearer {TOKEN}\r\n"
        writer.write((request + "Connection: close\r\n\r\n").encode())
        status = (await reader.readline()).decode().strip()
    finally:
        writer.close()
    return peer, status


def der(pem: bytes) -> bytes:
    return ssl.PEM_cert_to_DER_cert(pem.decode())


def manager_from_flags(env: Environment, tmp_path: Path, *args: str) -> tuple[Manager, ManagerFlags]:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps(env.kubeconfig_dict()))
    flags = parse_manager_flags(
        ["--kubeconfig", str(kubeconfig), "--metrics-bind-address", "127.0.0.1:0",
         "--health-probe-bind-address", "0", *args]
    )  # fmt: skip
    return build_manager(flags, lambda mgr, flags: None, leader_election_id="demo"), flags


async def test_metrics_are_served_with_cert_managers_certificate_and_rotated(
    env: Environment, tmp_path: Path
) -> None:
    volume = tmp_path / "metrics-certs"  # /tmp/k8s-metrics-server/metrics-certs in the Deployment
    items = {"ca.crt": "ca.crt", "tls.crt": "tls.crt", "tls.key": "tls.key"}
    issuer = SelfSignedIssuer()
    first = issuer.issue()
    write_secret_volume(volume, first, items, generation=1)
    mgr, flags = manager_from_flags(env, tmp_path, f"--metrics-cert-path={volume}")
    assert (flags.metrics_cert_name, flags.metrics_cert_key) == ("tls.crt", "tls.key")
    # no flag for it; 10 s by default. An hour: only the file event can bring the renewed certificate
    mgr.options.metrics_cert_watch_interval = 3600

    async with mgr.running():
        peer, status = await served_certificate(mgr, issuer.ca_crt)
        assert peer == der(first.tls_crt) and status == "HTTP/1.1 200 OK"

        # cert-manager renews (a new key and certificate, the same CA) and the kubelet swaps ..data
        renewed = issuer.issue()
        write_secret_volume(volume, renewed, items, generation=2)

        async def serves_the_renewed_certificate() -> bool:
            return (await served_certificate(mgr, issuer.ca_crt))[0] == der(renewed.tls_crt)

        await eventually(serves_the_renewed_certificate, timeout=10)
        assert mgr.metrics_cert_watcher.reloads == 1

        # a client trusting another CA is refused: the certificate really is verified
        with pytest.raises(ssl.SSLCertVerificationError):
            await served_certificate(mgr, SelfSignedIssuer("another-ca").ca_crt)


async def test_metrics_cert_name_and_key_name_the_files(env: Environment, tmp_path: Path) -> None:
    """A Secret volume whose `items` map the keys to other paths (--metrics-cert-name/--metrics-cert-key)."""
    volume = tmp_path / "certs"
    issuer = SelfSignedIssuer()
    secret = issuer.issue()
    write_secret_volume(volume, secret, {"tls.crt": "serving.pem", "tls.key": "serving-key.pem"}, 1)
    mgr, _ = manager_from_flags(
        env,
        tmp_path,
        f"--metrics-cert-path={volume}",
        "--metrics-cert-name=serving.pem",
        "--metrics-cert-key=serving-key.pem",
    )
    async with mgr.running():
        peer, status = await served_certificate(mgr, issuer.ca_crt)
        assert peer == der(secret.tls_crt) and status == "HTTP/1.1 200 OK"


async def test_the_default_names_are_missing_from_a_renamed_volume(env: Environment, tmp_path: Path) -> None:
    volume = tmp_path / "certs"
    write_secret_volume(volume, SelfSignedIssuer().issue(), {"tls.crt": "serving.pem", "tls.key": "k.pem"}, 1)
    mgr, _ = manager_from_flags(env, tmp_path, f"--metrics-cert-path={volume}")
    with pytest.raises(FileNotFoundError, match=r"tls\.crt"):
        await mgr.start(install_signal_handlers=False)
