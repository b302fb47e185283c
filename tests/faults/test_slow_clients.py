"""A client that opens a connection and trickles (or never finishes) its request headers is cut off,
like kube-apiserver's ReadHeaderTimeout; a complete request on the same server is still served."""

from __future__ import annotations

import asyncio

import httpx2

from pyscaffold_op.envtest.server.handlers import Api
from pyscaffold_op.envtest.server.httpfront import HEADER_TIMEOUT, serve
from pyscaffold_op.envtest.storage.objectstore import Store


async def test_trickling_headers_are_cut_off() -> None:
    assert HEADER_TIMEOUT == 32.0  # the real server's ReadHeaderTimeout
    runner, port = await serve(Api(Store()), port=0, header_timeout=0.5)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n")
        await writer.drain()

        async def trickle() -> None:  # one header byte at a time, never the blank line
            while True:
                writer.write(b"X")
                await writer.drain()
                await asyncio.sleep(0.05)

        feeder = asyncio.create_task(trickle())
        try:
            # the server closes the connection without answering: EOF (or a reset) ends the read
            try:
                data = await asyncio.wait_for(reader.read(), timeout=30)
            except ConnectionResetError:
                data = b""
        finally:
            feeder.cancel()
            writer.close()
        assert data == b""
        # a long request line (a big label selector) is fine: limits are the API server's 1 MiB
        selector = ",".join(f"k{i}=v" for i in range(2000))
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as c:
            r = await c.get("/api/v1/namespaces", params={"labelSelector": selector})
        assert r.status_code == 200 and len(selector) > 8190
    finally:
        await runner.cleanup()
