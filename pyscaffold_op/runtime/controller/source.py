"""Sources of events for a controller (pkg/source).

* `Kind(Pod)`: events from the cluster, through the manager's shared informer for that kind.
* `Channel(queue)`: events from outside the cluster (webhooks, polling): put objects or `GenericEvent`s
  on an `asyncio.Queue` and each becomes a generic event for the handler.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any

from pyscaffold_op.runtime.controller.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
from pyscaffold_op.runtime.controller.handler import Enqueuer, EventHandler
from pyscaffold_op.runtime.controller.predicate import Predicate

log = logging.getLogger("pyscaffold_op.runtime.source")


class Source:
    """Base of sources: `start` connects the source to a handler and queue; `wait_for_sync` waits for the
    source's initial state."""

    def inject_cache(self, cache: Any) -> None:
        """Sources that read the cluster get the manager's cache here."""

    def start(self, handler: EventHandler, queue: Enqueuer, predicates: Sequence[Predicate]) -> None:
        raise NotImplementedError

    async def wait_for_sync(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        return True

    async def stop(self) -> None:
        """Disconnect (controller shutdown)."""


class _InformerAdapter:
    """Informer callbacks -> events -> predicates -> handler -> queue.

    It takes the informer's `RawObject`s as they come: the events decode the typed object only when a
    predicate or handler reads it."""

    raw_objects = True

    def __init__(self, handler: EventHandler, queue: Enqueuer, predicates: Sequence[Predicate]) -> None:
        self.handler, self.queue, self.predicates = handler, queue, tuple(predicates)

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        event = CreateEvent(obj, is_in_initial_list)
        if all(p.create(event) for p in self.predicates):
            self.handler.create(event, self.queue)

    def on_update(self, old: Any, new: Any) -> None:
        event = UpdateEvent(old, new)
        if all(p.update(event) for p in self.predicates):
            self.handler.update(event, self.queue)

    def on_delete(self, obj: Any, state_unknown: bool) -> None:
        event = DeleteEvent(obj, state_unknown)
        if all(p.delete(event) for p in self.predicates):
            self.handler.delete(event, self.queue)


class Kind(Source):
    """Events for every object of one kind, from the manager's informer cache."""

    def __init__(self, type_: type) -> None:
        self.type = type_
        self.cache: Any = None
        self._informer: Any = None
        self._registration: Any = None

    def __repr__(self) -> str:
        return f"Kind({getattr(self.type, '__name__', self.type)})"

    def inject_cache(self, cache: Any) -> None:
        self.cache = cache
        cache.get_informer(self.type)  # created now, so the cache starts it before controllers run

    def start(self, handler: EventHandler, queue: Enqueuer, predicates: Sequence[Predicate]) -> None:
        if self.cache is None:
            raise RuntimeError(f"{self!r} has no cache: add it through a controller of a manager")
        self._informer = self.cache.get_informer(self.type)
        self._registration = self._informer.add_event_handler(_InformerAdapter(handler, queue, predicates))

    async def wait_for_sync(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """True once the informer has synced and this source's handler has had every object of its
        initial list (controller-runtime's Kind: the cache, then the registration's HasSynced)."""
        if self._informer is None or self._registration is None:
            return False
        try:
            async with asyncio.timeout(timeout):
                return await self._informer.wait_for_sync() and await self._registration.wait_for_sync()
        except TimeoutError:
            return False

    async def stop(self) -> None:
        if self._informer is not None and self._registration is not None:
            self._informer.remove_event_handler(self._registration)


class Channel(Source):
    """Generic events from an `asyncio.Queue` of objects (or `GenericEvent`s)."""

    def __init__(self, source: asyncio.Queue[Any]) -> None:
        self.source = source
        self._task: asyncio.Task[None] | None = None

    def start(self, handler: EventHandler, queue: Enqueuer, predicates: Sequence[Predicate]) -> None:
        self._task = asyncio.create_task(self._pump(handler, queue, tuple(predicates)), name="channel source")

    async def _pump(self, handler: EventHandler, queue: Enqueuer, predicates: tuple[Predicate, ...]) -> None:
        while True:
            item = await self.source.get()
            event = item if isinstance(item, GenericEvent) else GenericEvent(item)
            try:
                if all(p.generic(event) for p in predicates):
                    handler.generic(event, queue)
            except Exception:
                log.exception("channel event handler failed")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
