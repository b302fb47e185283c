"""The aiohttp front: aiohttp's low-level server hands every request to `Api.handle`, with chunked
watches. No Application, router or middleware: `Api` routes by itself, and aiohttp's URL dispatch and
response machinery cost more than serving a GET from the store (issue 18)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.http_parser import RawRequestMessage
from aiohttp.streams import StreamReader
from aiohttp.web_protocol import RequestHandler

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.handlers import MAX_BODY, Api, HttpRequest, error_response

# Bodies are read up to this size so that anything over MAX_BODY gets the API server's 413 Status.
_READ_LIMIT = MAX_BODY * 4
# kube-apiserver's http.Server: ReadHeaderTimeout 32 s, MaxHeaderBytes 1 MiB. aiohttp has one timer
# for "no complete request yet" (from the connection or the last response), which bounds both a
# client trickling its headers and an idle keep-alive connection (90 s on the real server).
HEADER_TIMEOUT = 32.0
_MAX_HEADER_BYTES = 1 << 20


_PLAIN = {"Cache-Control": "no-cache, private"}


def make_server(api: Api, **kwargs: Any) -> web.Server:
    """The low-level server: one handler for every request; `kwargs` go to aiohttp's RequestHandler."""

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        try:
            body = await request.read() if request.can_read_body else b""
        except web.HTTPRequestEntityTooLarge:
            resp = error_response(E.too_large(MAX_BODY))
            return web.Response(status=resp.status, body=resp.body, content_type="application/json")
        req = HttpRequest.build(
            request.method, request.path, request.query_string, dict(request.headers), body
        )
        resp = await api.handle(req)
        if resp.stream is None:
            headers = {"Content-Type": resp.content_type, **_PLAIN}
            if resp.headers:
                headers.update(resp.headers)
            return web.Response(status=resp.status, body=resp.body, headers=headers)
        out = web.StreamResponse(status=resp.status, headers={"Content-Type": resp.content_type, **_PLAIN})
        out.enable_chunked_encoding()
        stream = resp.stream
        try:
            await out.prepare(request)
            async for chunk in stream:
                await out.write(chunk)
            await out.write_eof()
        except ConnectionResetError:
            pass  # the client went away: the stream's finally unregisters the watcher
        finally:
            with contextlib.suppress(Exception):
                await stream.aclose()
        return out

    def request_factory(
        message: RawRequestMessage,
        payload: StreamReader,
        protocol: RequestHandler,
        writer: AbstractStreamWriter,
        task: asyncio.Task[None],
    ) -> web.BaseRequest:
        loop = asyncio.get_running_loop()
        return web.BaseRequest(message, payload, protocol, writer, task, loop, client_max_size=_READ_LIMIT)

    return web.Server(handle, request_factory=request_factory, handler_cancellation=True, **kwargs)


async def serve(
    api: Api, host: str = "127.0.0.1", port: int = 0, *, header_timeout: float = HEADER_TIMEOUT
) -> tuple[web.BaseRunner, int]:
    """Start serving; returns the runner (for cleanup) and the bound port. A connection that has not
    sent a complete request `header_timeout` seconds after opening (or after its last response) is
    closed, so slow or silent clients cannot hold connections forever."""
    server = make_server(
        api,
        access_log=None,
        keepalive_timeout=header_timeout,
        max_line_size=_MAX_HEADER_BYTES,
        max_field_size=_MAX_HEADER_BYTES,
    )
    runner = web.ServerRunner(server, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True)
    await site.start()
    bound_server = site._server  # the bound socket tells the free port we got
    sockets = getattr(bound_server, "sockets", None) or []
    bound = sockets[0].getsockname()[1] if sockets else port
    return runner, bound
