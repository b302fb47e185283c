"""A TCP proxy between a client and an API server that can freeze: the connections open at that moment
stop carrying bytes in either direction but stay open, as behind a hung load balancer or a NAT that
dropped its state without telling anyone. The proxy's own kernel still answers TCP keepalive probes,
as a real middlebox's does; connections opened after the freeze are forwarded normally. TLS passes
through untouched (the client verifies the server's certificate as if connected directly)."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field


@dataclass(eq=False)
class _Pair:
    client: asyncio.StreamWriter
    server: asyncio.StreamWriter
    frozen: asyncio.Event = field(default_factory=asyncio.Event)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)


class FreezableProxy:
    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.port = 0
        self.connections = 0  # accepted in all
        self._pairs: set[_Pair] = set()
        self._server: asyncio.Server | None = None

    @property
    def url_host(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self) -> FreezableProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def freeze(self) -> int:
        """Stop forwarding on every open connection, keeping them open; returns how many."""
        for pair in self._pairs:
            pair.frozen.set()
        return len(self._pairs)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = [t for pair in self._pairs for t in pair.tasks]
        for pair in list(self._pairs):
            self._close(pair)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._pairs.clear()

    async def __aenter__(self) -> FreezableProxy:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            return
        pair = _Pair(writer, up_writer)
        self._pairs.add(pair)
        pair.tasks = [
            asyncio.create_task(self._pump(reader, up_writer, pair)),
            asyncio.create_task(self._pump(up_reader, writer, pair)),
        ]
        try:
            await asyncio.gather(*pair.tasks, return_exceptions=True)
        finally:
            self._pairs.discard(pair)
            self._close(pair)

    @staticmethod
    async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, pair: _Pair) -> None:
        """Copy one direction until EOF, or until frozen: then hold on, forwarding nothing."""
        frozen = asyncio.ensure_future(pair.frozen.wait())
        try:
            while True:
                read = asyncio.ensure_future(reader.read(65536))
                await asyncio.wait({read, frozen}, return_when=asyncio.FIRST_COMPLETED)
                if frozen.done():
                    read.cancel()  # what is in flight stays in the kernel's buffers
                    await asyncio.Future()  # until the proxy stops
                data = read.result()
                if not data:
                    break
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            frozen.cancel()
            if not pair.frozen.is_set():
                FreezableProxy._close(pair)

    @staticmethod
    def _close(pair: _Pair) -> None:
        for w in (pair.client, pair.server):
            with contextlib.suppress(Exception):
                w.close()
