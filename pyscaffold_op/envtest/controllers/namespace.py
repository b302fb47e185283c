"""The namespace controller: a terminating namespace is emptied, then removed, as a controller over the store.

Deletion is asynchronous like the real one's: the DELETE answers 200 with the namespace `Terminating`,
and the controller starts only once no write has touched the namespace's objects (and no DELETE came
at all) for `delay` seconds, at the latest `max_delay` after the deletion (the real controller's grace
period is 5 s). So `kubectl delete -f` of a namespace and then its contents finds the contents still
there. Without a running event loop (a store used synchronously) it starts at once.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from pyscaffold_op.envtest.registry.namespaces import KUBERNETES, spec_finalizers
from pyscaffold_op.envtest.storage.storeaccess import StoreAccess
from pyscaffold_op.envtest.types import NAMESPACES

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Event


class NamespaceController:
    def __init__(self, store: StoreAccess, *, delay: float = 0.2, max_delay: float = 5.0) -> None:
        self.store = store
        self.delay = delay
        self.max_delay = max(max_delay, delay)
        self._pending: dict[str, tuple[float, float]] = {}  # name -> (quiet until, deadline)
        self._active: set[str] = set()  # terminating namespaces being emptied
        self._dirty: set[str] = set()  # active namespaces to look at again
        self._timer: asyncio.TimerHandle | None = None

    # -- StoreController -----------------------------------------------------------------------

    def observe(self, event: Event) -> None:
        meta = event.obj["metadata"]
        if event.gr == NAMESPACES:
            name = meta["name"]
            started = meta.get("deletionTimestamp") and not (event.prev or {}).get("metadata", {}).get(
                "deletionTimestamp"
            )
            if event.type == "MODIFIED" and started:
                self._schedule(name)
            elif name in self._active:  # its finalizers changed, or it is gone
                self._dirty.add(name)
        elif event.type == "DELETED" and meta.get("namespace") in self._active:
            self._dirty.add(meta["namespace"])

    def reconcile(self) -> bool:
        worked = bool(self._dirty)
        while self._dirty:
            self._sync(self._dirty.pop())
        return worked

    def _sync(self, name: str) -> None:
        ns = self.store.find(NAMESPACES, "", name)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            self._active.discard(name)
            return
        left = False
        for gr in self.store.stored_resources():
            info = self.store.registry.storage_for(*gr)
            if gr == NAMESPACES or info is None or not info.namespaced:
                continue
            for key in [k for k in self.store.keys_in(gr) if k[0] == name]:
                obj = self.store.find(gr, *key)
                if obj is None:
                    continue
                if not obj["metadata"].get("deletionTimestamp"):
                    self.store.delete(info, key[0], key[1])
                left = left or self.store.find(gr, *key) is not None
        if left:
            return  # a DELETED event of what is left brings it back here
        current = self.store.find(NAMESPACES, "", name)
        if current is not None and KUBERNETES in spec_finalizers(current):
            # like the controller: PUT .../finalize without `kubernetes` (MODIFIED); with no other
            # finalizer, spec or metadata, left, it is gone
            rest = [f for f in spec_finalizers(current) if f != KUBERNETES]
            spec = {k: v for k, v in (current.get("spec") or {}).items() if k != "finalizers"}
            final = {**current, "spec": {**spec, "finalizers": rest} if rest else spec}
            self.store.put(NAMESPACES, ("", name), current, final)
            if not rest and not final["metadata"].get("finalizers"):
                self.store.drop(NAMESPACES, ("", name), final)
        self._active.discard(name)

    # -- the schedule ------------------------------------------------------------------------------

    def _schedule(self, name: str) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # white-box tests, benchmarks: no controller delay
            self._activate(name)
            return
        now = loop.time()
        self._pending[name] = (now + self.delay, now + self.max_delay)
        self._arm(loop)

    def _activate(self, name: str) -> None:
        self._active.add(name)
        self._dirty.add(name)

    def activity(self, method: str, namespace: str | None) -> None:
        """A write arrived: a DELETE anywhere, or any write to objects in a pending namespace,
        postpones the controller."""
        if not self._pending:
            return
        try:
            now = asyncio.get_running_loop().time()
        except RuntimeError:
            return
        for name, (quiet, deadline) in list(self._pending.items()):
            if method == "DELETE" or name == namespace:
                self._pending[name] = (max(quiet, now + self.delay), deadline)

    def _arm(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending:
            due = min(min(q, d) for q, d in self._pending.values())
            self._timer = loop.call_at(due, self._fire, loop)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        now = loop.time()
        for name, (quiet, deadline) in list(self._pending.items()):
            if now >= min(quiet, deadline):
                del self._pending[name]
                self._activate(name)
        self.store.run_controllers()
        self._arm(loop)

    def stop(self) -> None:
        """Cancel pending work (the environment is stopping)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    @property
    def pending(self) -> bool:
        """Whether some terminating namespace waits for its quiet period."""
        return bool(self._pending)
