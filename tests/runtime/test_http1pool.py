"""The runtime's HTTP/1.1 client against raw loopback servers that misbehave on purpose: connection
reuse and its cap, connections the server closes, the retry rule, timeouts, cancellation, watches."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from urllib.parse import parse_qs, urlsplit

import pytest

from pyscaffold_op.runtime.client.errors import Forbidden, ServerError, ServerTimeout
from pyscaffold_op.runtime.client.http1 import ConnectError, ProtocolError, ServerDisconnected
from pyscaffold_op.runtime.client.http1pool import Connection
from pyscaffold_op.runtime.client.rest import RestTransport
from pyscaffold_op.runtime.client.restconfig import RestConfig
from pyscaffold_op.testing import eventually

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class Server:
    """A raw HTTP/1.1 server: `handle` runs per connection; requests seen as (connection, line)."""

    def __init__(self, handle: Handler) -> None:
        self.handle = handle
        self.connections = 0
        self.requests: list[tuple[int, str]] = []
        self.closed_by_client = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def read_request(self, reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes] | None:
        """The next request on this connection, or None when the client closed it."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            self.closed_by_client += 1
            return None
        line, *lines = head[:-4].decode().split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines)}
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        self.requests.append((self.connections, line))
        return line, headers, body


def reply(body: bytes = b"{}", status: str = "200 OK", extra: str = "") -> bytes:
    return f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\n{extra}\r\n".encode() + body


@contextlib.asynccontextmanager
async def running(server: Server) -> AsyncIterator[int]:
    srv = await asyncio.start_server(server.serve, "127.0.0.1", 0)
    try:
        yield srv.sockets[0].getsockname()[1]
    finally:
        srv.close()


def transport_for(port: int, **options: float) -> RestTransport:
    return RestTransport(RestConfig(server=f"http://127.0.0.1:{port}"), **options)  # type: ignore[arg-type]


async def test_connections_are_kept_alive_and_capped() -> None:
    gate = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await server.read_request(reader) is not None:
            await gate.wait()
            writer.write(reply())

    server = Server(handle)
    async with running(server) as port:
        transport = transport_for(port, max_connections=2)
        try:
            calls = [asyncio.create_task(transport.request("GET", f"/x/{i}")) for i in range(6)]
            await eventually(lambda: _true(len(server.requests) == 2))
            assert server.connections == 2 and transport.open_connections == 2  # the other 4 wait
            gate.set()
            assert await asyncio.gather(*calls) == [b"{}"] * 6
            for i in range(3):
                await transport.request("GET", f"/y/{i}")
            assert server.connections == 2 and len(server.requests) == 9
            assert sorted(line for _, line in server.requests)[0] == "GET /x/0 HTTP/1.1"
        finally:
            await transport.close()
        assert transport.open_connections == 0


async def test_connections_the_server_closes_are_not_reused() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if await server.read_request(reader) is None:
            return
        # the first connection closes after answering, without saying so; the next says Connection: close
        writer.write(reply(extra="Connection: close\r\n" if server.connections > 1 else ""))
        await writer.drain()

    server = Server(handle)
    async with running(server) as port:
        transport = transport_for(port)
        try:
            await transport.request("GET", "/a")
            await eventually(lambda: _true(transport.open_connections == 0))  # dropped from the pool
            await transport.request("GET", "/b")
            assert transport.open_connections == 0  # Connection: close: never idle
            await transport.request("GET", "/c")
            assert [conn for conn, _ in server.requests] == [1, 2, 3]
        finally:
            await transport.close()


def _closing_on_second_request(server_ref: list[Server]) -> Handler:
    """Answers the first request of each connection; closes without answering at the second (the
    race of a server closing an idle connection as the client sends on it)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if await server_ref[0].read_request(reader) is None:
            return
        writer.write(reply())
        await server_ref[0].read_request(reader)

    return handle


async def test_a_get_on_a_reused_connection_the_server_closed_is_retried_once() -> None:
    ref: list[Server] = []
    server = Server(_closing_on_second_request(ref))
    ref.append(server)
    async with running(server) as port:
        transport = transport_for(port)
        try:
            await transport.request("GET", "/first")
            assert await transport.request("GET", "/second") == b"{}"  # on a new connection
            first, second = "GET /first HTTP/1.1", "GET /second HTTP/1.1"
            assert server.requests == [(1, first), (1, second), (2, second)]
            # a PATCH may have been acted on: not sent again
            with pytest.raises(ServerError) as caught:
                await transport.request("PATCH", "/third", body=b"{}")
            assert caught.value.code == 503 and caught.value.reason == "ServiceUnavailable"
            assert isinstance(caught.value.__cause__, ServerDisconnected)
            assert str(caught.value).startswith("503 ServiceUnavailable: PATCH /third: the server closed")
            assert [line for _, line in server.requests].count("PATCH /third HTTP/1.1") == 1
        finally:
            await transport.close()


async def test_a_get_on_a_new_connection_is_not_retried() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)  # and close without answering

    server = Server(handle)
    async with running(server) as port:
        transport = transport_for(port)
        try:
            with pytest.raises(ServerError, match="GET /x: the server closed the connection without answer"):
                await transport.request("GET", "/x")
            assert len(server.requests) == 1
        finally:
            await transport.close()

    async def hang_up_at_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        pass  # closed as soon as accepted: before or after the request is sent, one error

    async with running(Server(hang_up_at_once)) as port:
        transport = transport_for(port)
        try:
            with pytest.raises(ServerError, match="GET /x: the server closed the connection") as caught:
                await transport.request("GET", "/x")
            assert isinstance(caught.value.__cause__, ServerDisconnected)
        finally:
            await transport.close()


async def test_timeout_and_cancellation_close_the_connection() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        await server.read_request(reader)  # never answers; returns when the client closes

    server = Server(handle)
    async with running(server) as port:
        transport = transport_for(port, timeout=0.2)
        try:
            with pytest.raises(ServerTimeout, match=r"GET /slow: timed out after 0.2s") as caught:
                await transport.request("GET", "/slow")
            assert isinstance(caught.value.__cause__, TimeoutError)
            await eventually(lambda: _true(server.closed_by_client == 1))
            assert transport.open_connections == 0
            call = asyncio.create_task(transport.request("GET", "/cancelled"))
            await eventually(lambda: _true(len(server.requests) == 2))
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            await eventually(lambda: _true(server.closed_by_client == 2))
            assert transport.open_connections == 0
        finally:
            await transport.close()


async def test_an_answer_still_arriving_outlives_the_timeout_and_silence_does_not() -> None:
    """The timeout bounds silence, not a long answer: a list of 100k objects (250 MB) that a loaded
    kube-apiserver sends for longer than 30 s arrives whole (it timed out, and the informer listed it
    again and again); an answer that stops half way still fails."""
    pieces = [b'{"items":[', *([b'{"a":1},'] * 9), b'{"a":1}]}']
    body = b"".join(pieces)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (request := await server.read_request(reader)) is not None:
            writer.write(f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode())
            stop = len(pieces) // 2 if request[0].startswith("GET /stalls") else len(pieces)
            for piece in pieces[:stop]:
                writer.write(piece)
                await writer.drain()
                await asyncio.sleep(0.1)  # the whole answer takes 1 s, five times the timeout
            if stop < len(pieces):
                await reader.read()  # silent until the client gives up

    server = Server(handle)
    async with running(server) as port:
        transport = transport_for(port, timeout=0.2)
        try:
            assert await transport.request("GET", "/trickles") == body
            with pytest.raises(ServerTimeout, match=r"GET /stalls: timed out after 0.2s"):
                await transport.request("GET", "/stalls")
            await eventually(lambda: _true(server.closed_by_client == 1))
        finally:
            await transport.close()


async def test_refused_connections_and_malformed_responses_are_503() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: refused
        transport = transport_for(port)
        try:
            with pytest.raises(ServerError) as caught:
                await transport.request("GET", "/x")
        finally:
            await transport.close()
    cause = caught.value.__cause__
    assert caught.value.code == 503 and isinstance(cause, ConnectError)
    assert isinstance(cause.os_error, ConnectionRefusedError) and cause.__cause__ is cause.os_error
    assert str(caught.value).startswith(f"503 ServiceUnavailable: GET /x: cannot connect to 127.0.0.1:{port}")

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: twelve\r\n\r\n")
        await writer.drain()
        await server.read_request(reader)

    server = Server(handle)
    async with running(server) as port:
        transport = transport_for(port)
        try:
            with pytest.raises(ServerError, match=r"malformed response: .*Content-Length") as bad:
                await transport.request("GET", "/x")
            assert bad.value.code == 503 and isinstance(bad.value.__cause__, ProtocolError)
            assert transport.open_connections == 0
        finally:
            await transport.close()


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


WATCH_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"


async def test_watch_lines_span_chunks_have_no_length_cap_and_a_truncated_stream_raises() -> None:
    big = json.dumps({"type": "ADDED", "object": {"data": "x" * 300_000}}).encode()
    ending = {"truncated chunk": b"10\r\nabc", "reset": b"", "torn chunk header": b"1"}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await server.read_request(reader)
        assert request is not None
        how = parse_qs(urlsplit(request[0].split(" ")[1]).query)["how"][0]
        writer.write(WATCH_HEAD + _chunk(b'{"a": 1}\n{"b"') + _chunk(b": 2}\n\n") + _chunk(big[:1000]))
        writer.write(_chunk(big[1000:] + b"\n") + ending[how])
        await writer.drain()
        if how == "reset":  # RST instead of FIN
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()

    server = Server(handle)
    async with running(server) as port:
        transport = transport_for(port)
        try:
            for how in ending:
                lines: list[bytes] = []
                with pytest.raises(ConnectionError):
                    async with transport.stream_lines("/w", {"watch": "true", "how": how}) as stream:
                        async for line in stream:
                            lines.append(line)
                expected = [b'{"a": 1}', b'{"b": 2}', big]
                # a reset may drop what the client had not read yet (the kernel's choice), never reorder it
                assert lines == (expected[: len(lines)] if how == "reset" else expected), how
            assert transport.open_connections == 0
        finally:
            await transport.close()


async def test_leaving_or_cancelling_a_watch_closes_its_connection() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await server.read_request(reader)
        if request is not None and "forbidden" in request[0]:
            status = json.dumps({"kind": "Status", "code": 403, "reason": "Forbidden", "message": "no"})
            writer.write(reply(status.encode(), "403 Forbidden"))
        else:
            writer.write(WATCH_HEAD + _chunk(b'{"type": "BOOKMARK"}\n'))
        await server.read_request(reader)  # returns when the client closes

    server = Server(handle)
    async with running(server) as port:
        transport = transport_for(port)
        try:
            async with transport.stream_lines("/w", {"watch": "true"}) as stream:
                assert await anext(stream) == b'{"type": "BOOKMARK"}'
            await eventually(lambda: _true(server.closed_by_client == 1))
            async with transport.stream_lines("/w", {"watch": "true"}) as stream:
                assert await anext(stream) == b'{"type": "BOOKMARK"}'
                await stream.aclose()  # closing the lines, still inside the block
                await eventually(lambda: _true(server.closed_by_client == 2))

            async def consume() -> None:
                async with transport.stream_lines("/w", {"watch": "true"}) as lines:
                    async for _ in lines:
                        pass

            task = asyncio.create_task(consume())
            await eventually(lambda: _true(len(server.requests) == 3))
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await eventually(lambda: _true(server.closed_by_client == 3))
            with pytest.raises(Forbidden, match="no"):
                async with transport.stream_lines("/w", {"watch": "true", "forbidden": "1"}):
                    pass
            assert transport.open_connections == 0
        finally:
            await transport.close()


async def _true(value: bool) -> bool:
    return value


async def test_connections_keep_tcp_keepalive_on_with_client_go_s_figures() -> None:
    """A peer that vanished (half-open connection, a NAT that dropped its state) is found by the kernel's
    probes: on after 30 s idle, every 15 s, 9 unanswered ones close it (Go's dialer, KeepAlive 30 s)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (request := await server.read_request(reader)) is not None:
            if "watch" in request[0]:
                writer.write(WATCH_HEAD + _chunk(b'{"type": "BOOKMARK"}\n'))
            else:
                writer.write(reply())

    def options(conn: Connection) -> dict[str, int]:
        assert conn.transport is not None
        sock = conn.transport.get_extra_info("socket")
        names = [n for n in ("TCP_KEEPIDLE", "TCP_KEEPINTVL", "TCP_KEEPCNT") if hasattr(socket, n)]
        got = {n: sock.getsockopt(socket.IPPROTO_TCP, getattr(socket, n)) for n in names}
        return {"SO_KEEPALIVE": sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE), **got}

    expected = {"SO_KEEPALIVE": 1, "TCP_KEEPIDLE": 30, "TCP_KEEPINTVL": 15, "TCP_KEEPCNT": 9}
    server = Server(handle)
    async with running(server) as port:
        transport = transport_for(port)
        try:
            await transport.request("GET", "/x")
            pool = transport._get_pool()
            assert [options(c) for c in pool._idle] == [expected]  # a request's kept-alive connection
            watch, status = await pool.stream(
                b"GET /w?watch=true HTTP/1.1\r\nHost: x\r\n\r\n", pool.loop.time() + 5
            )
            try:
                assert status == 200 and options(watch) == expected  # a watch's own connection
            finally:
                watch.close()
        finally:
            await transport.close()


async def test_close_idle_connections_closes_only_the_idle_ones() -> None:
    gate = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (request := await server.read_request(reader)) is not None:
            if "slow" in request[0]:
                await gate.wait()
            writer.write(reply())

    server = Server(handle)
    async with running(server) as port:
        transport = transport_for(port)
        try:
            await asyncio.gather(transport.request("GET", "/a"), transport.request("GET", "/b"))
            slow = asyncio.create_task(transport.request("GET", "/slow"))
            await eventually(lambda: _true(any("slow" in line for _, line in server.requests)))
            assert transport.open_connections == 2
            assert transport.close_idle_connections() == 1  # the busy one is left alone
            assert transport.open_connections == 1
            gate.set()
            assert await slow == b"{}"
        finally:
            await transport.close()


ON_UVLOOP = [
    test_connections_keep_tcp_keepalive_on_with_client_go_s_figures,
    test_connections_are_kept_alive_and_capped,
    test_a_get_on_a_reused_connection_the_server_closed_is_retried_once,
    test_timeout_and_cancellation_close_the_connection,
    test_refused_connections_and_malformed_responses_are_503,
    test_watch_lines_span_chunks_have_no_length_cap_and_a_truncated_stream_raises,
    test_leaving_or_cancelling_a_watch_closes_its_connection,
]


@pytest.mark.parametrize("case", ON_UVLOOP, ids=[case.__name__.removeprefix("test_") for case in ON_UVLOOP])
def test_on_uvloop(case: Callable[[], Awaitable[None]]) -> None:
    """The same on uvloop, the loop `runtime.run` starts operators on where it is installed."""
    uvloop = pytest.importorskip("uvloop")
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(case())  # type: ignore[arg-type]
