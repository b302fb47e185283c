"""Kept-alive HTTP/1.1 connections to one server, on asyncio Protocols (the standard loop or uvloop).

A `Pool` belongs to one event loop. It keeps idle connections (most recently used first), opens at
most `limit` at a time (others wait their turn), and sends one request per connection at a time (no
pipelining). A connection the server closes while idle leaves the pool at once. A GET whose reused
connection was closed by the server before any byte of the answer came back is sent once more on a
fresh connection, as Go's http.Transport does for idempotent requests; other methods are not retried
(the server may have acted on them).

Requests are bytes built by the caller (`rest.py`); answers are (status, body). Failures raise
`http1.HTTPError` subclasses or `TimeoutError` at the deadline (the connection is then closed). With
`stall`, an answer still arriving at the deadline is not cut: it fails only once `stall` seconds pass
with nothing received (a 250 MB list from a loaded server can take minutes; client-go sets no bound).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections import deque
from collections.abc import AsyncGenerator

from pyscaffold_op.runtime.client.http1 import ConnectError, HTTPError, ResponseParser, ServerDisconnected

# An idle connection unused this long is closed rather than reused (aiohttp's and Go's are 60-90 s):
# a NAT or load balancer may have forgotten it without telling either side.
IDLE_TIMEOUT = 60.0
# A watch reading faster than its events are handled stops reading past this many buffered bytes.
STREAM_HIGH_WATER = 1 << 22
_RETRYABLE = frozenset({"GET", "HEAD", "OPTIONS"})
# TCP keepalive as client-go's dialer has it (net.Dialer{KeepAlive: 30s} on Go 1.26: the first probe
# after 30 s idle, then every 15 s, 9 unanswered ones drop the connection): a peer that vanished (a
# half-open connection, a NAT or load balancer that dropped its state) is noticed after ~165 s, watches
# included. A frozen proxy still answers the kernel's probes: the informer's liveness check is for that.
KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT = 30, 15, 9
_KEEPALIVE_OPTIONS = tuple(
    (socket.IPPROTO_TCP, getattr(socket, name), value)
    for name, value in (
        ("TCP_KEEPIDLE", KEEPALIVE_IDLE),  # Linux; macOS names it TCP_KEEPALIVE
        ("TCP_KEEPALIVE", KEEPALIVE_IDLE),
        ("TCP_KEEPINTVL", KEEPALIVE_INTERVAL),
        ("TCP_KEEPCNT", KEEPALIVE_COUNT),
    )
    if hasattr(socket, name)
)


def set_keepalive(sock: socket.socket | None) -> None:
    """Turn on TCP keepalive with client-go's figures; a socket that refuses an option keeps the
    system's value for it."""
    if sock is None:
        return
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    except OSError:
        return
    for level, option, value in _KEEPALIVE_OPTIONS:
        with contextlib.suppress(OSError):
            sock.setsockopt(level, option, value)


class Connection(asyncio.Protocol):
    """One TCP (or TLS) connection and the response it is reading."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.parser = ResponseParser()
        self.closed = False
        self.counted = True  # holds one of the pool's `limit` slots
        self.requests = 0  # responses read: a reused connection has > 0
        self.generation = pool.generation  # a connection older than the pool's is not reused
        self.idle_since = 0.0
        self.received = 0  # bytes, so a deadline can tell a slow answer from a silent one
        self._waiter: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        # watches: body pieces not yet taken, and the waiter of the reader that takes them
        self._streaming = False
        self._pieces: list[bytes] = []
        self._buffered = 0
        self._paused = False
        self._error: BaseException | None = None

    # -- asyncio.Protocol ---------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        set_keepalive(transport.get_extra_info("socket"))

    def data_received(self, data: bytes) -> None:
        self.received += len(data)
        waiter = self._waiter
        if waiter is None and not self._streaming:
            self._fail(HTTPError("the server sent data on an idle connection"))
            return
        try:
            done = self.parser.feed(data)
        except HTTPError as err:
            self._fail(err)
            return
        if self._streaming:
            if done:
                self._streaming_done()
            elif self.parser.head_done:
                self._wake()
            return
        if done:
            self._waiter = None
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    def eof_received(self) -> bool:
        if self._waiter is not None or self._streaming:
            try:
                done = self.parser.feed_eof()
            except HTTPError as err:
                self._fail(err)
                return False
            if done:
                if self._streaming:
                    self._streaming_done()
                else:
                    self.parser.keep_alive = False
                    waiter, self._waiter = self._waiter, None
                    if waiter is not None and not waiter.done():
                        waiter.set_result(None)
        self.closed = True
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.pool._forget(self)
        if self._waiter is not None or (self._streaming and self._error is None and not self.parser.done):
            cause = f": {exc}" if exc else ""
            err = ServerDisconnected(f"the server closed the connection{cause}")
            err.__cause__ = exc
            self._fail(err)

    # -- requests -----------------------------------------------------------------------------------
    async def exchange(
        self, request: bytes, no_body: bool, deadline: float, stall: float | None = None
    ) -> tuple[int, bytes]:
        """Send `request` (head and body) and read the whole response, by `deadline` (loop time);
        with `stall`, past the deadline while bytes keep coming, until `stall` seconds of silence."""
        parser = self.parser
        parser.reset(no_body)
        if self.closed:  # closed by the server between connecting and this request
            raise ServerDisconnected("the server closed the connection without answering")
        loop = self.pool.loop
        waiter = self._waiter = loop.create_future()
        self._timer = loop.call_at(deadline, self._expire, waiter, stall, self.received)
        assert self.transport is not None
        self.transport.write(request)
        try:
            await waiter
        finally:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        self.requests += 1
        return parser.status, parser.body()

    def _expire(self, waiter: asyncio.Future[None], stall: float | None, received: int) -> None:
        if stall is not None and self.received != received and not waiter.done():
            # still arriving: checked again after `stall` more seconds, cut only once nothing came
            loop = self.pool.loop
            self._timer = loop.call_at(loop.time() + stall, self._expire, waiter, stall, self.received)
            return
        if not waiter.done():
            waiter.set_exception(TimeoutError())
        self.close()

    def _fail(self, err: BaseException) -> None:
        self._error = err
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(err)
        self._wake()
        self.close()

    @property
    def reusable(self) -> bool:
        return not self.closed and self.parser.keep_alive and self._error is None

    def close(self) -> None:
        """Close now (nothing more is read); the pool forgets it."""
        self.closed = True
        if self.transport is not None:
            self.transport.abort()
        self.pool._forget(self)

    # -- watches ------------------------------------------------------------------------------------
    async def open_stream(self, request: bytes) -> int:
        """Send `request` and wait for the response's head (no timeout: a watch may wait for long);
        the body is then read with `pieces()`. Returns the status."""
        self._streaming = True
        self.parser.on_body = self._piece
        self.parser.reset()
        if self.closed:
            raise ServerDisconnected("the server closed the connection without answering")
        assert self.transport is not None
        self.transport.write(request)
        while not self.parser.head_done:
            await self._wait()
        return self.parser.status

    async def pieces(self) -> AsyncGenerator[bytes, None]:
        """The body as it arrives, in pieces of any size; raises `HTTPError` when the stream breaks.
        Closing the generator closes the connection."""
        try:
            while True:
                if self._pieces:
                    data = b"".join(self._pieces) if len(self._pieces) > 1 else self._pieces[0]
                    self._pieces.clear()
                    self._buffered = 0
                    if self._paused and self.transport is not None and not self.closed:
                        self._paused = False
                        self.transport.resume_reading()
                    yield data
                elif self.parser.done:
                    return
                else:
                    await self._wait()
        finally:
            self.close()

    async def _wait(self) -> None:
        if self._error is not None:
            raise self._error
        self._waiter = self.pool.loop.create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None
        if self._error is not None:
            raise self._error

    def _piece(self, data: bytes) -> None:
        self._pieces.append(data)
        self._buffered += len(data)
        if self._buffered > STREAM_HIGH_WATER and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def _streaming_done(self) -> None:
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            if self._error is not None:
                waiter.set_exception(self._error)
            else:
                waiter.set_result(None)


class Pool:
    """The connections of one event loop to one server (`host`, `port`, TLS or not)."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        host: str,
        port: int,
        *,
        ssl_context: ssl.SSLContext | None = None,
        server_hostname: str | None = None,
        limit: int = 256,
    ) -> None:
        self.loop = loop
        self.host, self.port = host, port
        self.ssl_context = ssl_context
        self.server_hostname = server_hostname if ssl_context is not None else None
        self.limit = limit
        self.count = 0  # open or opening connections, idle ones included
        self.generation = 0  # bumped by renew_connections()
        self._idle: list[Connection] = []
        self._waiters: deque[asyncio.Future[Connection | None]] = deque()
        self.closed = False

    @property
    def idle(self) -> int:
        return len(self._idle)

    async def request(
        self,
        request: bytes,
        method: str,
        deadline: float,
        error_headers: dict[str, str] | None = None,
        stall: float | None = None,
    ) -> tuple[int, bytes]:
        """Send one request on a pooled connection; (status, body) of its response. With
        `error_headers`, the headers of a 429 or 5xx response are copied into it (Retry-After); with
        `stall`, an answer still arriving at `deadline` is read on until `stall` seconds of silence."""
        for attempt in (1, 2):
            if attempt == 1:
                conn = self._take_idle() or await self._acquire(deadline)
            else:
                conn = await self._acquire(deadline, fresh=True)
            reused = conn.requests > 0
            try:
                status, body = await conn.exchange(request, method == "HEAD", deadline, stall)
            except ServerDisconnected:
                conn.close()
                if attempt == 1 and reused and not conn.parser.started and method in _RETRYABLE:
                    continue  # the server closed the idle connection as we sent: Go retries too
                raise
            except BaseException:
                conn.close()  # timed out, cancelled or unreadable: its state is unknown
                raise
            if error_headers is not None and status >= 429:
                error_headers.update(conn.parser.headers)
            self.release(conn)
            return status, body
        raise AssertionError("unreachable")  # pragma: no cover

    async def stream(self, request: bytes, deadline: float) -> tuple[Connection, int]:
        """A new connection of its own for a watch, connected by `deadline`, with the response's
        head read; the caller closes it."""
        conn = await self._acquire(deadline, fresh=True)
        try:
            return conn, await conn.open_stream(request)
        except BaseException:
            conn.close()
            raise

    def renew_connections(self) -> None:
        """Open new connections from now on: idle ones are closed, busy ones when their response is
        read (a client certificate was reloaded: the server must see the new one)."""
        self.generation += 1
        for conn in list(self._idle):
            conn.close()
        self._idle.clear()

    def release(self, conn: Connection) -> None:
        if not conn.reusable or self.closed or conn.generation != self.generation:
            conn.close()
            return
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(conn)
                return
        conn.idle_since = self.loop.time()
        self._idle.append(conn)

    def _take_idle(self) -> Connection | None:
        idle = self._idle
        while idle:
            conn = idle.pop()
            if not conn.closed and self.loop.time() - conn.idle_since < IDLE_TIMEOUT:
                return conn
            conn.close()
        return None

    async def _acquire(self, deadline: float, fresh: bool = False) -> Connection:
        if self.closed:
            raise HTTPError("the client is closed")
        if not fresh and (conn := self._take_idle()) is not None:
            return conn
        if self.count >= self.limit and fresh and self._idle:
            self._idle.pop(0).close()  # a watch needs a connection of its own: drop an idle one
        if self.count >= self.limit:
            waiter: asyncio.Future[Connection | None] = self.loop.create_future()
            self._waiters.append(waiter)
            try:
                async with asyncio.timeout_at(deadline):
                    handed = await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                    self._give_back(waiter.result())
                raise
            if handed is not None:
                if not fresh:
                    return handed
                handed.counted = False  # its slot passes to this watch's own connection
                handed.close()
            # else: _wake_one reserved a slot for us
        else:
            self.count += 1
        try:
            async with asyncio.timeout_at(deadline):
                _, conn = await self.loop.create_connection(
                    lambda: Connection(self),
                    self.host,
                    self.port,
                    ssl=self.ssl_context,
                    server_hostname=self.server_hostname,
                )
        except BaseException as err:
            self.count -= 1
            self._wake_one()
            if isinstance(err, OSError) and not isinstance(err, TimeoutError):
                raise ConnectError(f"cannot connect to {self.host}:{self.port}: {err}", err) from err
            raise
        return conn

    def _give_back(self, handed: Connection | None) -> None:
        """A waiter was handed a connection (or a slot) but was cancelled before it could use it."""
        if handed is not None:
            self.release(handed)
        else:
            self.count -= 1
            self._wake_one()

    def _forget(self, conn: Connection) -> None:
        if not conn.counted:
            return
        conn.counted = False
        self.count -= 1
        if conn in self._idle:
            self._idle.remove(conn)
        self._wake_one()

    def _wake_one(self) -> None:
        """A slot is free: the first waiter may open a connection."""
        while self._waiters and self.count < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.count += 1  # reserved for it
                waiter.set_result(None)
                return

    def close_idle(self) -> int:
        """Close the idle connections (Go's CloseIdleConnections); returns how many."""
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
        return len(idle)

    def close(self) -> None:
        self.closed = True
        for conn in list(self._idle):
            conn.close()
        self._idle.clear()
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_exception(HTTPError("the client is closed"))
        self._waiters.clear()
