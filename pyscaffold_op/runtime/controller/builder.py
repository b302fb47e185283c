"""The controller builder (pkg/builder): `mgr.builder().for_(At).owns(Pod).complete(reconciler)`.

* `for_(Kind)`: reconcile objects of this kind (EnqueueRequestForObject); exactly one per controller.
  Updates that change only status are dropped (`IgnoreStatusChanges`): the controller's own status
  write does not reconcile the object a second time. `with_status_events()` lets them through.
* `owns(Kind)`: reconcile the controller owner of changed objects of this kind (EnqueueRequestForOwner).
* `watches(source_or_kind, handler)`: any other mapping (e.g. EnqueueRequestsFromMapFunc).
* `with_event_filter(predicate)`: applies to every watch of the controller.
* `with_options(max_concurrent_reconciles=..., rate_limiter=..., reconcile_timeout=...)`;
  `sharded=False` keeps a controller of a sharded manager single (leader-elected, every key).
* `named(name)`: the controller name used in logs and metrics; default the lower-cased `for_` kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyscaffold_op.runtime.controller.handler import (
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EventHandler,
)
from pyscaffold_op.runtime.controller.predicate import IgnoreStatusChanges, Predicate, as_predicate
from pyscaffold_op.runtime.controller.source import Kind, Source
from pyscaffold_op.runtime.objects.kinds import info_for

if TYPE_CHECKING:
    from pyscaffold_op.runtime.controller.controller import Controller
    from pyscaffold_op.runtime.manager.manager import Manager


class Builder:
    def __init__(self, mgr: Manager) -> None:
        self._mgr = mgr
        self._for: tuple[type, tuple[Predicate, ...]] | None = None
        self._owns: list[tuple[type, tuple[Predicate, ...], bool]] = []
        self._watches: list[tuple[Source, EventHandler, tuple[Predicate, ...]]] = []
        self._global: list[Predicate] = []
        self._options: dict[str, Any] = {}
        self._name: str | None = None
        self._status_events = False

    def for_(self, kind: type, *predicates: Predicate) -> Builder:
        if self._for is not None:
            raise ValueError("for_() may only be called once; use watches() for more kinds")
        info_for(kind)  # fail now on a class that is not a kind
        self._for = (kind, tuple(as_predicate(p) for p in predicates))
        return self

    def owns(self, kind: type, *predicates: Predicate, only_controller: bool = True) -> Builder:
        info_for(kind)
        self._owns.append((kind, tuple(as_predicate(p) for p in predicates), only_controller))
        return self

    def watches(self, source: Source | type, handler: EventHandler, *predicates: Predicate) -> Builder:
        src = source if isinstance(source, Source) else Kind(source)
        self._watches.append((src, handler, tuple(as_predicate(p) for p in predicates)))
        return self

    def with_status_events(self) -> Builder:
        """Reconcile the `for_()` object on status-only changes too (off by default: those are mostly
        the controller's own status writes)."""
        self._status_events = True
        return self

    def with_event_filter(self, *predicates: Predicate) -> Builder:
        self._global.extend(as_predicate(p) for p in predicates)
        return self

    def with_options(self, **options: Any) -> Builder:
        allowed = {
            "max_concurrent_reconciles",
            "rate_limiter",
            "reconcile_timeout",
            "need_leader_election",
            "cache_sync_timeout",
            "sharded",
        }
        unknown = set(options) - allowed
        if unknown:
            raise TypeError(f"unknown controller options {sorted(unknown)}; allowed: {sorted(allowed)}")
        self._options.update({k: v for k, v in options.items() if v is not None})
        return self

    def named(self, name: str) -> Builder:
        self._name = name
        return self

    def complete(self, reconciler: Any) -> Controller:
        """Build the controller and register it with the manager (returns it, for tests and tweaks)."""
        return self.build(reconciler)

    def build(self, reconciler: Any) -> Controller:
        if self._for is None and not self._watches:
            raise ValueError("a controller needs for_(Kind) or at least one watches()")
        name = self._name or (info_for(self._for[0]).kind.lower() if self._for else None)
        if not name:
            raise ValueError("controllers without for_() must be named with named()")
        ctrl = self._mgr.new_controller(name, reconciler, **self._options)
        if self._for:
            ctrl.group_kind = info_for(self._for[0]).group_kind
        glob = tuple(self._global)
        if self._for is not None:
            own = () if self._status_events else (IgnoreStatusChanges(),)
            ctrl.watch(Kind(self._for[0]), EnqueueRequestForObject(), *own, *glob, *self._for[1])
        for kind, preds, only_controller in self._owns:
            owner = self._for[0] if self._for is not None else None
            if owner is None:
                raise ValueError("owns() needs for_() to know the owner kind")
            ctrl.watch(
                Kind(kind), EnqueueRequestForOwner(owner, only_controller=only_controller), *glob, *preds
            )
        for src, handler, preds in self._watches:
            ctrl.watch(src, handler, *glob, *preds)
        return ctrl
