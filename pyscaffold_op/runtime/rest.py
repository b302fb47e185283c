"""The HTTP layer: one pooled `httpx2.AsyncClient` per manager, built with lightkube's connection code
(TLS, bearer tokens, exec plugins, client certificates), and raw requests on top of it.

Why not lightkube's `AsyncClient` methods: its watch has no bookmark parameter and restarts without
relisting, and its error bodies are not always decoded. We need the exact HTTP semantics (status codes,
resourceVersion, allowWatchBookmarks), so requests are made here and errors mapped by status code.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx2 as httpx
from lightkube import KubeConfig, SingleConfig
from lightkube.config import client_adapter
from lightkube.config.models import User

from pyscaffold_op.runtime.errors import ServerError, error_for

JSON = "application/json"


class RestTransport:
    def __init__(
        self,
        config: KubeConfig | SingleConfig,
        *,
        timeout: float = 30.0,
        user_agent: str = "pyop-runtime",
        max_connections: int = 256,
    ) -> None:
        single = config.get() if isinstance(config, KubeConfig) else config
        if single.user is None:  # lightkube asserts a user; an unauthenticated server has none
            single = single._replace(user=User())
        self.config = single
        self.default_namespace = single.namespace or "default"
        params = client_adapter.ConnectionParams(timeout=httpx.Timeout(timeout), trust_env=False)
        kwargs = params.httpx_params(single)
        kwargs["limits"] = httpx.Limits(max_connections=max_connections, max_keepalive_connections=64)
        kwargs["headers"] = {"User-Agent": user_agent, "Accept": JSON}
        self._http = httpx.AsyncClient(**kwargs)
        self._closed = False

    @property
    def server(self) -> str:
        return self.config.cluster.server

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: bytes | None = None,
        content_type: str = JSON,
    ) -> bytes:
        """Send one request; the response body on 2xx, a typed `ApiError` otherwise."""
        headers = {"Content-Type": content_type} if body is not None else None
        query = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            resp = await self._http.request(method, path, params=query, content=body, headers=headers)
        except httpx.TimeoutException as err:
            raise ServerError(f"{method} {path}: {err!r}", code=504, reason="Timeout") from err
        if resp.status_code >= 400:
            raise error_for(resp.status_code, resp.content)
        return resp.content

    @contextlib.asynccontextmanager
    async def stream_lines(self, path: str, params: Mapping[str, Any]) -> AsyncIterator[AsyncIterator[bytes]]:
        """A watch stream: yields an async iterator over its non-empty lines. Errors map like `request`."""
        query = {k: v for k, v in params.items() if v is not None}
        # No read timeout: a watch is idle between events; the server ends it after timeoutSeconds.
        timeout = httpx.Timeout(self._http.timeout.connect, read=None, write=10.0, pool=None)
        async with self._http.stream("GET", path, params=query, timeout=timeout) as resp:
            if resp.status_code >= 400:
                raise error_for(resp.status_code, await resp.aread())
            yield _lines(resp)

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._http.aclose()


async def _lines(resp: httpx.Response) -> AsyncIterator[bytes]:
    # Split on raw bytes: cheaper than aiter_lines' text decoding, and JSON lines are UTF-8 anyway.
    buf = b""
    async for chunk in resp.aiter_bytes():
        buf += chunk
        if b"\n" not in buf:
            continue
        *complete, buf = buf.split(b"\n")
        for line in complete:
            if line.strip():
                yield line
    if buf.strip():
        yield buf
