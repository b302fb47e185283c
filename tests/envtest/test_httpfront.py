"""The HTTP/1.1 front over raw sockets: what clients rely on besides the API's own answers."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Callable

import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.envtest.server.decode import MAX_BODY
from pyscaffold_op.envtest.server.httpfront import MAX_HEADER_BYTES, READ_LIMIT, Connection, Front

from .conftest import CRDS, cm

CMS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
async def env() -> AsyncIterator[Environment]:
    async with Environment(crd_paths=[CRDS], bookmark_interval=60) as e:
        yield e


async def connect(
    env: Environment, rcvbuf: int | None = None
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    if rcvbuf is None:
        return await asyncio.open_connection("127.0.0.1", env.port)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)  # before connect: sets the window
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", env.port))
    return await asyncio.open_connection(sock=sock)


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    """One response with a Content-Length body."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    lines = head.decode("latin-1").split("\r\n")
    code = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return code, headers, body


async def read_chunk(reader: asyncio.StreamReader) -> bytes:
    size = int((await asyncio.wait_for(reader.readline(), 10)).strip(), 16)
    data = await reader.readexactly(size + 2)
    assert data.endswith(b"\r\n")
    return data[:-2]


def request(method: str, path: str, body: bytes = b"", *headers: str, version: str = "1.1") -> bytes:
    lines = [f"{method} {path} HTTP/{version}", "Host: x", *headers]
    if body:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def front(env: Environment) -> Front:
    assert isinstance(env._runner, Front)
    return env._runner


async def until(cond: Callable[[], bool], within: float = 10) -> None:
    """Wait for a condition on the server's state (it has no event to wait on)."""
    async with asyncio.timeout(within):
        while not cond():  # noqa: ASYNC110
            await asyncio.sleep(0.01)


def watchers(env: Environment) -> int:
    return sum(len(ws) for ws in env.store._watchers.values())


async def test_keep_alive_serves_many_requests_on_one_connection(env: Environment) -> None:
    reader, writer = await connect(env)
    for i in range(3):
        writer.write(request("POST", CMS, json.dumps(cm(f"k{i}")).encode()))
        code, headers, body = await read_response(reader)
        assert code == 201, body
        assert json.loads(body)["metadata"]["name"] == f"k{i}"
        assert headers["content-type"] == "application/json"
        assert headers["cache-control"] == "no-cache, private"
        assert headers["date"].endswith(" GMT")
        assert "connection" not in headers
    assert len(front(env).connections) == 1
    writer.close()


async def test_pipelined_requests_are_answered_in_order(env: Environment) -> None:
    reader, writer = await connect(env)
    names = [f"p{i}" for i in range(20)]  # more than the pending limit: reading pauses, then resumes
    writer.write(b"".join(request("POST", CMS, json.dumps(cm(n)).encode()) for n in names))
    writer.write(request("GET", f"{CMS}/p7"))
    for n in names:
        code, _h, body = await read_response(reader)
        assert code == 201 and json.loads(body)["metadata"]["name"] == n
    code, _h, body = await read_response(reader)
    assert code == 200 and json.loads(body)["metadata"]["name"] == "p7"
    writer.close()


async def test_connection_close_and_http10(env: Environment) -> None:
    reader, writer = await connect(env)
    writer.write(request("GET", "/version", b"", "Connection: close"))
    code, headers, _body = await read_response(reader)
    assert code == 200 and headers["connection"] == "close"
    assert await asyncio.wait_for(reader.read(), 10) == b""
    # HTTP/1.0 without keep-alive: answered, then closed
    reader, writer = await connect(env)
    writer.write(request("GET", "/version", version="1.0"))
    code, headers, body = await read_response(reader)
    assert code == 200 and json.loads(body)["major"] == "1"
    assert await asyncio.wait_for(reader.read(), 10) == b""
    # HTTP/1.0 asking for keep-alive keeps the connection
    reader, writer = await connect(env)
    writer.write(request("GET", "/version", b"", "Connection: keep-alive", version="1.0"))
    code, headers, _body = await read_response(reader)
    assert headers["connection"] == "keep-alive"
    writer.write(request("GET", "/version", b"", "Connection: keep-alive", version="1.0"))
    code, _h, _b = await read_response(reader)
    assert code == 200
    writer.close()


async def test_chunked_request_body(env: Environment) -> None:
    reader, writer = await connect(env)
    body = json.dumps(cm("chunky", a="x" * 5000)).encode()
    parts = [body[:100], body[100:4000], body[4000:]]
    writer.write(
        f"POST {CMS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n".encode()
        + b"".join(b"%x\r\n%b\r\n" % (len(p), p) for p in parts)
        + b"0\r\n\r\n"
    )
    code, _h, out = await read_response(reader)
    assert code == 201, out
    assert json.loads(out)["data"]["a"] == "x" * 5000
    writer.close()


async def test_expect_100_continue(env: Environment) -> None:
    reader, writer = await connect(env)
    body = json.dumps(cm("expecting")).encode()
    head, _, _ = request("POST", CMS, body, "Expect: 100-continue").partition(b"\r\n\r\n")
    writer.write(head + b"\r\n\r\n")
    assert await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10) == b"HTTP/1.1 100 Continue\r\n\r\n"
    writer.write(body)
    code, _h, out = await read_response(reader)
    assert code == 201, out
    writer.close()


async def test_malformed_request_is_400_and_closes(env: Environment) -> None:
    reader, writer = await connect(env)
    writer.write(b"NOT A REQUEST\r\n\r\n")
    code, headers, body = await read_response(reader)
    assert (code, body) == (400, b"400 Bad Request")
    assert headers["connection"] == "close"
    assert await asyncio.wait_for(reader.read(), 10) == b""
    # a bad chunk size in a body is as malformed
    reader, writer = await connect(env)
    writer.write(f"POST {CMS} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".encode())
    code, _h, _b = await read_response(reader)
    assert code == 400


async def test_headers_past_one_mebibyte_are_431(env: Environment) -> None:
    reader, writer = await connect(env)
    writer.write(request("GET", "/version", b"", f"X-Big: {'a' * MAX_HEADER_BYTES}"))
    code, _h, body = await read_response(reader)
    assert (code, body) == (431, b"431 Request Header Fields Too Large")
    assert await asyncio.wait_for(reader.read(), 10) == b""


async def test_large_bodies(env: Environment) -> None:
    reader, writer = await connect(env)
    # under the limit: served
    # under the body limit and under the 1 MiB a ConfigMap's data may hold
    big = json.dumps(cm("big", a="x" * (MAX_BODY // 4))).encode()
    writer.write(request("POST", CMS, big))
    code, _h, _b = await read_response(reader)
    assert code == 201
    # over MAX_BODY and over what the front keeps: the API server's 413 Status, connection still usable
    for size in (MAX_BODY + 10, READ_LIMIT + 10):
        writer.write(request("POST", CMS, b"x" * size))
        code, _h, out = await read_response(reader)
        assert code == 413
        assert json.loads(out)["message"] == f"Request entity too large: limit is {MAX_BODY}"
    writer.write(request("GET", f"{CMS}/big"))
    code, _h, _b = await read_response(reader)
    assert code == 200
    writer.close()


async def test_watch_is_chunked_and_ends_with_the_last_chunk(env: Environment) -> None:
    reader, writer = await connect(env)
    writer.write(request("GET", f"{CMS}?watch=true&timeoutSeconds=1"))
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"Transfer-Encoding: chunked\r\n" in head
    await until(lambda: watchers(env) == 1)
    env.store.create(env.store.registry.get("", "v1", "configmaps"), "default", cm("seen"))  # type: ignore[arg-type]
    event = json.loads(await read_chunk(reader))
    assert event["type"] == "ADDED" and event["object"]["metadata"]["name"] == "seen"
    (watcher,) = (w for ws in env.store._watchers.values() for w in ws)
    assert watcher.direct and watcher.queue.empty()  # written by the sink, not through the queue
    assert await read_chunk(reader) == b""  # timeoutSeconds: the terminating chunk
    # and the connection serves the next request
    writer.write(request("GET", "/version"))
    code, _h, _b = await read_response(reader)
    assert code == 200
    writer.close()


async def test_http10_watch_streams_raw_until_close(env: Environment) -> None:
    reader, writer = await connect(env)
    writer.write(request("GET", f"{CMS}?watch=true&timeoutSeconds=1", version="1.0"))
    data = await asyncio.wait_for(reader.read(), 10)  # EOF after the timeout
    head, _, _body = data.partition(b"\r\n\r\n")
    assert b"Transfer-Encoding" not in head and b"Connection: close" in head


async def test_client_disconnect_mid_watch_unregisters_the_watcher(env: Environment) -> None:
    reader, writer = await connect(env)
    writer.write(request("GET", f"{CMS}?watch=true"))
    await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    await until(lambda: watchers(env) == 1)
    writer.close()
    await until(lambda: watchers(env) == 0 and not front(env).connections)


async def test_slow_watcher_is_paused_not_buffered(env: Environment) -> None:
    reader, writer = await connect(env, rcvbuf=4096)
    writer.write(request("GET", f"{CMS}?watch=true"))
    await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    await until(lambda: watchers(env) == 1)
    (conn,) = front(env).connections
    assert isinstance(conn, Connection) and conn.transport is not None
    sock = conn.transport.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    conn.transport.set_write_buffer_limits(high=16384)
    info = env.store.registry.get("", "v1", "configmaps")
    assert info is not None
    total = 300
    for i in range(total):  # ~2 KB each, ~600 KB in all, while the client reads nothing
        env.store.create(info, "default", cm(f"slow{i}", a="y" * 2000))
        await asyncio.sleep(0)
    await until(lambda: conn._write_paused)
    (watcher,) = (w for ws in env.store._watchers.values() for w in ws)
    await until(lambda: watcher.queue.qsize() > 0)
    # what the client has not taken waits in the watcher's queue, not in the transport's buffer
    assert conn.transport.get_write_buffer_size() < 16384 + 40 * 2300
    names: list[str] = []
    while len(names) < total:
        for line in (await read_chunk(reader)).splitlines():
            names.append(json.loads(line)["object"]["metadata"]["name"])
    assert names == [f"slow{i}" for i in range(total)]
    writer.close()


async def test_shutdown_closes_open_watches() -> None:
    env = Environment()
    await env.start()
    reader, writer = await connect(env)
    writer.write(request("GET", f"{CMS}?watch=true"))
    await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    await until(lambda: watchers(env) == 1)
    await env.astop()
    await asyncio.wait_for(reader.read(), 10)  # EOF: the server closed the connection
    assert watchers(env) == 0
    writer.close()


async def test_idle_connection_is_closed_after_the_header_timeout(env: Environment) -> None:
    f = front(env)
    f.header_timeout = 0.3
    reader, writer = await connect(env)
    writer.write(request("GET", "/version"))
    code, _h, _b = await read_response(reader)
    assert code == 200
    assert await asyncio.wait_for(reader.read(), 10) == b""  # idle past the timeout: closed
    writer.close()


async def test_events_of_one_burst_go_out_as_one_chunk(env: Environment) -> None:
    reader, writer = await connect(env)
    writer.write(request("GET", f"{CMS}?watch=true"))
    await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    await until(lambda: watchers(env) == 1)
    info = env.store.registry.get("", "v1", "configmaps")
    assert info is not None
    for i in range(50):  # one loop iteration: one write to the connection
        env.store.create(info, "default", cm(f"burst{i}"))
    lines = (await read_chunk(reader)).splitlines()
    assert [json.loads(ln)["object"]["metadata"]["name"] for ln in lines] == [f"burst{i}" for i in range(50)]
    writer.close()


async def test_upgrade_is_answered_then_closed(env: Environment) -> None:
    reader, writer = await connect(env)
    writer.write(request("GET", "/version", b"", "Connection: Upgrade", "Upgrade: websocket") + b"junk")
    code, _h, body = await read_response(reader)
    assert code == 200 and json.loads(body)["major"] == "1"  # no switching protocols: a plain answer
    assert await asyncio.wait_for(reader.read(), 10) == b""
    writer.close()


async def test_head_gets_the_headers_without_the_body(env: Environment) -> None:
    reader, writer = await connect(env)
    writer.write(request("HEAD", "/version"))
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    assert head.startswith(b"HTTP/1.1 ")
    writer.write(request("GET", "/version"))  # the next answer follows at once: no body was sent
    code, _h, body = await read_response(reader)
    assert code == 200 and json.loads(body)["major"] == "1"
    writer.close()


async def test_request_line_without_version_is_400(env: Environment) -> None:
    """`GET /version` alone parses as HTTP/0.9; Go's server refuses it (issue 28)."""
    reader, writer = await connect(env)
    writer.write(b"GET /version\r\n\r\n")
    code, headers, body = await read_response(reader)
    assert (code, body, headers["connection"]) == (400, b"400 Bad Request", "close")
    assert await asyncio.wait_for(reader.read(), 10) == b""


async def test_connect_is_answered_at_once(env: Environment) -> None:
    """CONNECT (authority-form `host:port`, or a path) gets its answer without waiting for the
    header timeout: kube-apiserver answers 404 and 405."""
    reader, writer = await connect(env)
    writer.write(b"CONNECT 127.0.0.1:80 HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n")
    code, _h, _b = await read_response(reader)
    assert code == 404
    reader, writer = await connect(env)
    writer.write(b"CONNECT /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n\r\n")
    code, _h, body = await read_response(reader)
    assert code == 405 and json.loads(body)["reason"] == "MethodNotAllowed"
