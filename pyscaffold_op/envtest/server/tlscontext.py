"""The emulator's TLS server context: it asks every client for a certificate and accepts any, as Go's
`tls.RequestClientCert` (what kube-apiserver uses): the certificate is judged per request by the
authenticator (`pki.Authority.verify_client`), so one signed by an unknown CA gets 401 Unauthorized
instead of a failed handshake.

Python's `ssl` has no verify callback: `CERT_OPTIONAL` would refuse an unknown CA's certificate in
the handshake. So the context's `SSL_CTX` gets OpenSSL's `SSL_VERIFY_PEER` with a callback that
accepts every chain, through ctypes on the libssl that `_ssl` is linked to. When that cannot be
done (another OpenSSL layout), the context falls back to `CERT_OPTIONAL` with the CA: clients with
the right certificate still work and an unknown CA's certificate fails the handshake.
"""

from __future__ import annotations

import ctypes
import logging
import ssl
import tempfile
from pathlib import Path

from pyscaffold_op.envtest.server.pki import Authority, CertKey

log = logging.getLogger("pyscaffold_op.envtest")

_SSL_VERIFY_PEER = 0x01
_VerifyCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_void_p)


# OpenSSL's verify callback signature: (preverify_ok, X509_STORE_CTX *)
@_VerifyCallback
def _accept_any(preverify_ok: int, store: int | None) -> int:
    return 1


def server_context(authority: Authority, serving: CertKey) -> ssl.SSLContext:
    """TLS 1.2+ with `serving` as the certificate; client certificates requested, not verified here."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    with tempfile.TemporaryDirectory(prefix="pyop-envtest-tls-") as tmp:
        cert, key = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
        cert.write_bytes(serving.cert_pem)
        key.write_bytes(serving.key_pem)
        key.chmod(0o600)
        ctx.load_cert_chain(cert, key)
    # the CA named in the CertificateRequest, so clients choosing among certificates pick ours
    ctx.load_verify_locations(cadata=authority.cert_pem.decode())
    if not _request_any_client_cert(ctx):
        log.warning(
            "envtest: cannot request unverified client certificates; an unknown CA fails the handshake"
        )
        ctx.verify_mode = ssl.CERT_OPTIONAL
    return ctx


def _request_any_client_cert(ctx: ssl.SSLContext) -> bool:
    try:
        import _ssl

        lib = ctypes.CDLL(_ssl.__file__)  # its dependencies' symbols (libssl) resolve through it
        get_mode = lib.SSL_CTX_get_verify_mode
        set_verify = lib.SSL_CTX_set_verify
    except (OSError, AttributeError, ImportError):
        return False
    get_mode.restype, get_mode.argtypes = ctypes.c_int, [ctypes.c_void_p]
    set_verify.restype, set_verify.argtypes = None, [ctypes.c_void_p, ctypes.c_int, _VerifyCallback]
    # CPython's PySSLContext starts with PyObject_HEAD then its `SSL_CTX *`; the pointer is trusted
    # only if OpenSSL reads back the verify mode Python just set through it
    pointer = ctypes.c_void_p.from_address(id(ctx) + object.__basicsize__).value
    ctx.verify_mode = ssl.CERT_OPTIONAL
    if not pointer or get_mode(pointer) != _SSL_VERIFY_PEER:
        ctx.verify_mode = ssl.CERT_NONE
        return False
    ctx.verify_mode = ssl.CERT_NONE
    if get_mode(pointer) != 0:
        return False
    set_verify(pointer, _SSL_VERIFY_PEER, _accept_any)
    return True
