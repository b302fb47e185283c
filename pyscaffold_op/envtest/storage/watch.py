"""Watchers and the watch stream: newline-delimited JSON events, bookmarks, timeouts, 410 as ERROR,
and the silence of a watch from a resourceVersion not reached yet."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any

from pyscaffold_op.envtest.jsonutil import dumps

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Event


class Watcher:
    """One open watch: filters the store's events and queues their encoded lines.

    A client that stops reading is cut off once `MAX_BACKLOG` events wait for it, as the watch
    cache terminates unresponsive watchers; it must re-watch from its last resourceVersion."""

    MAX_BACKLOG = 10_000

    def __init__(
        self, api_version: str, namespace: str | None, pred: Callable[[dict[str, Any]], bool] | None
    ) -> None:
        self.api_version = api_version
        # e.g. rows of a Table for `kubectl get -w`; None sends the object itself
        self.transform: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        # stored form -> served form, for kinds served from another resource's storage
        self.convert: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        self.namespace = namespace
        self.pred = pred
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.closed = False
        # the HTTP front's writer: takes a line straight to the connection (no task wakeup per event)
        # and answers False while the client is not keeping up, which queues the line instead
        self.sink: Callable[[bytes], bool] | None = None
        self.direct = False  # set by `stream` once the replayed and initial lines are out

    def _match(self, obj: dict[str, Any] | None) -> bool:
        if obj is None:
            return False
        if self.namespace and obj["metadata"].get("namespace") != self.namespace:
            return False
        return self.pred is None or self.pred(obj)

    def offer(self, event: Event) -> None:
        """Queue the event if it concerns this watch; an object moving out of a selector's scope is
        seen as DELETED, moving in as ADDED (as the watch cache does)."""
        if self.closed:
            return
        convert = self.convert
        if self.namespace is None and self.pred is None and self.transform is None and convert is None:
            self._put(event.line(self.api_version))  # shared bytes: cheap fan-out
            return
        obj = convert(event.obj) if convert is not None else event.obj
        now = self._match(obj)
        typ = None
        if event.type == "MODIFIED":
            prev = event.prev
            if convert is not None and prev is not None:
                prev = convert(prev)
            before = self._match(prev)
            typ = "MODIFIED" if now and before else "ADDED" if now else "DELETED" if before else None
        elif now:
            typ = event.type
        if typ is None:
            return
        if typ == event.type and self.transform is None and convert is None:
            self._put(event.line(self.api_version))
        else:
            out = {**obj, "apiVersion": self.api_version}
            if self.transform is not None:
                out = self.transform(out)
            self._put(dumps({"type": typ, "object": out}) + b"\n")

    def _put(self, line: bytes) -> None:
        queue = self.queue
        if self.direct and queue.empty() and self.sink is not None and self.sink(line):
            return  # behind anything queued, never ahead of it
        if queue.qsize() >= self.MAX_BACKLOG:
            self.close()
            return
        queue.put_nowait(line)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.queue.put_nowait(None)


class FutureWatcher(Watcher):
    """A watch from a resourceVersion the store has not reached (a client of a server that restarted
    with fresh state, or one ahead of a lagging cache). kube-apiserver's watch cache accepts it and
    stays silent: it sends only events, and bookmarks, newer than the version asked for, so the
    watch comes alive once the store passes it (cacher.go's `process`, kube-apiserver v1.37)."""

    def __init__(
        self,
        api_version: str,
        namespace: str | None,
        pred: Callable[[dict[str, Any]], bool] | None,
        floor: int,
    ) -> None:
        super().__init__(api_version, namespace, pred)
        self.floor = floor

    def offer(self, event: Event) -> None:
        if event.rv > self.floor:
            super().offer(event)


def event_line(typ: str, obj: dict[str, Any]) -> bytes:
    return dumps({"type": typ, "object": obj}) + b"\n"


async def stream(
    watcher: Watcher,
    first: list[bytes],
    *,
    timeout_seconds: float | None,
    bookmark: Callable[[], bytes | None] | None,
    bookmark_interval: float,
    on_close: Callable[[], None],
) -> AsyncGenerator[bytes, None]:
    """The body of a watch response: replayed lines, then live events until timeout or close."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_seconds if timeout_seconds else None
    try:
        if first:
            yield b"".join(first)
        watcher.direct = watcher.sink is not None
        queue = watcher.queue
        while True:
            wait = None
            if deadline is not None:
                wait = deadline - loop.time()
                if wait <= 0:
                    break
            if bookmark is not None:
                wait = bookmark_interval if wait is None else min(wait, bookmark_interval)
            try:
                if queue.empty():
                    item = (
                        await asyncio.wait_for(queue.get(), wait) if wait is not None else await queue.get()
                    )
                else:
                    item = queue.get_nowait()
            except TimeoutError:
                if bookmark is not None and (deadline is None or loop.time() < deadline):
                    line = bookmark()
                    if line is not None:  # None: nothing newer than the watch's version to tell
                        yield line
                continue
            if item is None:
                break
            chunk = [item]
            while not queue.empty():  # batch what is already queued into one write
                nxt = queue.get_nowait()
                if nxt is None:
                    yield b"".join(chunk)
                    return
                chunk.append(nxt)
            yield b"".join(chunk)
    finally:
        watcher.closed = True
        on_close()
