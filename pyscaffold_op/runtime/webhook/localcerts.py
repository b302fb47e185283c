"""Certificates for running webhooks locally (`make run`) with no cert-manager: a throw-away CA and a
serving certificate it signs, written as `tls.crt`/`tls.key` (what the server loads) and `ca.crt`
(the `caBundle` the API server, or the emulator, must trust). Made like the metrics certificate
(`runtime/certs/x509.py`, with `cryptography`)."""

from __future__ import annotations

import datetime
import os
from pathlib import Path

CA_NAME = "ca.crt"


def write_local_certs(
    directory: str | os.PathLike[str],
    hosts: tuple[str, ...] = ("localhost",),
    ips: tuple[str, ...] = ("127.0.0.1",),
    days: int = 365,
) -> bytes:
    """Write `tls.crt`, `tls.key` and `ca.crt` into `directory`; returns the CA certificate (PEM)."""
    from pyscaffold_op.runtime.certs import x509
    from pyscaffold_op.runtime.certs.certs import CERT_NAME, KEY_NAME

    now = datetime.datetime.now(datetime.UTC)
    ca_key = x509.new_key()
    ca_name = x509.name(f"pyop-webhook-ca@{int(now.timestamp())}")
    ca_pem = x509.certificate(ca_name, ca_key, ca=True, days=days, now=now)
    key = x509.new_key()
    leaf = x509.certificate(
        x509.name(hosts[0] if hosts else ips[0]),
        key,
        x509.Issuer(ca_name, ca_key),
        hosts=hosts,
        ips=ips,
        days=days,
        now=now,
    )
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    key_path = out / KEY_NAME
    key_path.unlink(missing_ok=True)
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key.private_pem())
    (out / CERT_NAME).write_bytes(leaf)
    (out / CA_NAME).write_bytes(ca_pem)
    return ca_pem
