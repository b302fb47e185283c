"""Why a webhook could not be reached, in the words of Go's net/http and crypto/tls, as kube-apiserver
reports it (`failed to call webhook: Post "<url>": <why>`): `dial tcp 127.0.0.1:9443: connect:
connection refused`, `tls: failed to verify certificate: x509: certificate signed by unknown
authority`, `x509: certificate is valid for localhost, not 127.0.0.1`, `EOF`. aiohttp's own texts
(`Cannot connect to host ... ssl:<ssl.SSLContext object at 0x...>`) name nothing a user can act on.

Host name and expiry errors need the server's certificate, which OpenSSL's error does not carry: it
is read once more, unverified, only on that failure.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import os
import ssl
import urllib.parse
from datetime import UTC, datetime
from typing import Any

# OpenSSL's X509_V_ERR_* codes that Go calls an unknown authority
_UNKNOWN_AUTHORITY = frozenset({2, 18, 19, 20, 21, 24, 27})
_NOT_YET_VALID, _EXPIRED = 9, 10
_HOST_MISMATCH, _IP_MISMATCH = 62, 64


def _host_port(url: str) -> tuple[str, int, str]:
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return host, port, shown


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


async def dial_error(err: Exception, url: str) -> str:
    """Go's error text for a failed POST to `url` (aiohttp's `err`)."""
    import aiohttp

    host, port, hostport = _host_port(url)
    if isinstance(err, aiohttp.ClientConnectorCertificateError):
        code = getattr(err.certificate_error, "verify_code", None)
        return "tls: failed to verify certificate: " + await _x509(code, host, port)
    if isinstance(err, aiohttp.ClientConnectorDNSError):
        return f"dial tcp: lookup {host}: no such host"
    if isinstance(err, aiohttp.ClientConnectorError):
        cause = err.os_error
        if isinstance(cause, ssl.SSLError):
            return f"remote error: tls: {cause.reason or 'handshake failure'}".lower().replace("_", " ")
        return f"dial tcp {hostport}: connect: {_strerror(cause)}"
    if isinstance(err, aiohttp.ServerDisconnectedError):
        return "EOF"
    if isinstance(err, aiohttp.ClientOSError):
        return f"read tcp {hostport}: {_strerror(err)}"
    return str(err)


def _strerror(err: OSError) -> str:
    """Go's syscall.Errno text: the C library's message, lower case."""
    code = err.errno
    if code is None or code not in errno.errorcode:
        return "connection refused" if isinstance(err, ConnectionRefusedError) else str(err)
    return os.strerror(code).lower()


async def _x509(code: int | None, host: str, port: int) -> str:
    if code in (_HOST_MISMATCH, _IP_MISMATCH):
        cert = await _peer_certificate(host, port)
        return (
            _hostname_error(cert, host) if cert is not None else f"x509: certificate is not valid for {host}"
        )
    if code in (_EXPIRED, _NOT_YET_VALID):
        cert = await _peer_certificate(host, port)
        if cert is not None:
            now = datetime.now(UTC).replace(microsecond=0)
            after, before = cert.not_valid_after_utc, cert.not_valid_before_utc
            detail = (
                f"current time {_rfc3339(now)} is after {_rfc3339(after)}"
                if now > after
                else f"current time {_rfc3339(now)} is before {_rfc3339(before)}"
            )
            return f"x509: certificate has expired or is not yet valid: {detail}"
    return "x509: certificate signed by unknown authority"


def _rfc3339(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


async def _peer_certificate(host: str, port: int) -> Any:
    """The server's certificate, read without verifying it (None when that fails too)."""
    from cryptography import x509

    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        _reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, ssl=ctx), 5)
    except (OSError, TimeoutError):
        return None
    try:
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    finally:
        writer.close()
    return x509.load_der_x509_certificate(der) if der else None


def _hostname_error(cert: Any, host: str) -> str:
    """crypto/x509's HostnameError text."""
    from cryptography import x509

    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        sans = None
    dns = sans.get_values_for_type(x509.DNSName) if sans is not None else []
    ips = [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] if sans is not None else []
    if sans is None:
        names = cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
        if names and names[0].value == host:
            return "x509: certificate relies on legacy Common Name field, use SANs instead"
    if _is_ip(host):
        if not ips:
            return f"x509: cannot validate certificate for {host} because it doesn't contain any IP SANs"
        valid = ", ".join(ips)
    else:
        valid = ", ".join(dns)
    if not valid:
        return f"x509: certificate is not valid for any names, but wanted to match {host}"
    return f"x509: certificate is valid for {valid}, not {host}"
