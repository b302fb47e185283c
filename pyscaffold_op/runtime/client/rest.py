"""The HTTP layer: requests and watches to one API server, configured from a `RestConfig` (TLS
verification and client certificates, tls-server-name, proxy-url) with its credentials (`credentials.py`:
tokens, token files re-read as they rotate and after a 401, exec plugins, basic auth).

Why our own HTTP/1.1 client (`http1.py`, `http1pool.py`) and not aiohttp's: an operator's work is small
requests to one server (a status PATCH, a GET) and long watch streams. aiohttp's request path (request
and response objects, payload writers, connector bookkeeping, timers, its stream reader) cost ~100 µs
of CPU a call, ~19% of an operator's samples in the benchmark against kopf; a head written as one
string on a kept-alive asyncio Protocol and a response parsed in place cost a fraction of that
(docs/benchmarks.md, *stop 22*). A kubeconfig's `proxy-url` still goes through aiohttp
(`rest_proxy.py`): forward proxies and CONNECT tunnels are its job, not ours.

Why not an existing Python client's: the one pyop used had no watch bookmark parameter, restarted
without relisting and did not always decode error bodies (docs/design.md); the informer needs exact
HTTP semantics (status codes, resourceVersion, allowWatchBookmarks).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import re
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from pyscaffold_op.runtime import tracing
from pyscaffold_op.runtime.client.credentials import Credentials, credentials_for
from pyscaffold_op.runtime.client.errors import (
    ConfigError,
    ServerError,
    ServerTimeout,
    error_for,
)
from pyscaffold_op.runtime.client.http1 import HTTPError
from pyscaffold_op.runtime.client.http1pool import Connection, Pool
from pyscaffold_op.runtime.client.restconfig import RestConfig, as_rest_config

log = logging.getLogger("pyscaffold_op.runtime.rest")

JSON = "application/json"
# A path made only of characters that may stand unescaped in a URL path (RFC 3986 pchar and "/"):
# Kubernetes paths always are (names are DNS labels, or RBAC's `system:...`).
_ENCODED_PATH = re.compile(r"[A-Za-z0-9\-._~/:@!$&'()*+,;=]*")
_PATH_SAFE = "/:@!$&'()*+,;="
# Methods whose request has a body by definition: sent with Content-Length: 0 when the caller has none.
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
# client-go's maxRetries for a 429/5xx with Retry-After; a wait longer than MAX_RETRY_AFTER seconds is cut
# to it (client-go has no cap: a server asking for an hour would stall a reconcile that long).
MAX_RETRIES = 10
MAX_RETRY_AFTER = 60
_BAD_HEADER_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]|[^\x00-\xff]")
# client-go's rest_client_requests_total, process-wide as client-go's: {(code, method, host): count},
# one per attempt (a retried or re-authenticated request counts each time), code "<error>" when no
# response came; a watch counts when its response starts. Scraped by servers/metrics.py.
REQUEST_RESULTS: collections.Counter[tuple[str, str, str]] = collections.Counter()


def split_server(server: str) -> tuple[str, str, int, str, str]:
    """(scheme, host, port, Host header, path prefix) of a server URL; the prefix is e.g. Rancher's
    `/k8s/clusters/x`."""
    url = urlsplit(server)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ConfigError(f"server {server!r}: not an http:// or https:// URL with a host")
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
    except ValueError as err:
        raise ConfigError(f"server {server!r}: {err}") from err
    authority = url.netloc.rpartition("@")[2]
    return url.scheme, url.hostname, port, authority, url.path.rstrip("/")


class RestTransport:
    def __init__(
        self,
        config: RestConfig | Any,
        *,
        timeout: float = 30.0,
        user_agent: str = "pyop-runtime",
        max_connections: int = 256,
        max_retries: int = MAX_RETRIES,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        """`max_retries`: how often a 429 (or 5xx) with Retry-After is sent again; `sleep` waits the
        header's seconds (`asyncio.sleep`; a test injects its own)."""
        self.config = config = as_rest_config(config)
        self.max_retries = max_retries
        self.sleep = sleep or asyncio.sleep
        self.default_namespace = config.namespace or "default"
        self.server = config.server
        self.timeout = timeout
        self.max_connections = max_connections
        self._ssl = config.ssl_context()
        self._credentials = credentials_for(config)
        scheme, self._host, self._port, authority, self._prefix = split_server(self.server)
        self._metric_host = authority  # client-go's `host` label: the URL's host[:port]
        if _BAD_HEADER_VALUE.search(user_agent):
            raise ValueError(f"user agent {user_agent!r} is not a valid header value")
        # Every request's head ends the same way: written once.
        self._head_tail = f" HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: {user_agent}\r\nAccept: {JSON}\r\n"
        self._checked_auth: str | None = None
        self._pool: Pool | None = None
        self._proxied: Any = None
        if config.proxy_url:
            from pyscaffold_op.runtime.client.rest_proxy import ProxiedSession

            self._proxied = ProxiedSession(
                f"{scheme}://{authority}",
                config.proxy_url,
                self._ssl,
                config.tls_server_name,
                user_agent,
                JSON,
                timeout,
                max_connections,
            )
        self._closed = False
        self._traced = False  # runtime/tracing.py: a span per request, when a tracer provider is set
        self._trace()

    def _trace(self) -> None:
        if not self._traced:
            tracer = tracing.tracer()
            if tracer is not None:
                tracing.trace_transport(self, tracer)

    def _get_pool(self) -> Pool:
        loop = asyncio.get_running_loop()
        pool = self._pool
        if pool is None or pool.loop is not loop:
            if self._closed:
                raise RuntimeError("transport is closed")
            # Created lazily: connections belong to the loop that runs them, and managers are built
            # before their loop starts. A former loop's pool is dropped with that loop.
            self._trace()  # a provider configured after the transport was made, before the loop ran
            pool = self._pool = Pool(
                loop,
                self._host,
                self._port,
                ssl_context=self._ssl,
                server_hostname=self.config.tls_server_name,
                limit=self.max_connections,
            )
        return pool

    @property
    def ssl_context(self) -> ssl.SSLContext | None:
        """The client TLS context of every connection (None for http): a watcher reloads a rotated
        client certificate into it (runtime/certs)."""
        return self._ssl

    def renew_connections(self) -> None:
        """New connections for the requests from now on (client-go closes its connections when a
        client certificate rotates); a watch keeps its own until it ends. Through a kubeconfig's
        proxy-url, aiohttp's connections stay as they are."""
        if self._pool is not None:
            self._pool.renew_connections()

    @property
    def credentials(self) -> Credentials:
        """Where each request's Authorization header comes from (start-up reports ask it what it waits on)."""
        return self._credentials

    @property
    def open_connections(self) -> int:
        """Connections open (idle or busy) on the current loop's pool; 0 once closed."""
        return 0 if self._pool is None else self._pool.count

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: bytes | None = None,
        content_type: str = JSON,
        timeout: float | None = None,  # noqa: ASYNC109  # the transport's own deadline, ServerTimeout past it
        max_retries: int | None = None,
    ) -> bytes:
        """Send one request; the response body on 2xx, a typed `ApiError` otherwise.

        A 429, or a 5xx with `Retry-After: <seconds>`, is sent again after that many seconds, at most
        `max_retries` times (client-go's `maxRetries`, 10), whatever the verb: the server did not
        process it. A 401 is retried once with refreshed credentials. `timeout` and `max_retries`
        override the transport's for this call (the informer's liveness probes are short)."""
        timeout = self.timeout if timeout is None else timeout
        max_retries = self.max_retries if max_retries is None else max_retries
        target = self._target(path, params)
        auth = await self._credentials.authorization()
        refreshed, retries = False, 0
        while True:
            error_headers: dict[str, str] = {}
            if self._proxied is not None:
                headers = {"Authorization": auth} if auth else {}
                if body is not None:
                    headers["Content-Type"] = content_type
                try:
                    status, data = await self._proxied.request(
                        method, path, target, body, headers, error_headers, timeout
                    )
                except BaseException:
                    REQUEST_RESULTS["<error>", method, self._metric_host] += 1
                    raise
            else:
                pool = self._get_pool()
                request = self._request(method, target, auth, body, content_type)
                try:
                    # the timeout bounds silence, not a long answer (a list of 100k objects)
                    status, data = await pool.request(
                        request, method, pool.loop.time() + timeout, error_headers, timeout
                    )
                except TimeoutError as err:
                    REQUEST_RESULTS["<error>", method, self._metric_host] += 1
                    raise ServerTimeout(f"{method} {path}: timed out after {timeout}s") from err
                except HTTPError as err:
                    REQUEST_RESULTS["<error>", method, self._metric_host] += 1
                    raise _unavailable(method, path, err) from err
            REQUEST_RESULTS[str(status), method, self._metric_host] += 1
            if self._traced:
                tracing.response_status(status)
            if status == 401 and not refreshed and await self._credentials.refresh(auth):
                refreshed = True
                auth = await self._credentials.authorization()  # rotated token file, new exec token
                if auth:
                    continue
            if status >= 400:
                wait = retry_after(status, error_headers)
                if wait is not None and retries < max_retries:
                    retries += 1
                    log.debug(
                        "Got a Retry-After response",
                        extra={
                            "method": method,
                            "path": path,
                            "code": status,
                            "retry_after": wait,
                            "attempt": retries,
                        },
                    )
                    await self.sleep(wait)
                    continue
                raise error_for(status, data)
            return data

    def _request(
        self, method: str, target: str, auth: str | None, body: bytes | None, content_type: str
    ) -> bytes:
        """The request's bytes: its head, written as one string, and its body."""
        head = method + " " + target + self._head_tail
        if auth:
            if auth is not self._checked_auth:
                if _BAD_HEADER_VALUE.search(auth):
                    raise ConfigError("the credentials are not a valid Authorization header value")
                self._checked_auth = auth
            head += "Authorization: " + auth + "\r\n"
        if body is not None:
            head += f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
            return head.encode("latin-1") + body
        if method in _BODY_METHODS:
            return (head + "Content-Length: 0\r\n\r\n").encode("latin-1")
        return (head + "\r\n").encode("latin-1")

    def _target(self, path: str, params: Mapping[str, Any] | None) -> str:
        """The request target (path and query), encoded: Kubernetes paths as they are, anything
        else percent-quoted; the server URL's path prefix first."""
        full = self._prefix + path
        if not _ENCODED_PATH.fullmatch(full):
            full = quote(full, safe=_PATH_SAFE)
        if params:
            given = {k: v for k, v in params.items() if v is not None}
            if given:
                return f"{full}?{urlencode(given, quote_via=quote)}"
        return full

    @contextlib.asynccontextmanager
    async def stream_lines(self, path: str, params: Mapping[str, Any]) -> AsyncIterator[LineStream]:
        """A watch stream on a connection of its own: yields a `LineStream`, an async iterator over
        its non-empty lines that also counts the pieces of body received (the informer's liveness
        check reads the count). Connecting is bounded by `timeout`, reading is not (a watch is idle
        between events; the informer decides when silence means a dead connection). Errors before
        the stream map like `request`'s, and like `request`, a 429 or 5xx with `Retry-After` is sent
        again after that many seconds, at most `max_retries` times (client-go's `Request.Watch`
        retries the same way); a 401 once with refreshed credentials. A stream that breaks later
        raises a `ConnectionError` (`http1.HTTPError`) from the iterator."""
        target = self._target(path, params)
        auth = await self._credentials.authorization()
        refreshed, retries = False, 0
        while True:
            headers: dict[str, str] = {}
            async with self._open_stream(path, target, auth, headers) as (status, pieces):
                if status == 401 and not refreshed and await self._credentials.refresh(auth):
                    refreshed = True
                    auth = await self._credentials.authorization()
                    if auth:
                        continue
                if status < 400:
                    yield LineStream(pieces)
                    return
                body = b"".join([piece async for piece in pieces])
                wait = retry_after(status, headers)
                if wait is None or retries >= self.max_retries:
                    raise error_for(status, body)
                retries += 1
            fields = {"method": "GET", "path": path, "code": status, "retry_after": wait, "attempt": retries}
            log.debug("Got a Retry-After response", extra=fields)
            await self.sleep(wait)  # the refused connection is closed meanwhile

    @contextlib.asynccontextmanager
    async def _open_stream(
        self, path: str, target: str, auth: str | None, headers: dict[str, str]
    ) -> AsyncIterator[tuple[int, AsyncGenerator[bytes, None]]]:
        """(status, body pieces) of a watch request; a 429 or 5xx answer's headers go into `headers`."""
        host = self._metric_host
        if self._proxied is not None:
            started = False
            try:
                async with self._proxied.stream(path, target, {"Authorization": auth} if auth else {}) as (
                    status,
                    answer_headers,
                    pieces,
                ):
                    started = True
                    REQUEST_RESULTS[str(status), "GET", host] += 1
                    if status >= 429:
                        headers.update(answer_headers)
                    yield status, pieces
            except BaseException:
                if not started:
                    REQUEST_RESULTS["<error>", "GET", host] += 1
                raise
            return
        pool = self._get_pool()
        request = self._request("GET", target, auth, None, JSON)
        conn: Connection | None = None
        try:
            conn, status = await pool.stream(request, pool.loop.time() + self.timeout)
        except TimeoutError as err:
            REQUEST_RESULTS["<error>", "GET", host] += 1
            raise ServerTimeout(f"GET {path}: timed out after {self.timeout}s") from err
        except HTTPError as err:
            REQUEST_RESULTS["<error>", "GET", host] += 1
            raise _unavailable("GET", path, err) from err
        REQUEST_RESULTS[str(status), "GET", host] += 1
        if status >= 429:
            headers.update(conn.parser.headers)
        try:
            yield status, conn.pieces()
        finally:
            conn.close()  # closing the iterator or cancelling the task ends the watch

    def close_idle_connections(self) -> int:
        """Close the kept-alive connections no request is using (Go's `Transport.CloseIdleConnections`):
        after a request through them timed out, the others may be stuck on the same dead path.
        Returns how many; a proxy-url's aiohttp pool is left alone."""
        return 0 if self._pool is None else self._pool.close_idle()

    async def close(self) -> None:
        self._closed = True
        if self._pool is not None:
            self._pool.close()
        self._pool = None
        if self._proxied is not None:
            await self._proxied.close()


def retry_after(status: int, headers: Mapping[str, str]) -> float | None:
    """client-go's checkWait: the seconds to wait before sending a 429 or 5xx request again, from an
    integer `Retry-After` header; None (no retry) without one. Capped at `MAX_RETRY_AFTER`."""
    if status != 429 and status < 500:
        return None
    value = headers.get("retry-after", "").strip()
    if not value or not value.lstrip("-").isdigit():  # an HTTP date is not seconds: Go's Atoi fails too
        return None
    return float(min(max(int(value), 0), MAX_RETRY_AFTER))


def _unavailable(method: str, path: str, err: HTTPError) -> ServerError:
    """A connection or protocol failure: 503, as client-go reports a server it cannot reach."""
    return ServerError(f"{method} {path}: {err}", code=503, reason="ServiceUnavailable")


class LineStream:
    """The lines of a watch response as they arrive, and `received`: how many pieces of its body have
    come so far. A count that stays put for N seconds means no byte came in that time; reading it
    costs the watch nothing per event (no clock is read per piece)."""

    __slots__ = ("_lines", "received")

    def __init__(self, pieces: AsyncGenerator[bytes, None]) -> None:
        self.received = 0
        self._lines = self._read(pieces)

    def __aiter__(self) -> AsyncGenerator[bytes, None]:
        return self._lines  # `async for` runs the generator itself: no call layer per line

    def __anext__(self) -> Awaitable[bytes]:
        return self._lines.__anext__()

    async def aclose(self) -> None:
        await self._lines.aclose()

    async def _read(self, pieces: AsyncGenerator[bytes, None]) -> AsyncGenerator[bytes, None]:
        # No cap on a line's length: a watch event carries a whole object (a large ConfigMap or CRD).
        buf = b""
        try:
            async for piece in pieces:
                self.received += 1
                buf += piece
                if b"\n" not in piece:
                    continue
                *complete, buf = buf.split(b"\n")
                for line in complete:
                    if line.strip():
                        yield line
            if buf.strip():
                yield buf
        finally:
            await pieces.aclose()  # closing the lines closes the connection
