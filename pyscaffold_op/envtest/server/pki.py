"""The certificates of `Environment(tls=True)`: a CA made at start, a serving certificate for
127.0.0.1/localhost/::1 and an admin client certificate (CN=kubernetes-admin, O=system:masters: the
name kubeadm and kind give their admin), as a cluster's control plane makes them; and the check of a
client's certificate against that CA.

The emulator may not import the runtime (tests/test_walls.py), so this is its own small use of
`cryptography` (imported only when TLS is asked for) rather than `runtime.certs`.
"""

from __future__ import annotations

import datetime
import ipaddress
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyscaffold_op.envtest.server.auth import AUTHENTICATED, UserInfo

if TYPE_CHECKING:
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec

ADMIN_CN = "kubernetes-admin"
SERVING_HOSTS = ("localhost",)
SERVING_IPS = ("127.0.0.1", "::1")
_SKEW = datetime.timedelta(minutes=5)  # valid from 5 minutes back: clocks drift


@dataclass(frozen=True)
class CertKey:
    cert_pem: bytes
    key_pem: bytes = field(repr=False)


@dataclass(frozen=True)
class Authority:
    """A CA that signs the serving and client certificates and verifies the clients'."""

    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey = field(repr=False)

    @classmethod
    def new(cls, common_name: str = "pyop-envtest-ca") -> Authority:
        from cryptography import x509
        from cryptography.hazmat.primitives.asymmetric import ec

        key = ec.generate_private_key(ec.SECP256R1())
        subject = _name(common_name)
        builder = (
            _builder(subject, subject, key.public_key())
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(_usage(cert_sign=True), critical=True)
        )
        return cls(_sign(builder, key), key)

    @property
    def cert_pem(self) -> bytes:
        from cryptography.hazmat.primitives import serialization

        return self.cert.public_bytes(serialization.Encoding.PEM)

    def serving(self, hosts: tuple[str, ...] = SERVING_HOSTS, ips: tuple[str, ...] = SERVING_IPS) -> CertKey:
        from cryptography import x509
        from cryptography.x509.oid import ExtendedKeyUsageOID

        names: list[x509.GeneralName] = [x509.DNSName(h) for h in hosts]
        names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
        return self._leaf(
            _name(hosts[0] if hosts else "pyop-envtest"),
            ExtendedKeyUsageOID.SERVER_AUTH,
            x509.SubjectAlternativeName(names),
        )

    def client(self, user: str, groups: tuple[str, ...] = ()) -> CertKey:
        """A client certificate that authenticates `user` (CN) in `groups` (O), kube-apiserver's way."""
        from cryptography.x509.oid import ExtendedKeyUsageOID

        return self._leaf(_name(user, groups), ExtendedKeyUsageOID.CLIENT_AUTH)

    def _leaf(
        self, subject: x509.Name, usage: x509.ObjectIdentifier, san: x509.ExtensionType | None = None
    ) -> CertKey:
        from cryptography import x509
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            _builder(subject, self.cert.subject, key.public_key())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_usage(cert_sign=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if san is not None:
            builder = builder.add_extension(san, critical=False)
        cert = _sign(builder, self.key)
        key_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return CertKey(cert.public_bytes(serialization.Encoding.PEM), key_pem)

    def verify_client(self, der: bytes) -> UserInfo | None:
        """The user a client certificate (DER, as the TLS layer hands it over) names, or None when
        this CA did not sign it, it is not valid now, or it is not for client authentication: what
        kube-apiserver's x509 authenticator checks before it reads CN and O."""
        from cryptography import x509
        from cryptography.exceptions import InvalidSignature
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        try:
            cert = x509.load_der_x509_certificate(der)
            cert.verify_directly_issued_by(self.cert)
        except (ValueError, TypeError, InvalidSignature):
            return None
        now = datetime.datetime.now(datetime.UTC)
        if not cert.not_valid_before_utc <= now <= cert.not_valid_after_utc:
            return None
        try:
            usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        except x509.ExtensionNotFound:
            usages = None
        if usages is not None and ExtendedKeyUsageOID.CLIENT_AUTH not in usages:
            return None
        cns = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
        user = str(cns[0].value) if cns else ""
        if not user:
            return None
        groups = tuple(str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
        return UserInfo(user, groups + (AUTHENTICATED,) * (AUTHENTICATED not in groups))


def _name(common_name: str, organizations: tuple[str, ...] = ()) -> x509.Name:
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    return x509.Name([*attrs, x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(
    subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey
) -> x509.CertificateBuilder:
    from cryptography import x509

    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(int.from_bytes(secrets.token_bytes(16), "big") >> 1)
        .not_valid_before(now - _SKEW)
        .not_valid_after(now + datetime.timedelta(days=365))
    )


def _usage(*, cert_sign: bool) -> x509.KeyUsage:
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


def _sign(builder: x509.CertificateBuilder, key: ec.EllipticCurvePrivateKey) -> x509.Certificate:
    from cryptography.hazmat.primitives import hashes

    return builder.sign(key, hashes.SHA256())
