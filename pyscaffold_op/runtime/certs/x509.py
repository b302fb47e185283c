"""X.509 certificates with P-256 keys, made with the pure-Python `ecdsa` and `asn1crypto` packages: the
self-signed metrics certificate and the local webhook CA. Only this one-time generation is in Python
(it keeps the 15 MB `cryptography` wheel out of an operator's image); TLS itself is OpenSSL's, via
`ssl`. Signatures are deterministic (RFC 6979), so they need no random nonce.
"""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
import secrets
from dataclasses import dataclass
from typing import Any

EXPIRY_SKEW = datetime.timedelta(minutes=5)  # valid from 5 minutes back: clocks drift


@dataclass(frozen=True)
class KeyPair:
    signing_key: Any  # ecdsa.SigningKey
    public_info: Any  # asn1crypto.keys.PublicKeyInfo

    def private_pem(self) -> bytes:
        """PKCS#8 v1 (RFC 5208) around the SEC 1 key: ecdsa's own pkcs8 output is RFC 5958's v2,
        which some parsers (cryptography) refuse."""
        from asn1crypto import keys, pem

        sec1 = keys.ECPrivateKey.load(self.signing_key.to_der(format="ssleay"))
        return bytes(pem.armor("PRIVATE KEY", keys.PrivateKeyInfo.wrap(sec1, "ec").dump()))


@dataclass(frozen=True)
class Issuer:
    name: Any  # asn1crypto.x509.Name
    key: KeyPair


def new_key() -> KeyPair:
    from asn1crypto import keys
    from ecdsa import NIST256p, SigningKey

    key = SigningKey.generate(curve=NIST256p)  # the secret from os.urandom
    return KeyPair(key, keys.PublicKeyInfo.load(key.get_verifying_key().to_der()))


def name(common_name: str) -> Any:
    from asn1crypto import x509

    return x509.Name.build({"common_name": common_name})


def certificate(
    subject: Any,
    key: KeyPair,
    issuer: Issuer | None = None,
    *,
    hosts: tuple[str, ...] = (),
    ips: tuple[str, ...] = (),
    ca: bool = False,
    days: int = 365,
    now: datetime.datetime | None = None,
) -> bytes:
    """A PEM certificate for `subject` and `key`, signed by `issuer` (self-signed when None).

    A CA gets basicConstraints ca (path length 0), keyCertSign and cRLSign; a leaf gets digitalSignature
    and serverAuth, with `hosts`/`ips` as subjectAltName. Key identifiers are RFC 5280's method 1.
    """
    from asn1crypto import pem, x509
    from ecdsa.util import sigencode_der

    signer = issuer or Issuer(subject, key)
    now = (now or datetime.datetime.now(datetime.UTC)).replace(microsecond=0)
    extensions: list[dict[str, Any]] = []
    sans = [x509.GeneralName({"dns_name": h}) for h in hosts]
    sans += [x509.GeneralName({"ip_address": str(ipaddress.ip_address(ip))}) for ip in ips]
    if sans:
        extensions.append({"extn_id": "subject_alt_name", "critical": False, "extn_value": sans})
    if ca:
        extensions += [
            {
                "extn_id": "basic_constraints",
                "critical": True,
                "extn_value": {"ca": True, "path_len_constraint": 0},
            },
            {
                "extn_id": "key_usage",
                "critical": True,
                "extn_value": {"digital_signature", "key_cert_sign", "crl_sign"},
            },
        ]
    else:
        extensions += [
            {"extn_id": "basic_constraints", "critical": True, "extn_value": {"ca": False}},
            {"extn_id": "key_usage", "critical": True, "extn_value": {"digital_signature"}},
            {"extn_id": "extended_key_usage", "critical": False, "extn_value": ["server_auth"]},
        ]
    extensions.append({"extn_id": "key_identifier", "critical": False, "extn_value": key.public_info.sha1})
    if issuer is not None:
        aki = {"key_identifier": issuer.key.public_info.sha1}
        extensions.append({"extn_id": "authority_key_identifier", "critical": False, "extn_value": aki})
    tbs = x509.TbsCertificate(
        {
            "version": "v3",
            "serial_number": secrets.randbits(127) | 1,  # positive, at most 16 bytes: RFC 5280 4.1.2.2
            "signature": {"algorithm": "sha256_ecdsa"},
            "issuer": signer.name,
            "validity": {
                "not_before": _time(now - EXPIRY_SKEW),
                "not_after": _time(now + datetime.timedelta(days=days)),
            },
            "subject": subject,
            "subject_public_key_info": key.public_info,
            "extensions": extensions,
        }
    )
    signature = signer.key.signing_key.sign_deterministic(
        tbs.dump(), hashfunc=hashlib.sha256, sigencode=sigencode_der
    )
    cert = x509.Certificate(
        {
            "tbs_certificate": tbs,
            "signature_algorithm": {"algorithm": "sha256_ecdsa"},
            "signature_value": signature,
        }
    )
    return bytes(pem.armor("CERTIFICATE", cert.dump()))


def _time(moment: datetime.datetime) -> Any:
    from asn1crypto import x509

    # RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050
    return x509.Time({"utc_time" if moment.year < 2050 else "general_time": moment})
