"""TLS for the secure metrics server and the webhook server: a certificate from a folder
(`tls.crt`/`tls.key`, as controller-runtime's `CertDir`/`CertName`/`KeyName`), reloaded when the
files change (its `certwatcher`, for cert-manager rotations), or a self-signed one made in memory at start
(controller-runtime's fallback: host `localhost`, IP 127.0.0.1, valid for a year; made with `cryptography`,
imported only then: `x509.py`)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import os
import ssl
import tempfile
from pathlib import Path

log = logging.getLogger("pyscaffold_op.runtime.certs")

CERT_NAME = "tls.crt"
KEY_NAME = "tls.key"


class _Reads:
    """controller-runtime's certwatcher_read_certificate_total / _errors_total, process-wide as its
    globals: every load of a certificate folder (the first and each reload), and those that failed."""

    total = 0
    errors = 0


READS = _Reads()


def _load_chain(ctx: ssl.SSLContext, cert: Path, key: Path) -> None:
    READS.total += 1
    try:
        ctx.load_cert_chain(cert, key)
    except BaseException:
        READS.errors += 1
        raise


def server_context(
    cert_dir: str | os.PathLike[str] | None,
    what: str = "metrics",
    *,
    cert_name: str = CERT_NAME,
    key_name: str = KEY_NAME,
) -> ssl.SSLContext:
    """A TLS (1.2+) server context with the certificate `cert_name` and key `key_name` in `cert_dir`
    (cert-manager's Secret keys by default), or a self-signed one when `cert_dir` is None."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if cert_dir is not None:
        cert, key = Path(cert_dir) / cert_name, Path(cert_dir) / key_name
        missing = [str(p) for p in (cert, key) if not p.is_file()]
        if missing:
            READS.total += 1
            READS.errors += 1
            raise FileNotFoundError(f"{what} certificate not found: {', '.join(missing)}")
        _load_chain(ctx, cert, key)
        return ctx
    cert_pem, key_pem = self_signed_cert()
    load_pem_chain(ctx, cert_pem, key_pem)
    return ctx


def self_signed_cert(host: str = "localhost", ips: tuple[str, ...] = ("127.0.0.1",)) -> tuple[bytes, bytes]:
    """(certificate PEM, private key PEM): an ECDSA P-256 self-signed certificate for `host` and `ips`,
    valid for a year (and 5 minutes back, for clock skew), for server authentication only; made with
    `cryptography` (`x509.py`), served by OpenSSL."""
    from pyscaffold_op.runtime.certs import x509

    key = x509.new_key()
    now = datetime.datetime.now(datetime.UTC)
    cert = x509.certificate(x509.name(f"{host}@{int(now.timestamp())}"), key, hosts=(host,), ips=ips, now=now)
    return cert, key.private_pem()


def load_pem_chain(ctx: ssl.SSLContext, cert_pem: bytes, key_pem: bytes) -> None:
    # ssl loads a chain only from a file. On Linux the file is an anonymous memory file (memfd), so
    # the key never touches a disk and a container with readOnlyRootFilesystem and no writable volume
    # still serves secure metrics (the scaffolded Deployment has none). Elsewhere (a developer's
    # macOS), a private temporary folder, deleted at once.
    if hasattr(os, "memfd_create") and Path("/proc/self/fd").is_dir():
        fd = os.memfd_create("pyop-metrics-tls", os.MFD_CLOEXEC)
        try:
            with open(fd, "wb", closefd=False) as f:
                f.write(key_pem + cert_pem)  # one file: load_cert_chain takes the key from it too
            ctx.load_cert_chain(f"/proc/self/fd/{fd}")
        finally:
            os.close(fd)
        return
    with tempfile.TemporaryDirectory(prefix="pyop-metrics-") as tmp:
        cert, key = Path(tmp) / CERT_NAME, Path(tmp) / KEY_NAME
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with contextlib.closing(os.fdopen(fd, "wb")) as f:
            f.write(key_pem)
        cert.write_bytes(cert_pem)
        ctx.load_cert_chain(cert, key)


class CertWatcher:
    """Reloads the certificate and key (`tls.crt`/`tls.key` unless named otherwise) from `cert_dir` into
    `ctx` when either file changes (polled every `interval` seconds): new connections get the new
    certificate, open ones keep theirs. A pair that fails to load (half-written during a rotation) is
    logged and retried at the next change. The files are stat'ed through their symlinks, so a kubelet's
    Secret volume (`tls.crt -> ..data/tls.crt`, `..data` swapped on rotation) is followed."""

    def __init__(
        self,
        ctx: ssl.SSLContext,
        cert_dir: str | os.PathLike[str],
        interval: float = 10.0,
        what: str = "metrics",
        *,
        cert_name: str = CERT_NAME,
        key_name: str = KEY_NAME,
    ) -> None:
        self.ctx = ctx
        self.what = what
        self.cert, self.key = Path(cert_dir) / cert_name, Path(cert_dir) / key_name
        self.interval = interval
        self._stamp = self._read_stamp()
        self.reloads = 0

    def _read_stamp(self) -> tuple[float, float, int, int] | None:
        try:
            c, k = self.cert.stat(), self.key.stat()
        except OSError:
            return None
        return (c.st_mtime, k.st_mtime, c.st_size, k.st_size)

    def check(self) -> bool:
        """Reload if the files changed; True when a new certificate was loaded."""
        stamp = self._read_stamp()
        if stamp is None or stamp == self._stamp:
            return False
        try:
            _load_chain(self.ctx, self.cert, self.key)
        except (OSError, ssl.SSLError) as err:
            log.warning("could not reload the %s certificate: %s", self.what, err)
            return False
        self._stamp = stamp
        self.reloads += 1
        log.info("reloaded the %s certificate", self.what, extra={"cert": str(self.cert)})
        return True

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self.check()
