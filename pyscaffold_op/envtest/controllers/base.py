"""The base of the simulated controllers: a work queue fed by the store's change events and timers,
drained on the server's event loop so that every reconcile is one atomic pass over the store."""

from __future__ import annotations

import asyncio
import builtins
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from pyscaffold_op.clock import REAL_CLOCK, Clock, Timer
from pyscaffold_op.envtest.controllers.events import EventRecorder
from pyscaffold_op.envtest.status import StatusError
from pyscaffold_op.envtest.types import Key, Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.registry.resources import ServedResource
    from pyscaffold_op.envtest.storage.objectstore import Event, Store

log = logging.getLogger("pyscaffold_op.envtest.controllers")
MANAGER = "kube-controller-manager"  # the field manager of every controller-manager write
RETRY_SECONDS = 0.1


class SimulatedController:
    """Subclasses set `primary` (group, version, plural) and implement `reconcile(ns, name)`. With
    `owns` (group, plural) and `kind`, a change of an object whose controller is a `kind` reconciles
    that owner; other events map to primary keys in an overridden `keys_for`."""

    primary: tuple[str, str, str]
    owns: tuple[str, str] | None = None
    kind: str = ""
    component: str = ""  # the EventSource the real controller records its Events as
    manager: str = MANAGER  # the field manager of its writes

    def __init__(self) -> None:
        self.recorder: EventRecorder | None = EventRecorder(self.component) if self.component else None
        self._store: Store | None = None
        self.clock: Clock = REAL_CLOCK
        self._loop: asyncio.AbstractEventLoop | None = None
        self._dirty: dict[Key, None] = {}
        self._flush_pending = False
        self._timers: dict[Key, Timer] = {}

    @property
    def store(self) -> Store:
        assert self._store is not None, "attach the controller first"
        return self._store

    def attach(self, store: Store, clock: Clock, *, events: bool = True) -> None:
        """Start on the running loop: reconcile every existing primary object, then follow changes.
        `events=False`: record no Events."""
        self._store, self.clock = store, clock
        if self.recorder is not None and events:
            self.recorder.attach(store, clock)
        self._loop = asyncio.get_running_loop()
        store.on_change.append(self._on_event)
        for obj in self.list(self.primary):
            self.enqueue(_key(obj))

    def detach(self) -> None:
        if self.recorder is not None:
            self.recorder.detach()
        if self._store is not None and self._on_event in self._store.on_change:
            self._store.on_change.remove(self._on_event)
        for t in self._timers.values():
            t.cancel()
        self._timers.clear()
        self._dirty.clear()

    # -- the queue ---------------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        for key in self.keys_for(event):
            self.enqueue(key)

    def keys_for(self, event: Event) -> Iterable[Key]:
        """Primary keys to reconcile after a change: the primary object itself, or the controller
        owner of an `owns` object."""
        if event.gr == self.primary[::2]:
            yield _key(event.obj)
        elif event.gr == self.owns:
            yield from owner_keys(event, self.kind)

    def enqueue(self, key: Key) -> None:
        self._dirty[key] = None
        if not self._flush_pending and self._loop is not None:
            self._flush_pending = True
            self._loop.call_soon(self._flush)

    def enqueue_after(self, key: Key, seconds: float) -> None:
        """Reconcile `key` again after `seconds` on the controller's clock (the earliest request wins)."""
        loop = self._loop
        if loop is None:
            return
        current = self._timers.get(key)
        if current is not None:
            current.cancel()

        def fire() -> None:
            if not loop.is_closed():
                loop.call_soon_threadsafe(self._fire, key)

        self._timers[key] = self.clock.call_later(seconds, fire)

    def _fire(self, key: Key) -> None:
        self._timers.pop(key, None)
        self.enqueue(key)

    def _flush(self) -> None:
        self._flush_pending = False
        batch = list(self._dirty)
        self._dirty.clear()
        for key in batch:
            try:
                self.reconcile(*key)
            except StatusError as err:  # a conflict or a vanished object: look again shortly
                log.debug("%s %s/%s: %s", type(self).__name__, key[0], key[1], err.message)
                self.enqueue_after(key, RETRY_SECONDS)
            except Exception:
                log.exception("%s %s/%s failed", type(self).__name__, key[0], key[1])

    def reconcile(self, namespace: str, name: str) -> None:
        raise NotImplementedError

    def record(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        """An Event about `obj`, as the real controller records it (nothing without a component)."""
        if self.recorder is not None:
            self.recorder.event(obj, type_, reason, message)

    # -- store helpers -----------------------------------------------------------------------------

    def info(self, gvr: tuple[str, str, str]) -> ServedResource:
        return self.store.info(*gvr)

    def get(self, gvr: tuple[str, str, str], namespace: str, name: str) -> Obj | None:
        return self.store.find(gvr[::2], namespace, name)

    def live(self, namespace: str, name: str) -> Obj | None:
        """The primary object, or None when it is gone or being deleted (nothing to reconcile)."""
        obj = self.get(self.primary, namespace, name)
        if obj is None or obj["metadata"].get("deletionTimestamp"):
            return None
        return obj

    def list(self, gvr: tuple[str, str, str], namespace: str | None = None) -> list[Obj]:
        items, _rv, _c, _r = self.store.list(self.info(gvr), namespace)
        return items

    def owned(self, gvr: tuple[str, str, str], owner: Obj) -> builtins.list[Obj]:
        """Objects in the owner's namespace whose controller reference is the owner."""
        uid = owner["metadata"]["uid"]
        ns = owner["metadata"].get("namespace", "")
        return [o for o in self.list(gvr, ns or None) if (controller_ref(o) or {}).get("uid") == uid]

    def create(self, gvr: tuple[str, str, str], namespace: str, obj: Obj) -> Obj:
        return self.store.create(self.info(gvr), namespace, obj, manager=self.manager, fresh=True)

    def update(self, gvr: tuple[str, str, str], obj: Obj) -> Obj:
        meta = obj["metadata"]
        return self.store.update(
            self.info(gvr), meta.get("namespace", ""), meta["name"], obj, manager=self.manager
        )

    def write_status(self, gvr: tuple[str, str, str], obj: Obj, status: Obj) -> Obj:
        """Write `status` through the status subresource (a no-op write changes nothing)."""
        meta = obj["metadata"]
        return self.store.update(
            self.info(gvr),
            meta.get("namespace", ""),
            meta["name"],
            {**obj, "status": status},
            subresource="status",
            manager=self.manager,
        )

    def delete(self, gvr: tuple[str, str, str], obj: Obj, propagation: str | None = None) -> None:
        meta = obj["metadata"]
        try:
            self.store.delete(
                self.info(gvr),
                meta.get("namespace", ""),
                meta["name"],
                propagation=propagation,
                preconditions={"uid": meta["uid"]},
            )
        except StatusError as err:
            if err.code not in (404, 409):
                raise


def _key(obj: Obj) -> Key:
    return (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


def controller_ref(obj: Obj) -> Obj | None:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return None


def owner_keys(event: Event, kind: str) -> Iterable[Key]:
    """The keys of the `kind` controllers of an event's object (before and after the change)."""
    seen = set()
    for obj in (event.obj, event.prev):
        if obj is None:
            continue
        ref = controller_ref(obj)
        if ref is not None and ref.get("kind") == kind:
            key = (obj["metadata"].get("namespace", ""), str(ref.get("name", "")))
            if key not in seen:
                seen.add(key)
                yield key


def new_owner_ref(owner: Obj) -> Obj:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def set_condition(conditions: list[Obj], new: Obj, *, force: bool = False) -> list[Obj]:
    """SetCondition like the workload controllers: the same status and reason leave the condition as it
    is (unless `force`); the same status keeps its lastTransitionTime; the condition goes to the end."""
    current = next((c for c in conditions if c.get("type") == new["type"]), None)
    same_status = current is not None and current.get("status") == new["status"]
    if same_status and current is not None and current.get("reason") == new.get("reason") and not force:
        return conditions
    cond = dict(new)
    if same_status and current is not None and current.get("lastTransitionTime"):
        cond["lastTransitionTime"] = current["lastTransitionTime"]
    return [c for c in conditions if c.get("type") != new["type"]] + [cond]
