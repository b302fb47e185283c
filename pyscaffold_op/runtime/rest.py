"""The HTTP layer: one pooled aiohttp session per manager, configured from a `RestConfig` (TLS
verification and client certificates, tls-server-name, proxy-url) with its credentials (`credentials.py`:
tokens, token files re-read as they rotate and after a 401, exec plugins, basic auth).

Why not lightkube's `AsyncClient`: its watch has no bookmark parameter and restarts without relisting,
and its error bodies are not always decoded; the informer needs exact HTTP semantics (status codes,
resourceVersion, allowWatchBookmarks). Why aiohttp and not lightkube's httpx: measured against the
emulator over loopback, aiohttp sends a request in a third of httpx's time, and at 64 requests in flight
httpx's pool bookkeeping made it five times slower still.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import quote, urlencode

from pyscaffold_op.runtime.credentials import credentials_for
from pyscaffold_op.runtime.errors import ServerError, ServerTimeout, Unauthorized, error_for
from pyscaffold_op.runtime.restconfig import RestConfig, as_rest_config

JSON = "application/json"
# A path made only of characters that may stand unescaped in a URL path (RFC 3986 pchar and "/"):
# Kubernetes paths always are (names are DNS labels, or RBAC's `system:...`).
_ENCODED_PATH = re.compile(r"[A-Za-z0-9\-._~/:@!$&'()*+,;=]*")


class _HeadersByType(dict[str, dict[str, str]]):
    """{content type: the headers of a request with a body of that type}, each dict built once."""

    def __missing__(self, content_type: str) -> dict[str, str]:
        headers = self[content_type] = {"Content-Type": content_type}
        return headers


def _split_server(server: str) -> tuple[Any, str]:
    """(the server URL without its path, the path prefix, e.g. Rancher's `/k8s/clusters/x`)."""
    from yarl import URL

    url = URL(server)
    return url.with_path("/").with_query(None).with_fragment(None), url.raw_path.rstrip("/")


class RestTransport:
    def __init__(
        self,
        config: RestConfig | Any,
        *,
        timeout: float = 30.0,
        user_agent: str = "pyop-runtime",
        max_connections: int = 256,
    ) -> None:
        self.config = config = as_rest_config(config)
        self.default_namespace = config.namespace or "default"
        self.server = config.server
        self.timeout = timeout
        self.max_connections = max_connections
        self._ssl = config.ssl_context()
        self._credentials = credentials_for(config)
        # per-request options: SNI/hostname checked against tls-server-name, the kubeconfig's proxy-url
        self._request_options: dict[str, Any] = {}
        if config.tls_server_name and self._ssl is not None:
            self._request_options["server_hostname"] = config.tls_server_name
        if config.proxy_url:
            self._request_options["proxy"] = config.proxy_url
        self._headers = {"User-Agent": user_agent, "Accept": JSON}
        # built once: a request's headers and timeout are the same every time (one per content type)
        self._no_headers: dict[str, str] = {}
        self._body_headers = _HeadersByType()
        self._origin, self._prefix = _split_server(self.server)
        self._session: Any = None
        self._timeout: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    def _get_session(self) -> Any:
        import aiohttp

        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            if self._closed:
                raise RuntimeError("transport is closed")
            # Created lazily: aiohttp sessions belong to the loop that runs them, and managers are built
            # before their loop starts.
            connector = aiohttp.TCPConnector(
                limit=self.max_connections, ssl=self._ssl or False, keepalive_timeout=60
            )
            # No cookie jar, as client-go (Go's http.Client without a Jar): nothing to store or match
            # against each request's URL.
            self._session = aiohttp.ClientSession(
                connector=connector,
                headers=self._headers,
                auto_decompress=True,
                trust_env=False,
                cookie_jar=aiohttp.DummyCookieJar(),
            )
            self._timeout = aiohttp.ClientTimeout(total=self.timeout)
            self._loop = loop
        return self._session

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
        import aiohttp

        session = self._get_session()
        url = self._url(path, params)
        headers = self._body_headers[content_type] if body is not None else self._no_headers
        auth = await self._credentials.authorization()
        for attempt in (1, 2):
            if auth:
                headers = {**headers, "Authorization": auth}
            try:
                async with session.request(
                    method, url, data=body, headers=headers, timeout=self._timeout, **self._request_options
                ) as resp:
                    data = await resp.read()
                    status = resp.status
            except TimeoutError as err:
                raise ServerTimeout(f"{method} {path}: timed out after {self.timeout}s") from err
            except aiohttp.ClientError as err:
                raise ServerError(f"{method} {path}: {err}", code=503, reason="ServiceUnavailable") from err
            if status == 401 and attempt == 1 and await self._credentials.refresh(auth):
                auth = await self._credentials.authorization()  # rotated token file, new exec token
                if auth:
                    headers = self._body_headers[content_type] if body is not None else self._no_headers
                    continue
            if status >= 400:
                raise error_for(status, data)
            return data
        raise Unauthorized(f"{method} {path}")  # pragma: no cover - the loop always returns or raises

    def _url(self, path: str, params: Mapping[str, Any] | None) -> Any:
        """The request's URL, built already encoded where it is safe: yarl then neither parses nor
        quotes it again (about 6 of the 7 µs a new URL string costs)."""
        from yarl import URL

        given = {k: v for k, v in params.items() if v is not None} if params else None
        query = urlencode(given, quote_via=quote) if given else ""
        full = self._prefix + path
        if not _ENCODED_PATH.fullmatch(full):
            url = URL(self.server + path)
            return url.update_query(given) if given else url
        origin = self._origin
        return URL.build(
            scheme=origin.scheme, authority=origin.raw_authority, path=full, query_string=query, encoded=True
        )

    @contextlib.asynccontextmanager
    async def stream_lines(self, path: str, params: Mapping[str, Any]) -> AsyncIterator[AsyncIterator[bytes]]:
        """A watch stream: yields an async iterator over its non-empty lines. Errors map like `request`."""
        import aiohttp

        session = self._get_session()
        url = self.server + path
        query = {k: str(v) for k, v in params.items() if v is not None}
        auth = await self._credentials.authorization()
        headers = {"Authorization": auth} if auth else {}
        # No read timeout: a watch is idle between events; the server ends it after timeoutSeconds.
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.timeout, sock_read=None)
        async with session.get(
            url, params=query, headers=headers, timeout=timeout, **self._request_options
        ) as resp:
            if resp.status >= 400:
                raise error_for(resp.status, await resp.read())
            yield _lines(resp)

    async def close(self) -> None:
        self._closed = True
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None


async def _lines(resp: Any) -> AsyncIterator[bytes]:
    # Our own splitting on chunks: aiohttp's readline caps a line at 64-128 KiB, and a watch event
    # carries a whole object (a large ConfigMap or CRD is bigger than that).
    buf = b""
    async for chunk in resp.content.iter_any():
        buf += chunk
        if b"\n" not in buf:
            continue
        *complete, buf = buf.split(b"\n")
        for line in complete:
            if line.strip():
                yield line
    if buf.strip():
        yield buf
