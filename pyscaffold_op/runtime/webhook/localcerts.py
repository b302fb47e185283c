"""Certificates for running webhooks locally (`make run`) with no cert-manager: a throw-away CA and a
serving certificate it signs, written as `tls.crt`/`tls.key` (what the server loads) and `ca.crt`
(the `caBundle` the API server, or the emulator, must trust)."""

from __future__ import annotations

import datetime
import ipaddress
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography import x509

CA_NAME = "ca.crt"


def write_local_certs(
    directory: str | os.PathLike[str],
    hosts: tuple[str, ...] = ("localhost",),
    ips: tuple[str, ...] = ("127.0.0.1",),
    days: int = 365,
) -> bytes:
    """Write `tls.crt`, `tls.key` and `ca.crt` into `directory`; returns the CA certificate (PEM).
    Needs `cryptography` (the `envtest` extra: local runs and tests; a cluster mounts cert-manager's)."""
    try:
        from cryptography import x509
    except ImportError as err:  # pragma: no cover - the envtest extra installs it
        raise ImportError(
            "local webhook certificates need the cryptography package: pip install 'pyscaffold-op[envtest]', "
            "or pass cert_dir with tls.crt/tls.key (cert-manager's)"
        ) from err
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    from pyscaffold_op.runtime.certs import CERT_NAME, KEY_NAME

    now = datetime.datetime.now(datetime.UTC)
    start, end = now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=days)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"pyop-webhook-ca@{int(now.timestamp())}")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(cert_sign=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = [x509.DNSName(h) for h in hosts]
    sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0] if hosts else ips[0])]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    key_path = out / KEY_NAME
    key_path.unlink(missing_ok=True)
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    ca_pem = ca.public_bytes(serialization.Encoding.PEM)
    (out / CERT_NAME).write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    (out / CA_NAME).write_bytes(ca_pem)
    return ca_pem


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    from cryptography import x509

    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )
