"""X.509 certificates with P-256 keys, made with `cryptography`: the self-signed metrics certificate and
the local webhook CA. `cryptography` is imported here only, when a certificate is made, never when the
runtime is imported; TLS itself is OpenSSL's, via `ssl`.

Why `cryptography` and not pure-Python `ecdsa` + `asn1crypto` (what this module used before): `ecdsa`
carries CVE-2024-23342 (a timing side channel its maintainer calls unfixable in pure Python) and
`asn1crypto` is unmaintained, so every image scanner flagged every operator image (issue 29).
"""

from __future__ import annotations

import datetime
import ipaddress
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography import x509 as cx509
    from cryptography.hazmat.primitives.asymmetric import ec

EXPIRY_SKEW = datetime.timedelta(minutes=5)  # valid from 5 minutes back: clocks drift


@dataclass(frozen=True)
class KeyPair:
    private_key: ec.EllipticCurvePrivateKey

    def private_pem(self) -> bytes:
        """The key as PKCS#8 (RFC 5208) PEM, unencrypted: what `ssl.load_cert_chain` and Go's
        `tls.X509KeyPair` read."""
        from cryptography.hazmat.primitives import serialization

        return self.private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )


@dataclass(frozen=True)
class Issuer:
    name: cx509.Name
    key: KeyPair


def new_key() -> KeyPair:
    """A fresh P-256 (secp256r1) key, from OpenSSL's random generator."""
    from cryptography.hazmat.primitives.asymmetric import ec

    return KeyPair(ec.generate_private_key(ec.SECP256R1()))


def name(common_name: str) -> cx509.Name:
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def certificate(
    subject: cx509.Name,
    key: KeyPair,
    issuer: Issuer | None = None,
    *,
    hosts: tuple[str, ...] = (),
    ips: tuple[str, ...] = (),
    ca: bool = False,
    days: int = 365,
    now: datetime.datetime | None = None,
) -> bytes:
    """A PEM certificate for `subject` and `key`, signed by `issuer` (self-signed when None), ECDSA with
    SHA-256.

    A CA gets basicConstraints ca (path length 0), keyCertSign and cRLSign; a leaf gets digitalSignature
    and serverAuth, with `hosts`/`ips` as subjectAltName. Key identifiers are RFC 5280's method 1.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import ExtendedKeyUsageOID

    signer = issuer or Issuer(subject, key)
    now = (now or datetime.datetime.now(datetime.UTC)).replace(microsecond=0)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(signer.name)
        .public_key(key.private_key.public_key())
        .serial_number(secrets.randbits(127) | 1)  # positive, at most 16 bytes: RFC 5280 4.1.2.2
        # RFC 5280 4.1.2.5 (UTCTime through 2049, GeneralizedTime from 2050): cryptography chooses
        .not_valid_before(now - EXPIRY_SKEW)
        .not_valid_after(now + datetime.timedelta(days=days))
    )
    sans: list[x509.GeneralName] = [x509.DNSName(h) for h in hosts]
    sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    usage = dict.fromkeys(
        (
            "content_commitment",
            "key_encipherment",
            "data_encipherment",
            "key_agreement",
            "encipher_only",
            "decipher_only",
        ),
        False,
    )
    if ca:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        builder = builder.add_extension(
            x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, **usage), critical=True
        )
    else:
        builder = builder.add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        builder = builder.add_extension(
            x509.KeyUsage(digital_signature=True, key_cert_sign=False, crl_sign=False, **usage), critical=True
        )
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
    builder = builder.add_extension(
        x509.SubjectKeyIdentifier.from_public_key(key.private_key.public_key()), critical=False
    )
    if issuer is not None:
        aki = x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer.key.private_key.public_key())
        builder = builder.add_extension(aki, critical=False)
    from cryptography.hazmat.primitives.serialization import Encoding

    cert = builder.sign(signer.key.private_key, hashes.SHA256())
    return cert.public_bytes(Encoding.PEM)
