"""Issue 28 item 3: half-sent requests on the runtime's own servers (health, metrics, webhook) are
closed after the read-header timeout (Go's ReadHeaderTimeout, 32 s by default; a small one injected
here), while complete requests are still served."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import httpx2
import pytest

from pyscaffold_op.runtime.servers import server as runtime_server
from pyscaffold_op.runtime.servers.server import start_site
from pyscaffold_op.runtime.webhook import WebhookServer, validate_path, webhook_managed_by
from tests.runtime.test_webhook_server import review, widget
from tests.runtime.webhook_kinds import WidgetValidator
from tests.runtime.widgets import Widget

N = 100  # the probe's count


async def _closed_by_server(reader: asyncio.StreamReader) -> bool:
    try:
        return await asyncio.wait_for(reader.read(), timeout=30) == b""  # EOF, no answer
    except (ConnectionResetError, ssl.SSLError):
        return True


async def _half_sent(port: int, tls: ssl.SSLContext | None, *, body: str = "") -> bool:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=tls)
    try:
        if body:  # headers complete, the body never
            head = f"POST {body} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            writer.write(head.encode() + b"Content-Length: 100\r\n\r\n{")
        else:
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Half: ")
        await writer.drain()
        if body:
            data = await asyncio.wait_for(reader.read(), timeout=30)
            return data.startswith(b"HTTP/1.1 408")
        return await _closed_by_server(reader)
    finally:
        writer.close()


def test_the_default_is_go_s_32_seconds() -> None:
    assert runtime_server.READ_HEADER_TIMEOUT == 32.0
    assert WebhookServer().read_header_timeout == 32.0


async def test_health_and_metrics_servers_close_half_sent_requests() -> None:
    from aiohttp import web

    async def ok(_request: Any) -> Any:
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/healthz", ok)
    site = await start_site(app, "127.0.0.1:0", read_header_timeout=0.5)
    assert site is not None
    runner, (_host, port) = site
    try:
        closed = await asyncio.gather(*(_half_sent(port, None) for _ in range(N)))
        assert all(closed)
        async with httpx2.AsyncClient(timeout=10) as c:
            assert (await c.get(f"http://127.0.0.1:{port}/healthz")).text == "ok"
    finally:
        await runner.cleanup()
    with pytest.raises(ValueError, match="positive"):
        await start_site(app, "127.0.0.1:0", read_header_timeout=0)


async def test_webhook_server_closes_half_sent_requests() -> None:
    s = WebhookServer(host="127.0.0.1", port=0, read_header_timeout=0.5)
    webhook_managed_by(s).for_(Widget).with_validator(WidgetValidator()).complete()
    async with s:
        assert s.ca_bundle is not None and s.address is not None
        tls = ssl.create_default_context(cadata=s.ca_bundle.decode())
        tls.check_hostname = False
        closed = await asyncio.gather(*(_half_sent(s.address[1], tls) for _ in range(N)))
        assert all(closed)
        assert await _half_sent(s.address[1], tls, body=validate_path(Widget))  # a trickled body: 408, closed
        async with httpx2.AsyncClient(verify=tls, timeout=10) as c:
            r = await c.post(s.url + validate_path(Widget), json=review("CREATE", widget(color="red")))
        assert r.json()["response"]["allowed"] is True
