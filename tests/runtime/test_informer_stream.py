"""A watch stream that breaks mid-way is resumed from the last resourceVersion, without a relist and
without backoff (client-go treats it as a closed watch)."""

from __future__ import annotations

import asyncio
import json

from aiohttp import web

from pyscaffold_op.runtime.cache.informer import Informer
from pyscaffold_op.runtime.client.rest import RestTransport
from pyscaffold_op.runtime.client.restconfig import RestConfig
from pyscaffold_op.runtime.objects.kinds import info_for
from pyscaffold_op.testing import eventually

from .widgets import Widget


def _obj(name: str, rv: str) -> dict[str, object]:
    return {
        "apiVersion": "test.pyop.io/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": rv},
    }


async def _true(v: bool) -> bool:
    return v


async def test_broken_watch_stream_resumes_from_last_version() -> None:
    watches: list[str] = []
    finish = asyncio.Event()
    # The server's current resourceVersion, as a list (the informer's liveness probe included) reports it.
    current = ["1"]

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.query.get("watch") != "true":
            items = [_obj("a", "1")] if current[0] == "1" else []
            return web.json_response(
                {"kind": "WidgetList", "metadata": {"resourceVersion": current[0]}, "items": items}
            )
        watches.append(request.query["resourceVersion"])
        resp = web.StreamResponse()
        await resp.prepare(request)
        if len(watches) == 1:
            current[0] = "2"
            await resp.write(json.dumps({"type": "ADDED", "object": _obj("b", "2")}).encode() + b"\n")
            await resp.write(b'{"type": "ADDED", "obj')  # half an event, then the connection dies
            assert request.transport is not None  # close() still flushes what was written
            request.transport.close()
            return resp
        current[0] = "3"
        await resp.write(json.dumps({"type": "ADDED", "object": _obj("c", "3")}).encode() + b"\n")
        await finish.wait()
        return resp

    app = web.Application()
    app.router.add_get("/apis/test.pyop.io/v1/widgets", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    transport = RestTransport(RestConfig(server=f"http://127.0.0.1:{port}"))
    informer = Informer(transport, info_for(Widget))
    informer.start()
    try:
        await eventually(lambda: _true("default/c" in informer.store), timeout=3)
        assert watches == ["1", "2"]  # resumed from b's version, no relist
        assert informer.stats["lists"] == 1 and informer.stats["errors"] == 0
        assert sorted(informer.store.list_keys()) == ["default/a", "default/b", "default/c"]
    finally:
        finish.set()
        await informer.stop()
        await transport.close()
        await runner.cleanup()
