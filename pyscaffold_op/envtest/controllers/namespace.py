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
from pyscaffold_op.envtest.storage.objectstore import now_rfc3339
from pyscaffold_op.envtest.storage.storeaccess import StoreAccess
from pyscaffold_op.envtest.types import GR, NAMESPACES

PODS: GR = ("", "pods")
# the conditions the namespace deleter keeps, with their "ok" reason and message (status False)
_OK = (
    ("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered", "All resources successfully discovered"),
    (
        "NamespaceDeletionGroupVersionParsingFailure",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        "NamespaceDeletionContentFailure",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    ("NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"),
    ("NamespaceFinalizersRemaining", "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
)

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
        """deleteAllContent: the Pods first (nothing else goes while one remains), then every other
        namespaced resource; the namespace's deletion conditions report what is left, and once
        nothing is, the `kubernetes` finalizer goes and so does the namespace."""
        ns = self.store.find(NAMESPACES, "", name)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            self._active.discard(name)
            return
        remaining: dict[str, int] = {}  # "<resource>.<group>" -> objects left
        finalizers: dict[str, int] = {}  # finalizer -> objects it holds
        pods_left = self._delete_all(name, PODS, remaining, finalizers)
        if pods_left:
            self._conditions(name, {}, {})  # as the real one: the content totals wait for the rest
            return  # a DELETED event of a Pod brings it back here
        for gr in self.store.stored_resources():
            info = self.store.registry.storage_for(*gr)
            if gr in (NAMESPACES, PODS) or info is None or not info.namespaced:
                continue
            self._delete_all(name, gr, remaining, finalizers)
        self._conditions(name, remaining, finalizers)
        if remaining:
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

    def _delete_all(self, name: str, gr: GR, remaining: dict[str, int], finalizers: dict[str, int]) -> int:
        """deleteAllContentForGroupVersionResource: delete what is not being deleted, count what is
        left (and the finalizers holding it)."""
        info = self.store.registry.storage_for(*gr)
        if info is None:
            return 0
        left = 0
        for key in [k for k in self.store.keys_in(gr) if k[0] == name]:
            obj = self.store.find(gr, *key)
            if obj is None:
                continue
            if not obj["metadata"].get("deletionTimestamp"):
                self.store.delete(info, key[0], key[1])
            obj = self.store.find(gr, *key)
            if obj is None:
                continue
            left += 1
            for f in obj["metadata"].get("finalizers") or []:
                finalizers[f] = finalizers.get(f, 0) + 1
        if left:
            remaining[f"{gr[1]}.{gr[0]}"] = left
        return left

    def _conditions(self, name: str, remaining: dict[str, int], finalizers: dict[str, int]) -> None:
        """namespaceConditionUpdater.Update: the five deletion conditions, the failing variant of
        ContentRemaining and FinalizersRemaining while something is left; written when they change."""
        ns = self.store.find(NAMESPACES, "", name)
        if ns is None:
            return
        new: dict[str, tuple[str, str, str]] = {t: ("False", r, m) for t, r, m in _OK}
        if remaining:
            left = ", ".join(sorted(f"{r} has {n} resource instances" for r, n in remaining.items()))
            new["NamespaceContentRemaining"] = (
                "True",
                "SomeResourcesRemain",
                f"Some resources are remaining: {left}",
            )
        if finalizers:
            held = ", ".join(sorted(f"{f} in {n} resource instances" for f, n in finalizers.items()))
            new["NamespaceFinalizersRemaining"] = (
                "True",
                "SomeFinalizersRemain",
                f"Some content in the namespace has finalizers remaining: {held}",
            )
        status = dict(ns.get("status") or {})
        conditions = [dict(c) for c in status.get("conditions") or []]
        changed = False
        now = now_rfc3339()
        for typ, (st, reason, message) in new.items():
            old = next((c for c in conditions if c.get("type") == typ), None)
            if old is None:
                conditions.append(
                    {
                        "type": typ,
                        "status": st,
                        "lastTransitionTime": now,
                        "reason": reason,
                        "message": message,
                    }
                )
                changed = True
            elif (old.get("status"), old.get("reason"), old.get("message")) != (st, reason, message):
                if old.get("status") != st:
                    old["lastTransitionTime"] = now
                old.update(status=st, reason=reason, message=message)
                changed = True
        if changed:
            status["conditions"] = conditions
            meta = {**ns["metadata"]}
            self.store.put(NAMESPACES, ("", name), ns, {**ns, "metadata": meta, "status": status})

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
