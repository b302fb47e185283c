"""The emulator's HTTP/1.1 front: one asyncio `Protocol` per connection, requests parsed in C by
httptools (llhttp), every plain response written with one `transport.write`.

It replaced aiohttp's server (issue 18): aiohttp's request and response objects cost more server CPU
than serving a GET from the store. What it keeps from kube-apiserver's `http.Server`: keep-alive
(HTTP/1.0 only on request), pipelined requests answered in order, chunked request bodies,
`Expect: 100-continue`, chunked streaming for watches and `logs -f` (raw until close for HTTP/1.0),
a 32 s limit for a request's headers to arrive (ReadHeaderTimeout, also the idle keep-alive limit),
1 MiB of request line and headers (431 past it), 400 for what does not parse, and the handler
cancelled when its client disconnects. A watcher that stops reading pauses the stream at the
transport's high-water mark instead of buffering without bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections import deque
from collections.abc import AsyncGenerator
from email.utils import formatdate
from http import HTTPStatus
from typing import Any, cast
from urllib.parse import parse_qs, unquote

import httptools

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.server.handlers import MAX_BODY, Api, HttpRequest, Response, error_response

# kube-apiserver's http.Server: ReadHeaderTimeout 32 s, MaxHeaderBytes 1 MiB.
HEADER_TIMEOUT = 32.0
MAX_HEADER_BYTES = 1 << 20
# Bodies are kept up to this size so that anything over MAX_BODY gets the API server's 413 Status
# from `Api.handle`; past it the rest is read and dropped, and the front answers 413 itself.
READ_LIMIT = MAX_BODY * 4
# A watch connection is written at most once per this many seconds while events keep coming: a
# burst of events costs one send per interval instead of one each; a lone event goes out at once.
WATCH_COALESCE = 0.001
# Pipelined requests waiting for their turn before the connection stops reading.
_MAX_PENDING = 16

_STATUS_LINES = {s.value: f"HTTP/1.1 {s.value} {s.phrase}\r\n".encode() for s in HTTPStatus if s.value >= 200}
_PLAIN = b"Cache-Control: no-cache, private\r\n"
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


def _status_line(code: int) -> bytes:
    line = _STATUS_LINES.get(code)
    return line if line is not None else f"HTTP/1.1 {code} status code {code}\r\n".encode()


class _Clock:
    """The Date header, formatted once per second."""

    def __init__(self) -> None:
        self._second = -1
        self._line = b""

    def date_line(self) -> bytes:
        now = int(time.time())
        if now != self._second:
            self._second = now
            self._line = b"Date: " + formatdate(now, usegmt=True).encode() + b"\r\n"
        return self._line


def _header_lines(headers: dict[str, str]) -> bytes:
    # CR or LF in a value would split the response; Go's net/http replaces them with spaces too
    return b"".join(
        f"{k}: {v.replace(chr(13), ' ').replace(chr(10), ' ')}\r\n".encode() for k, v in headers.items()
    )


def _plain_error(code: int) -> bytes:
    """Go's answer to a request it cannot read: text, and the connection closes."""
    text = f"{code} {HTTPStatus(code).phrase}".encode()
    return (
        _status_line(code)
        + b"Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
        + b"Content-Length: %d\r\n\r\n" % len(text)
        + text
    )


class _HeaderOverflow(Exception):
    pass


class _NoVersion(Exception):
    pass


class _Request:
    __slots__ = ("body", "headers", "http10", "keep_alive", "method", "too_large", "url")

    def __init__(
        self,
        method: str,
        url: bytes,
        headers: dict[str, str],
        body: bytes,
        keep_alive: bool,
        http10: bool,
        too_large: bool,
    ) -> None:
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.keep_alive = keep_alive
        self.http10 = http10
        self.too_large = too_large

    def to_api(self, client_cert: bytes | None = None) -> HttpRequest:
        raw = self.url
        if raw[:1] != b"/":  # absolute-form (through a proxy), `*`, or CONNECT's authority-form
            try:
                parsed = httptools.parse_url(raw)
            except httptools.HttpParserInvalidURLError:  # `host:port`: no path (Go's URL.Path "")
                path_b, query_b = b"", b""
            else:
                path_b, query_b = parsed.path or b"/", parsed.query or b""
        else:
            path_b, _, query_b = raw.partition(b"?")
        path = path_b.decode("latin-1")
        if "%" in path:
            path = unquote(path_b.decode("utf-8", "replace"))
        query = parse_qs(query_b.decode("latin-1"), keep_blank_values=True) if query_b else {}
        return HttpRequest(self.method, path, query, self.headers, self.body, client_cert)


class Connection(asyncio.Protocol):
    """One client connection: parses requests as bytes arrive, serves them one at a time in order."""

    def __init__(self, front: Front) -> None:
        self.front = front
        self.api = front.api
        self.loop = front.loop
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.pending: deque[_Request] = deque()
        self.task: asyncio.Task[None] | None = None
        # when this connection last had nothing to do; None while a request is read or served
        self.idle_since: float | None = front.loop.time()
        self.closed = False
        self._reading_paused = False
        self._write_paused = False
        self._drain: asyncio.Future[None] | None = None
        self._continue_owed = False
        self._corked: list[bytes] = []  # watch lines taken by `_sink`, written once per loop iteration
        self._chunked = True
        self._flushed_at = 0.0
        self._in_body = False  # headers read, the body not yet complete
        self._upgraded = False
        self.client_cert: bytes | None = None  # DER, over HTTPS when the client sent one
        self._reset_message()

    def _reset_message(self) -> None:
        self._url = b""
        self._headers: dict[str, str] = {}
        self._header_bytes = 0
        self._body: list[bytes] = []
        self._body_size = 0
        self._keep_alive = True
        self._http10 = False

    # -- asyncio.Protocol --------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        tls = transport.get_extra_info("ssl_object")
        if tls is not None:  # the handshake is done: the certificate is known for the connection's life
            self.client_cert = tls.getpeercert(binary_form=True)
        self.front.connections.add(self)

    def data_received(self, data: bytes) -> None:
        if self.closed or self._upgraded:
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            # no protocol switching here: the request is answered, then the connection closes
            # (what follows the request's headers is not HTTP and is not read)
            self._upgraded = True
            if self.pending:
                self.pending[-1].keep_alive = False
            elif self.task is None:
                self.close()
        except httptools.HttpParserError as err:
            self.abort(431 if isinstance(err.__context__, _HeaderOverflow) else 400)

    def eof_received(self) -> bool | None:
        return False  # as Go's server: a client's EOF cancels what it asked for (a watch ends)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.front.connections.discard(self)
        if self.task is not None:
            self.task.cancel()  # the handler (or its stream) stops: a watch unregisters its watcher
        self._wake_writer(ConnectionResetError("client disconnected"))

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        self._wake_writer(None)

    # -- httptools callbacks -----------------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._reset_message()

    def on_url(self, url: bytes) -> None:
        self._url += url
        self._count(len(url))

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + 4)
        # HttpRequest's headers: lower-case names, the last value of a repeated header
        self._headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def _count(self, n: int) -> None:
        self._header_bytes += n
        if self._header_bytes > MAX_HEADER_BYTES:
            raise _HeaderOverflow

    def on_headers_complete(self) -> None:
        self.idle_since = None
        self._in_body = True
        parser = self.parser
        self._keep_alive = parser.should_keep_alive()
        version = parser.get_http_version()
        if version != "1.1" and version != "1.0":  # `GET /` alone (HTTP/0.9): Go's 400
            raise _NoVersion
        self._http10 = version == "1.0"
        if self._headers.get("expect", "").lower() == "100-continue" and not self._http10:
            # only the request being read may be told to go on: an answer still owed comes first
            if self.task is None and not self.pending:
                self._write(_CONTINUE)
            else:
                self._continue_owed = True

    def on_body(self, body: bytes) -> None:
        self._body_size += len(body)
        if self._body_size <= READ_LIMIT:
            self._body.append(body)

    def on_message_complete(self) -> None:
        self._in_body = False
        body = self._body[0] if len(self._body) == 1 else b"".join(self._body)
        req = _Request(
            self.parser.get_method().decode("latin-1"),
            self._url,
            self._headers,
            body,
            self._keep_alive,
            self._http10,
            self._body_size > READ_LIMIT,
        )
        self._body = []
        if self.task is None:
            self.task = self.loop.create_task(self._serve(req))
        else:
            self.pending.append(req)
            if len(self.pending) >= _MAX_PENDING and self.transport is not None:
                self.transport.pause_reading()
                self._reading_paused = True

    # -- serving -----------------------------------------------------------------------------------

    async def _serve(self, req: _Request) -> None:
        try:
            while True:
                keep = await self._answer(req)
                if not keep or self.closed or (self._upgraded and not self.pending):
                    self.close()
                    return
                if not self.pending:
                    break
                req = self.pending.popleft()
                if self._reading_paused and self.transport is not None:
                    self._reading_paused = False
                    self.transport.resume_reading()
        except asyncio.CancelledError:
            return
        finally:
            self.task = None
        if self._continue_owed:
            self._continue_owed = False
            self._write(_CONTINUE)
        if not self._in_body:
            self.idle_since = self.loop.time()

    async def _answer(self, req: _Request) -> bool:
        """Serve one request; False when the connection must close after it."""
        if req.too_large:
            resp = error_response(E.too_large(MAX_BODY))
        else:
            resp = await self.api.handle(req.to_api(self.client_cert))
        keep = req.keep_alive
        if resp.stream is None:
            body = resp.body if req.method != "HEAD" else b""
            self._write(self._head(resp, req, keep, len(resp.body)) + body)
            return keep
        return await self._stream(resp, req, resp.stream) and keep

    def _head(self, resp: Response, req: _Request, keep: bool, length: int) -> bytes:
        head = [_status_line(resp.status)]
        extra = resp.headers
        if not extra or "Content-Type" not in extra:
            head.append(b"Content-Type: " + resp.content_type.encode() + b"\r\n")
        head.append(_PLAIN)
        if extra:
            head.append(_header_lines(extra))
        head.append(self.front.clock.date_line())
        if length >= 0:
            head.append(b"Content-Length: %d\r\n" % length)
        elif not req.http10:
            head.append(b"Transfer-Encoding: chunked\r\n")
        if not keep:
            head.append(b"Connection: close\r\n")
        elif req.http10:
            head.append(b"Connection: keep-alive\r\n")
        head.append(b"\r\n")
        return b"".join(head)

    async def _stream(self, resp: Response, req: _Request, stream: AsyncGenerator[bytes, None]) -> bool:
        """A chunked body from the handler's stream (an HTTP/1.0 client gets it raw, then EOF). A
        watch's live events skip the stream: the watcher hands them to `_sink`."""
        chunked = self._chunked = not req.http10
        watcher = resp.watcher
        try:
            self._write(self._head(resp, req, chunked and req.keep_alive, -1))
            if watcher is not None:
                watcher.sink = self._sink
            async for chunk in stream:
                if not chunk:
                    continue  # an empty chunk would end the body
                self._flush()  # what the sink took came first
                self._write(b"%x\r\n%b\r\n" % (len(chunk), chunk) if chunked else chunk)
                if self._write_paused:
                    await self._drained()
            self._flush()
            if chunked:
                self._write(b"0\r\n\r\n")
        except ConnectionError:
            return False
        finally:
            if watcher is not None:
                watcher.sink = None
            self._corked.clear()
            with contextlib.suppress(Exception):
                await stream.aclose()
        return chunked

    def _sink(self, line: bytes) -> bool:
        """Take a watch event's line; lines that come close together go out as one chunk."""
        if self._write_paused or self.closed:
            return False
        if not self._corked:
            wait = self._flushed_at + WATCH_COALESCE - self.loop.time()
            if wait > 0:
                self.loop.call_later(wait, self._flush)
            else:
                self.loop.call_soon(self._flush)
        self._corked.append(line)
        return True

    def _flush(self) -> None:
        corked = self._corked
        if corked:
            self._flushed_at = self.loop.time()
            data = corked[0] if len(corked) == 1 else b"".join(corked)
            corked.clear()
            self._write(b"%x\r\n%b\r\n" % (len(data), data) if self._chunked else data)

    async def _drained(self) -> None:
        if self.closed:
            raise ConnectionResetError("client disconnected")
        self._drain = self.loop.create_future()
        try:
            await self._drain
        finally:
            self._drain = None

    def _wake_writer(self, exc: Exception | None) -> None:
        waiter = self._drain
        if waiter is not None and not waiter.done():
            if exc is None:
                waiter.set_result(None)
            else:
                waiter.set_exception(exc)

    def _write(self, data: bytes) -> None:
        if self.transport is not None and not self.closed:
            self.transport.write(data)

    # -- closing -----------------------------------------------------------------------------------

    def abort(self, code: int) -> None:
        """A request that cannot be read: Go's plain-text answer, then close."""
        self._write(_plain_error(code))
        self.close()

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def shut(self) -> None:
        """Server shutdown: stop the handler; drop what a client that stopped reading never took."""
        if self.task is not None:
            self.task.cancel()
        if self.transport is not None:
            if self.transport.get_write_buffer_size():
                self.transport.abort()
            else:
                self.transport.close()


class Front:
    """The listening socket and its connections; `cleanup()` closes both."""

    def __init__(self, api: Api, loop: asyncio.AbstractEventLoop, header_timeout: float) -> None:
        self.api = api
        self.loop = loop
        self.header_timeout = header_timeout
        self.clock = _Clock()
        self.connections: set[Connection] = set()
        self.server: asyncio.base_events.Server | None = None
        self._sweeper: asyncio.TimerHandle | None = None

    def protocol(self) -> Connection:
        return Connection(self)

    def start_sweeping(self) -> None:
        self._sweeper = self.loop.call_later(min(1.0, self.header_timeout / 4), self._sweep)

    def _sweep(self) -> None:
        # one timer for every connection instead of one per request: a connection that has not sent
        # a complete request's headers `header_timeout` seconds after opening or after its last
        # answer is closed, which bounds trickling clients and idle keep-alive connections alike
        limit = self.loop.time() - self.header_timeout
        for conn in list(self.connections):
            since = conn.idle_since
            if since is not None and since <= limit and conn.task is None:
                conn.close()
        self.start_sweeping()

    async def cleanup(self, grace: float = 0.5) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        server, self.server = self.server, None
        if server is not None:
            server.close()
        tasks = [c.task for c in self.connections if c.task is not None]
        for conn in list(self.connections):
            conn.shut()
        if tasks:
            await asyncio.wait(tasks, timeout=grace)
        if server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(server.wait_closed(), grace)


async def serve(
    api: Api,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    header_timeout: float = HEADER_TIMEOUT,
    tls: ssl.SSLContext | None = None,
) -> tuple[Front, int]:
    """Start serving (HTTPS with `tls`); returns the front (`await front.cleanup()` stops it) and
    the bound port."""
    loop = asyncio.get_running_loop()
    front = Front(api, loop, header_timeout)
    server: Any = await loop.create_server(front.protocol, host, port, reuse_address=True, ssl=tls)
    front.server = server
    front.start_sweeping()
    return front, server.sockets[0].getsockname()[1]
