"""httpx2 transports (what lightkube 1.x uses) that call the emulator in-process, without sockets.

`AsyncTransport` is the fast path for tests: same event loop as the server, or the server's loop in a
thread. `SyncTransport` serves lightkube's sync `Client` against a server started in a thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Coroutine, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar

import httpx2

from pyscaffold_op.envtest.server.handlers import Api, HttpRequest, Response

T = TypeVar("T")


def _to_request(request: httpx2.Request, body: bytes) -> HttpRequest:
    return HttpRequest.build(
        request.method, request.url.path, request.url.query.decode(), dict(request.headers), body
    )


def _headers(resp: Response) -> dict[str, str]:
    return {"content-type": resp.content_type, **resp.headers}


class _AsyncStream(httpx2.AsyncByteStream):
    def __init__(self, gen: AsyncGenerator[bytes, None], run: Any) -> None:
        self._gen = gen
        self._run = run

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            try:
                chunk = await self._run(self._gen.__anext__())
            except StopAsyncIteration:
                return
            yield chunk

    async def aclose(self) -> None:
        await self._run(self._gen.aclose())


class AsyncTransport(httpx2.AsyncBaseTransport):
    def __init__(self, api: Api, loop: asyncio.AbstractEventLoop) -> None:
        self._api = api
        self._loop = loop

    async def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        if asyncio.get_running_loop() is self._loop:
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._loop))

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        resp = await self._run(self._api.handle(_to_request(request, body)))
        if resp.stream is not None:
            return httpx2.Response(
                resp.status, headers=_headers(resp), stream=_AsyncStream(resp.stream, self._run)
            )
        return httpx2.Response(resp.status, headers=_headers(resp), content=resp.body)


class _SyncStream(httpx2.SyncByteStream):
    def __init__(self, gen: AsyncGenerator[bytes, None], loop: asyncio.AbstractEventLoop) -> None:
        self._gen = gen
        self._loop = loop

    def __iter__(self) -> Iterator[bytes]:
        while True:
            fut: Future[bytes] = asyncio.run_coroutine_threadsafe(self._next(), self._loop)
            try:
                yield fut.result()
            except StopAsyncIteration:
                return

    async def _next(self) -> bytes:
        return await self._gen.__anext__()

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._gen.aclose(), self._loop).result()


class SyncTransport(httpx2.BaseTransport):
    """For sync clients; the server must run on another thread (`Environment.start_in_thread`)."""

    def __init__(self, api: Api, loop: asyncio.AbstractEventLoop) -> None:
        self._api = api
        self._loop = loop

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        body = request.read()
        resp = asyncio.run_coroutine_threadsafe(
            self._api.handle(_to_request(request, body)), self._loop
        ).result()
        if resp.stream is not None:
            return httpx2.Response(
                resp.status, headers=_headers(resp), stream=_SyncStream(resp.stream, self._loop)
            )
        return httpx2.Response(resp.status, headers=_headers(resp), content=resp.body)


# -- lightkube clients for an Environment (lightkube is a test dependency, not the emulator's) -------


def lightkube_config(env: Any) -> Any:
    """A `lightkube.KubeConfig` for a running `Environment`."""
    from lightkube import KubeConfig
    from lightkube.config.models import Cluster, User

    return KubeConfig.from_one(
        cluster=Cluster(server=env.url),
        user=User(token=env.token),
        context_name=env.context_name,
        namespace=env.namespace,
        fname=env.kubeconfig_path,
    )


def transport(env: Any) -> AsyncTransport:
    """An httpx2 async transport that calls the emulator directly (no sockets)."""
    assert env.loop is not None, "start the environment first"
    return AsyncTransport(env.api, env.loop)


def sync_transport(env: Any) -> SyncTransport:
    """An httpx2 sync transport; needs the server on another thread (`start_in_thread`)."""
    assert env.loop is not None, "start the environment first"
    return SyncTransport(env.api, env.loop)


def lightkube_client(env: Any, *, in_process: bool = True, **kwargs: Any) -> Any:
    """A `lightkube.AsyncClient` for a running `Environment`, in-process by default."""
    from lightkube import AsyncClient

    if in_process:
        kwargs.setdefault("transport", transport(env))
    return AsyncClient(lightkube_config(env), **kwargs)
