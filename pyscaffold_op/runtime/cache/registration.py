"""`HandlerRegistration`: one handler of an informer, and its own initial delivery (client-go's
`processorListener` and `ResourceEventHandlerRegistration`).

A handler added once the informer has synced (every controller: the manager starts them after the
caches) first gets an add for every cached object. Those adds go through a backlog that a task of its
own drains, a slice at a time: the informer, the other handlers and the controllers already running
go on meanwhile, where a delivery in line held the event loop for every handler's whole initial list
(10 controllers on 10,000 objects: 100,000 calls before anything else ran). Events that arrive while a
backlog is not empty queue behind it, so the handler still sees every change in order. The
registration has synced once its handler has had the whole initial list (`HasSynced`); a controller
waits for that, as controller-runtime's `Kind` source does, before it starts its workers.

A handler added before the informer's first list gets that list's adds in line, before the informer
says synced: its registration syncs with the informer.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Iterable
from typing import Any, Protocol

from pyscaffold_op.runtime.objects.rawobj import unwrap
from pyscaffold_op.runtime.waits import event_set_within

log = logging.getLogger("pyscaffold_op.runtime.informer")

ADD, UPDATE, DELETE = 0, 1, 2
# How many events a drain delivers before it lets the loop run: ~5 µs each, a few ms per slice.
SLICE = 500


class ResourceEventHandler(Protocol):
    def on_add(self, obj: Any, is_in_initial_list: bool) -> None: ...
    def on_update(self, old: Any, new: Any) -> None: ...
    def on_delete(self, obj: Any, state_unknown: bool) -> None: ...


class HandlerRegistration:
    """What `Informer.add_event_handler` returns: pass it to `remove_event_handler`; `has_synced()` /
    `await wait_for_sync()` tell when its handler has had every object of the initial list."""

    def __init__(self, handler: ResourceEventHandler, kind: str) -> None:
        self.handler = handler
        self.kind = kind  # for the logs
        self.raw = bool(getattr(handler, "raw_objects", False))  # takes RawObjects (rawobj.py)
        self.backlog: deque[tuple[int, Any, Any]] = deque()  # (ADD|UPDATE|DELETE, object(s), flag)
        self._initial_left = 0  # initial adds still in the backlog (they are at its front)
        self._synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.removed = False

    def __repr__(self) -> str:
        return f"HandlerRegistration({self.handler!r}, backlog={len(self.backlog)})"

    # -- sync ---------------------------------------------------------------------------------------
    def has_synced(self) -> bool:
        return self._synced.is_set()

    async def wait_for_sync(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        return await event_set_within(self._synced, timeout)

    def mark_synced(self) -> None:
        """The informer delivered the initial list in line (a handler added before the first list)."""
        self._synced.set()

    # -- delivery -----------------------------------------------------------------------------------
    def replay(self, objects: Iterable[Any]) -> None:
        """Queue an initial add for each of `objects` (the informer's store when the handler joined) and
        start draining; without a running loop (a test driving an informer by hand), deliver now."""
        self.backlog.extend((ADD, obj, True) for obj in objects)
        self._initial_left = len(self.backlog)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._deliver(len(self.backlog))
            return
        self.resume()

    def resume(self) -> None:
        """Drain the backlog in a task (again, after the informer was stopped and started)."""
        if not self.backlog:
            self._synced.set()
            return
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._drain(), name=f"{self.kind} handler delivery")

    def pause(self) -> asyncio.Task[None] | None:
        """Stop draining (the informer stops, or the handler is removed); what is queued stays."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        return task

    def add(self, obj: Any, initial: bool) -> None:
        """Called by the informer for each add: in line unless a backlog is waiting."""
        if self.backlog:
            self.backlog.append((ADD, obj, initial))
        else:
            self._call(self.handler.on_add, obj if self.raw else unwrap(obj), initial)

    def update(self, old: Any, new: Any) -> None:
        if self.backlog:
            self.backlog.append((UPDATE, old, new))
        elif self.raw:
            self._call(self.handler.on_update, old, new)
        else:
            self._call(self.handler.on_update, unwrap(old), unwrap(new))

    def delete(self, obj: Any, unknown: bool) -> None:
        if self.backlog:
            self.backlog.append((DELETE, obj, unknown))
        else:
            self._call(self.handler.on_delete, obj if self.raw else unwrap(obj), unknown)

    async def _drain(self) -> None:
        while self.backlog and not self.removed:
            self._deliver(SLICE)
            if self.backlog:
                await asyncio.sleep(0)  # the informer, the workers and the other handlers run
        self._synced.set()

    def _deliver(self, count: int) -> None:
        backlog = self.backlog
        for _ in range(min(count, len(backlog))):
            self._deliver_one(*backlog.popleft())
            if self._initial_left:
                self._initial_left -= 1
                if not self._initial_left:
                    self._synced.set()  # the whole initial list is delivered
        if not backlog:
            self._synced.set()

    def _deliver_one(self, op: int, a: Any, b: Any) -> None:
        handler, raw = self.handler, self.raw
        try:
            if op == ADD:
                handler.on_add(a if raw else unwrap(a), b)
            elif op == UPDATE:
                handler.on_update(a if raw else unwrap(a), b if raw else unwrap(b))
            else:
                handler.on_delete(a if raw else unwrap(a), b)
        except Exception:  # one broken handler (or an object its model rejects) must not stop the rest
            log.exception("event handler failed", extra={"kind": self.kind})

    def _call(self, fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except Exception:  # one broken handler must not stop the informer
            log.exception("event handler failed", extra={"kind": self.kind})

    def close(self) -> None:
        """Removed from its informer: nothing more is delivered."""
        self.removed = True
        self.backlog.clear()
        self.pause()
