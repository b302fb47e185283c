"""Requests through a kubeconfig's `proxy-url` (an http(s) forward proxy), on an aiohttp session.

The runtime's own client (`http1pool.py`) speaks to the API server directly; a proxy needs absolute
request targets, CONNECT tunnels for https servers and proxy authentication, which aiohttp has, so
this rarely used path keeps it. Errors map as `RestTransport.request` maps them.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from pyscaffold_op.runtime.client.errors import ServerError, ServerTimeout
from pyscaffold_op.runtime.client.http1 import ServerDisconnected


class ProxiedSession:
    """One aiohttp session per event loop (created lazily: sessions belong to the loop that runs
    them, and managers are built before their loop starts)."""

    def __init__(
        self,
        origin: str,
        proxy: str,
        ssl_context: ssl.SSLContext | None,
        server_hostname: str | None,
        user_agent: str,
        accept: str,
        timeout: float,
        max_connections: int,
    ) -> None:
        self.origin = origin  # scheme://host:port, to which encoded targets are appended
        self._options: dict[str, Any] = {"proxy": proxy}
        if server_hostname and ssl_context is not None:
            self._options["server_hostname"] = server_hostname
        self._ssl = ssl_context
        self._headers = {"User-Agent": user_agent, "Accept": accept}
        self.timeout = timeout
        self.max_connections = max_connections
        self._session: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _get_session(self) -> Any:
        import aiohttp

        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            connector = aiohttp.TCPConnector(
                limit=self.max_connections, ssl=self._ssl or False, keepalive_timeout=60
            )
            # No cookie jar, as client-go (Go's http.Client without a Jar).
            self._session = aiohttp.ClientSession(
                connector=connector,
                headers=self._headers,
                trust_env=False,
                cookie_jar=aiohttp.DummyCookieJar(),
            )
            self._loop = loop
        return self._session

    def _url(self, target: str) -> Any:
        from yarl import URL

        return URL(self.origin + target, encoded=True)

    async def request(
        self,
        method: str,
        path: str,
        target: str,
        body: bytes | None,
        headers: dict[str, str],
        error_headers: dict[str, str] | None = None,
        timeout_seconds: float | None = None,
    ) -> tuple[int, bytes]:
        import aiohttp

        session = self._get_session()
        seconds = self.timeout if timeout_seconds is None else timeout_seconds
        # as the direct transport: the bound is on connecting and on silence, not on a long answer
        timeout = aiohttp.ClientTimeout(total=None, connect=seconds, sock_read=seconds)
        try:
            async with session.request(
                method, self._url(target), data=body, headers=headers, timeout=timeout, **self._options
            ) as resp:
                if error_headers is not None and resp.status >= 429:
                    error_headers.update((k.lower(), v) for k, v in resp.headers.items())
                return resp.status, await resp.read()
        except TimeoutError as err:
            raise ServerTimeout(f"{method} {path}: timed out after {seconds}s") from err
        except aiohttp.ClientError as err:
            raise ServerError(f"{method} {path}: {err}", code=503, reason="ServiceUnavailable") from err

    @contextlib.asynccontextmanager
    async def stream(
        self, path: str, target: str, headers: dict[str, str]
    ) -> AsyncIterator[tuple[int, dict[str, str], AsyncGenerator[bytes, None]]]:
        """(status, headers by lower-case name, body pieces) of a watch request."""
        import aiohttp

        session = self._get_session()
        # No read timeout: a watch is idle between events; the informer judges silence (its liveness
        # probes), and the server ends the watch after timeoutSeconds.
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.timeout, sock_read=None)
        try:
            resp = await session.get(self._url(target), headers=headers, timeout=timeout, **self._options)
        except TimeoutError as err:
            raise ServerTimeout(f"GET {path}: timed out after {self.timeout}s") from err
        except aiohttp.ClientError as err:
            raise ServerError(f"GET {path}: {err}", code=503, reason="ServiceUnavailable") from err
        async with resp:
            yield resp.status, {k.lower(): v for k, v in resp.headers.items()}, _pieces(resp)

    async def close(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None


async def _pieces(resp: Any) -> AsyncGenerator[bytes, None]:
    """The body as it arrives; a broken stream raises what the direct client raises (a ConnectionError).
    Closing the generator closes the connection."""
    import aiohttp

    try:
        async for piece in resp.content.iter_any():
            yield piece
    except aiohttp.ClientError as err:
        raise ServerDisconnected(f"the watch stream broke: {err}") from err
    finally:
        resp.close()
