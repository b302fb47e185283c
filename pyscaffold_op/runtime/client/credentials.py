"""The `Authorization` header of each request, from a `RestConfig`'s credentials (client-go's transport
wrappers): a fixed token, a token file re-read as it rotates, basic auth, or an exec plugin.

After a 401 the transport calls `refresh(used)`: a token file is read again and an exec plugin's cached
credential dropped, so the request is retried once with a fresh one.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from pathlib import Path

from pyscaffold_op.runtime.client.errors import ConfigError
from pyscaffold_op.runtime.client.restconfig import RestConfig

# client-go's NewCachedFileTokenSource re-reads a token file once a minute: bound service account
# tokens are rotated by the kubelet long before they expire.
TOKEN_FILE_PERIOD = 60.0


class Credentials:
    """No credentials: anonymous requests."""

    async def authorization(self) -> str | None:
        return None

    async def refresh(self, used: str | None) -> bool:
        """After a 401 with `used`: True when a new credential is worth one retry."""
        return False

    def waiting(self) -> str | None:
        """What requests are waiting on right now to get a credential (a plugin still running), in one
        line for a start-up report; None when nothing is pending."""
        return None


class StaticCredentials(Credentials):
    def __init__(self, header: str) -> None:
        self.header = header

    async def authorization(self) -> str | None:
        return self.header


class TokenFile(Credentials):
    """A bearer token read from `path`, re-read every `period` seconds and after a 401. The last value
    read wins over `fallback` (a kubeconfig's `token` beside its `tokenFile`), as in client-go."""

    def __init__(
        self,
        path: str,
        fallback: str | None = None,
        *,
        period: float = TOKEN_FILE_PERIOD,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = Path(path)
        self.period = period
        self._monotonic = monotonic
        self._token = fallback
        self._read_at: float | None = None

    def _read(self) -> None:
        try:
            token = self.path.read_text().strip()
        except OSError:
            if self._token is None:
                raise
            return  # keep the last good token; the file may be mid-rotation
        if token:
            self._token = token
        self._read_at = self._monotonic()

    async def authorization(self) -> str | None:
        if self._read_at is None or self._monotonic() - self._read_at >= self.period:
            try:
                self._read()
            except OSError as err:
                raise ConfigError(f"cannot read the token file {self.path}: {err}") from err
        return f"Bearer {self._token}" if self._token else None

    async def refresh(self, used: str | None) -> bool:
        try:
            self._read()
        except OSError:
            return False
        return f"Bearer {self._token}" != used


def credentials_for(config: RestConfig) -> Credentials:
    """The credentials a config names; none for a plain-http server (client-go sends none there)."""
    if not config.secure:
        return Credentials()
    if config.exec is not None:
        from pyscaffold_op.runtime.client.execplugin import ExecCredentials

        return ExecCredentials(config.exec, config)
    if config.token_file:
        return TokenFile(config.token_file, config.token)
    if config.token:
        return StaticCredentials(f"Bearer {config.token}")
    if config.username or config.password:
        pair = f"{config.username or ''}:{config.password or ''}".encode()
        return StaticCredentials("Basic " + base64.b64encode(pair).decode())
    return Credentials()
