"""Event handlers: turn watch events into reconcile requests on a queue (pkg/handler)."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from pyscaffold_op.runtime.controller.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent, raw_of
from pyscaffold_op.runtime.controller.request import Request
from pyscaffold_op.runtime.objects import objmeta
from pyscaffold_op.runtime.objects.kinds import info_for
from pyscaffold_op.runtime.objects.rawobj import RawObject

log = logging.getLogger("pyscaffold_op.runtime.handler")


class Enqueuer(Protocol):
    def add(self, item: Any) -> None: ...


class EventHandler:
    """Base: does nothing. Subclasses override the event types they map."""

    def create(self, event: CreateEvent, queue: Enqueuer) -> None: ...
    def update(self, event: UpdateEvent, queue: Enqueuer) -> None: ...
    def delete(self, event: DeleteEvent, queue: Enqueuer) -> None: ...
    def generic(self, event: GenericEvent, queue: Enqueuer) -> None: ...


def request_for(obj: Any) -> Request:
    return Request(objmeta.namespace(obj), objmeta.name(obj))


def _source(event: Any, attr: str) -> Any:
    """`event.<attr>` as the RawObject the informer sent when there is one (no decode), else the object."""
    raw = raw_of(event, attr)
    return raw if raw is not None else getattr(event, attr)


def _request_of(event: Any, attr: str) -> Request:
    """The request for `event.<attr>`, from the metadata alone when the event holds a RawObject."""
    raw = raw_of(event, attr)
    if raw is not None:
        meta = raw.meta
        return Request(meta.namespace, meta.name)
    return request_for(getattr(event, attr))


class _PerObject(EventHandler):
    """A handler that enqueues for each object an event carries: the event's object, and on update
    the objects `_updated(event)` names. Subclasses say what one object enqueues."""

    def _enqueue(self, obj: Any, queue: Enqueuer) -> None:
        raise NotImplementedError

    def _updated(self, event: UpdateEvent) -> tuple[Any, ...]:
        return (event.object_old, event.object_new)

    def create(self, event: CreateEvent, queue: Enqueuer) -> None:
        self._enqueue(event.object, queue)

    def update(self, event: UpdateEvent, queue: Enqueuer) -> None:
        for obj in self._updated(event):
            self._enqueue(obj, queue)

    def delete(self, event: DeleteEvent, queue: Enqueuer) -> None:
        self._enqueue(event.object, queue)

    def generic(self, event: GenericEvent, queue: Enqueuer) -> None:
        self._enqueue(event.object, queue)


class EnqueueRequestForObject(_PerObject):
    """Enqueue the object's own namespace/name: the handler for `for_()` kinds."""

    def _enqueue(self, obj: Any, queue: Enqueuer) -> None:
        queue.add(request_for(obj))

    def _updated(self, event: UpdateEvent) -> tuple[Any, ...]:
        return (event.object_new if event.object_new is not None else event.object_old,)

    # The name is all it needs: read from the metadata, without decoding the object.
    def create(self, event: CreateEvent, queue: Enqueuer) -> None:
        queue.add(_request_of(event, "object"))

    def update(self, event: UpdateEvent, queue: Enqueuer) -> None:
        if raw_of(event, "object_new") is not None:
            queue.add(_request_of(event, "object_new"))
        else:
            super().update(event, queue)

    def delete(self, event: DeleteEvent, queue: Enqueuer) -> None:
        queue.add(_request_of(event, "object"))


class EnqueueRequestForOwner(_PerObject):
    """Enqueue the owner(s) of type `owner_type` named in the object's ownerReferences (for `owns()`).

    Owners match by API group and kind (any version), like controller-runtime. With `only_controller`
    (the default) only the reference marked `controller: true` counts. On update both the old and the
    new owners are enqueued, so an owner that lost a dependent hears about it too.
    """

    def __init__(self, owner_type: type, only_controller: bool = True) -> None:
        info = info_for(owner_type)
        self.group, self.kind, self.namespaced = info.group, info.kind, info.namespaced
        self.only_controller = only_controller

    def _requests(self, obj: Any) -> Iterable[Request]:
        if type(obj) is RawObject:  # owner references from the metadata: no decode of (say) a Pod
            refs, namespace = obj.owner_references(), obj.meta.namespace
        else:
            refs, namespace = objmeta.owner_references(obj), objmeta.namespace(obj)
        for ref in refs:
            if self.only_controller and not ref.controller:
                continue
            if ref.kind == self.kind and ref.group == self.group:
                yield Request(namespace if self.namespaced else "", ref.name)

    def _enqueue(self, obj: Any, queue: Enqueuer) -> None:
        for req in self._requests(obj):
            queue.add(req)

    def create(self, event: CreateEvent, queue: Enqueuer) -> None:
        self._enqueue(_source(event, "object"), queue)

    def delete(self, event: DeleteEvent, queue: Enqueuer) -> None:
        self._enqueue(_source(event, "object"), queue)

    def update(self, event: UpdateEvent, queue: Enqueuer) -> None:
        # an owner named by both the old and the new object is enqueued once
        old, new = _source(event, "object_old"), _source(event, "object_new")
        for req in {*self._requests(old), *self._requests(new)}:
            queue.add(req)


MapFunc = Callable[[Any], Iterable[Request] | Awaitable[Iterable[Request]]]


class EnqueueRequestsFromMapFunc(_PerObject):
    """Enqueue whatever `fn(obj)` returns (a list of Requests); `fn` may be sync or async.

    An async `fn` (for example one that lists from the cache) runs in its own task, so the informer that
    delivered the event is never blocked by it.
    """

    def __init__(self, fn: MapFunc) -> None:
        self.fn = fn
        self._tasks: set[asyncio.Task[None]] = set()

    def _enqueue(self, obj: Any, queue: Enqueuer) -> None:
        result = self.fn(obj)
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(self._await(result, queue))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return
        for req in result or ():
            queue.add(req)

    async def _await(self, result: Awaitable[Iterable[Request]], queue: Enqueuer) -> None:
        try:
            for req in await result or ():
                queue.add(req)
        except Exception:
            log.exception("map function failed")


class Funcs(EventHandler):
    """A handler from functions `(event, queue) -> None`; missing ones do nothing (handler.Funcs)."""

    def __init__(
        self,
        create: Callable[[CreateEvent, Enqueuer], None] | None = None,
        update: Callable[[UpdateEvent, Enqueuer], None] | None = None,
        delete: Callable[[DeleteEvent, Enqueuer], None] | None = None,
        generic: Callable[[GenericEvent, Enqueuer], None] | None = None,
    ) -> None:
        self._fns = {"create": create, "update": update, "delete": delete, "generic": generic}

    def _call(self, name: str, event: Any, queue: Enqueuer) -> None:
        if fn := self._fns[name]:
            fn(event, queue)

    def create(self, event: CreateEvent, queue: Enqueuer) -> None:
        self._call("create", event, queue)

    def update(self, event: UpdateEvent, queue: Enqueuer) -> None:
        self._call("update", event, queue)

    def delete(self, event: DeleteEvent, queue: Enqueuer) -> None:
        self._call("delete", event, queue)

    def generic(self, event: GenericEvent, queue: Enqueuer) -> None:
        self._call("generic", event, queue)
