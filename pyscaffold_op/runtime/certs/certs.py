"""TLS for the secure metrics server and the webhook server: a certificate from a folder
(`tls.crt`/`tls.key`, as controller-runtime's `CertDir`/`CertName`/`KeyName`), reloaded on the file
event when the files change (its `certwatcher`, for cert-manager rotations; `inotify.py`), or a
self-signed one made in memory at start (controller-runtime's fallback: host `localhost`, IP
127.0.0.1, valid for a year; made with `cryptography`, imported only then: `x509.py`)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import os
import ssl
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def watched_folders(*paths: Path) -> set[str]:
    """The folders whose changes can change what `paths` read as: each path's own folder and the
    folder of every symlink on the way to the file (a Secret volume: `tls.crt -> ..data/tls.crt`,
    `..data -> ..2026_12_07_...`; certbot: `live/x/cert.pem -> ../../archive/x/cert1.pem`)."""
    folders: set[str] = set()
    for path in paths:
        seen: set[str] = set()
        current = os.path.abspath(path)
        while current not in seen:  # a link loop ends the walk
            seen.add(current)
            parent = os.path.dirname(current)
            folders.add(parent)
            if not os.path.islink(current):
                break
            current = os.path.normpath(os.path.join(parent, os.readlink(current)))
        # the folders of links in the path's own folders (`..data` as a folder link) lead here too
        folders.add(os.path.dirname(os.path.realpath(path)))
    # inotify watches the folder a link names: one watch per real folder (`..data` is the timestamped one)
    return {os.path.realpath(folder) for folder in folders}


class CertWatcher:
    """Keeps `ctx` serving (or presenting) the certificate and key in two files: reloaded when their
    content changes, seen on the file event (inotify on the folders of the files and of every symlink on
    the way, so a kubelet's swap of a Secret volume's `..data` link is seen at once) and, as
    controller-runtime's certwatcher does, by a poll every `interval` seconds (for file systems without
    events, and where there is no inotify). New connections get the new certificate; open ones keep
    theirs.

    A new pair is loaded into a scratch context first and only then into `ctx`: OpenSSL drops a
    context's key when it is given a certificate that does not match it, so loading a half-written pair
    straight into a serving context would leave it unable to complete a handshake. A pair that does not
    load is reported once and retried at the next change."""

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
        """Watch `cert_dir/cert_name` and `cert_dir/key_name` (cert-manager's Secret keys by default)."""
        self.ctx = ctx
        self.what = what
        self.cert, self.key = Path(cert_dir) / cert_name, Path(cert_dir) / key_name
        self.interval = interval
        self.reloads = 0
        self.on_reload: Callable[[], object] | None = None  # called after each reload
        self.watch: Any = None  # the inotify.FolderWatch while running with file events
        self._loaded = self._read()  # what `ctx` was loaded from (server_context read the same files)
        self._refused: tuple[bytes, bytes] | None = None  # the last pair that did not load

    @classmethod
    def for_files(
        cls, ctx: ssl.SSLContext, cert: str | os.PathLike[str], key: str | os.PathLike[str], **kwargs: Any
    ) -> CertWatcher:
        """Watch a certificate and a key that need not share a folder (a kubeconfig's
        `client-certificate` and `client-key`)."""
        cert, key = Path(cert), Path(key)
        watcher = cls(ctx, cert.parent, cert_name=cert.name, key_name=key.name, **kwargs)
        watcher.key = key
        watcher._loaded = watcher._read()
        return watcher

    def _read(self) -> tuple[bytes, bytes] | None:
        try:
            return self.cert.read_bytes(), self.key.read_bytes()
        except OSError:  # mid-rotation, or gone: the next change or poll reads them again
            return None

    def check(self) -> bool:
        """Reload if the files' content changed; True when a new certificate was loaded."""
        pair = self._read()
        if pair is None or pair == self._loaded or pair == self._refused:
            return False
        READS.total += 1
        cert_pem, key_pem = pair
        try:
            # a pair that fails must not touch ctx: try it on a scratch context first
            load_pem_chain(ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER), cert_pem, key_pem)
            load_pem_chain(self.ctx, cert_pem, key_pem)
        except (OSError, ssl.SSLError) as err:
            READS.errors += 1
            self._refused = pair
            log.warning(
                "could not reload the %s certificate (kept the one loaded before): %s",
                self.what,
                err,
                extra={"cert": str(self.cert), "key": str(self.key)},
            )
            return False
        self._loaded, self._refused = pair, None
        self.reloads += 1
        log.info("reloaded the %s certificate", self.what, extra={"cert": str(self.cert)})
        if self.on_reload is not None:
            self.on_reload()
        return True

    async def run(self) -> None:
        """Reload on each file event and every `interval` seconds, until cancelled."""
        from pyscaffold_op.runtime.certs.inotify import watch_folders

        self.watch = watch_folders(lambda: watched_folders(self.cert, self.key))
        try:
            self.check()  # a change between the first load and the watch being set up
            while True:
                if self.watch is None:
                    await asyncio.sleep(self.interval)
                else:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(self.interval):
                            await self.watch.changed.wait()
                    self.watch.changed.clear()
                self.check()
        finally:
            if self.watch is not None:
                self.watch.close()
                self.watch = None
