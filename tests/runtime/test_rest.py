"""The HTTP layer's credentials: a rotated token file is re-read after a 401, as client-go does."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web
from lightkube import KubeConfig
from lightkube.config.models import Cluster, User

from pyscaffold_op.runtime.errors import NotFound, Unauthorized
from pyscaffold_op.runtime.rest import RestTransport


async def test_token_file_rotation_and_error_mapping(tmp_path: Path) -> None:
    accepted = {"Bearer old"}
    seen: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        seen.append(auth)
        if auth not in accepted:
            return web.json_response({"kind": "Status", "code": 401, "reason": "Unauthorized"}, status=401)
        if request.path.endswith("/missing"):
            return web.json_response({"kind": "Status", "code": 404, "reason": "NotFound"}, status=404)
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    token = tmp_path / "token"
    token.write_text("old")
    cfg = KubeConfig.from_one(
        cluster=Cluster(server=f"http://127.0.0.1:{port}"), user=User(token_file=str(token))
    )
    transport = RestTransport(cfg)
    try:
        assert await transport.request("GET", "/api/v1/x") == b'{"ok": true}'
        token.write_text("new")  # the kubelet rotated the service account token
        accepted.clear()
        accepted.add("Bearer new")
        assert await transport.request("GET", "/api/v1/x") == b'{"ok": true}'
        assert seen == ["Bearer old", "Bearer old", "Bearer new"]
        try:
            await transport.request("GET", "/api/v1/missing")
        except NotFound:
            pass
        else:
            raise AssertionError("404 was not mapped to NotFound")
        accepted.clear()
        try:
            await transport.request("GET", "/api/v1/x")
        except Unauthorized:
            pass
        else:
            raise AssertionError("401 was not mapped to Unauthorized")
    finally:
        await transport.close()
        await runner.cleanup()
