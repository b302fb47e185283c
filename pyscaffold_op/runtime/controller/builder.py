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
* `daemon(fn, ...)`, `timer(fn, interval=, idle=, ...)`: a task per `for_()` object (kopf's
  `@kopf.daemon`/`@kopf.timer`; controller/daemon.py). A controller of daemons and timers alone is
  `complete()`d without a reconciler.
* `with_options(error_events=False)`: no Warning Event on the object when its reconcile fails.
* `taking_over_from_kopf()`: after each successful reconcile, remove what a kopf operator left on the
  object (its finalizer, annotations, `status.kopf`: controller/fromkopf.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pyscaffold_op.runtime.client.errors import Conflict
from pyscaffold_op.runtime.controller.daemon import DaemonSpec, Delay
from pyscaffold_op.runtime.controller.daemonset import Daemons
from pyscaffold_op.runtime.controller.fromkopf import KopfMarks, release_from_kopf
from pyscaffold_op.runtime.controller.handler import (
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EventHandler,
)
from pyscaffold_op.runtime.controller.predicate import (
    IgnoreStatusChanges,
    MetaValue,
    ObjectFilter,
    Predicate,
    as_predicate,
)
from pyscaffold_op.runtime.controller.source import Kind, Source
from pyscaffold_op.runtime.objects.kinds import info_for
from pyscaffold_op.runtime.objects.rawobj import RawObject

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
        self._daemons: list[DaemonSpec] = []
        self._kopf_marks: KopfMarks | None = None

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

    def daemon(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        initial_delay: Delay = None,
        backoff: float | None = None,
        grace_period: float = 5.0,
        cancellation_timeout: float = 5.0,
        labels: Mapping[str, MetaValue] | None = None,
        annotations: Mapping[str, MetaValue] | None = None,
        when: Callable[[Any], bool] | None = None,
        finalizer: str | None = None,
    ) -> Builder:
        """Run `fn(ctx)` for each `for_()` object while it exists and matches `labels`/`annotations`/
        `when` (kopf's `@kopf.daemon`; semantics in controller/daemon.py and docs/runtime.md)."""
        self._daemons.append(
            DaemonSpec(
                fn=fn,
                name=name or _name_of(fn),
                initial_delay=initial_delay,
                backoff=backoff,
                grace_period=grace_period,
                cancellation_timeout=cancellation_timeout,
                filter=_filter(labels, annotations, when),
                finalizer=finalizer,
            )
        )
        return self

    def timer(
        self,
        fn: Callable[..., Any],
        *,
        interval: float | None = None,
        idle: float | None = None,
        sharp: bool = False,
        name: str | None = None,
        initial_delay: Delay = None,
        backoff: float | None = None,
        grace_period: float = 5.0,
        cancellation_timeout: float = 5.0,
        labels: Mapping[str, MetaValue] | None = None,
        annotations: Mapping[str, MetaValue] | None = None,
        when: Callable[[Any], bool] | None = None,
    ) -> Builder:
        """Call `fn(ctx)` every `interval` seconds for each `for_()` object, with `idle=` only once the
        object has not changed for that long (kopf's `@kopf.timer`)."""
        if interval is None and idle is None:
            raise ValueError(f"timer {name or _name_of(fn)}: give interval=, idle=, or both")
        self._daemons.append(
            DaemonSpec(
                fn=fn,
                name=name or _name_of(fn),
                timer=True,
                interval=interval,
                idle=idle,
                sharp=sharp,
                initial_delay=initial_delay,
                backoff=backoff,
                grace_period=grace_period,
                cancellation_timeout=cancellation_timeout,
                filter=_filter(labels, annotations, when),
            )
        )
        return self

    def taking_over_from_kopf(self, marks: KopfMarks | None = None) -> Builder:
        """Release `for_()` objects from a kopf operator once this controller reconciled them: kopf's
        finalizer, its annotations and `status.kopf` are removed (`marks`: kopf's defaults)."""
        self._kopf_marks = marks or KopfMarks()
        return self

    def with_options(self, **options: Any) -> Builder:
        allowed = {
            "max_concurrent_reconciles",
            "rate_limiter",
            "reconcile_timeout",
            "need_leader_election",
            "cache_sync_timeout",
            "sharded",
            "error_events",
        }
        unknown = set(options) - allowed
        if unknown:
            raise TypeError(f"unknown controller options {sorted(unknown)}; allowed: {sorted(allowed)}")
        self._options.update({k: v for k, v in options.items() if v is not None})
        return self

    def named(self, name: str) -> Builder:
        self._name = name
        return self

    def complete(self, reconciler: Any = None) -> Controller:
        """Build the controller and register it with the manager (returns it, for tests and tweaks).
        Without a reconciler, the controller runs its daemons and timers only."""
        return self.build(reconciler)

    def build(self, reconciler: Any = None) -> Controller:
        if self._for is None and not self._watches:
            raise ValueError("a controller needs for_(Kind) or at least one watches()")
        if self._daemons and self._for is None:
            raise ValueError("daemon() and timer() run per object of the for_() kind: call for_(Kind)")
        if reconciler is None and not self._daemons:
            raise ValueError("complete(reconciler): only a controller with daemon() or timer() needs none")
        name = self._name or (info_for(self._for[0]).kind.lower() if self._for else None)
        if not name:
            raise ValueError("controllers without for_() must be named with named()")
        options = dict(self._options)
        error_events = options.pop("error_events", True)
        if self._daemons:
            # one runner per object: not split among sharded replicas (their handover moves reconciles,
            # not long-running tasks), so it runs on the leader
            options["sharded"] = False
        if error_events and reconciler is not None:
            options["recorder"] = self._mgr.get_event_recorder(f"{name}-controller")
        ctrl = self._mgr.new_controller(
            name, reconciler if reconciler is not None else _no_reconcile, **options
        )
        if self._for:
            ctrl.group_kind = info_for(self._for[0]).group_kind
            ctrl.for_kind = self._for[0]
        glob = tuple(self._global)
        if self._daemons and self._for is not None:
            kind = self._for[0]
            store_of = self._mgr.cache.get_informer(kind).store
            ctrl.daemons = Daemons(
                self._daemons,
                controller=name,
                group_kind=ctrl.group_kind,
                clock=ctrl.clock,
                read=lambda req: store_of.get(f"{req.namespace}/{req.name}" if req.namespace else req.name),
                client=self._mgr.client,
                kind=kind,
                metrics=self._mgr.metrics,
            )
            ctrl.watch(Kind(kind), ctrl.daemons)
        if reconciler is None:
            return ctrl  # daemons and timers only: nothing is enqueued
        if self._kopf_marks is not None and self._for is not None:
            ctrl.after_reconcile.append(_kopf_release(ctrl, self._mgr.client, self._for[0], self._kopf_marks))
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


async def _no_reconcile(request: Any) -> None:
    """The reconcile of a controller that runs daemons and timers only (never called: no watch enqueues)."""


def _name_of(fn: Callable[..., Any]) -> str:
    return str(getattr(fn, "__name__", None) or type(fn).__name__)


def _filter(
    labels: Mapping[str, MetaValue] | None,
    annotations: Mapping[str, MetaValue] | None,
    when: Callable[[Any], bool] | None,
) -> ObjectFilter | None:
    return ObjectFilter(labels, annotations, when) if labels or annotations or when else None


def _kopf_release(ctrl: Controller, client: Any, kind: type, marks: KopfMarks) -> Any:
    """The after-reconcile step of `taking_over_from_kopf()`: reads the cache's JSON (which shows
    `status.kopf` too) and patches kopf's marks away."""
    decode = info_for(kind).decode

    async def release(req: Any) -> None:
        stored = ctrl.stored(req)
        if stored is None:
            return
        obj = RawObject(stored, decode) if isinstance(stored, bytes) else stored
        try:
            await release_from_kopf(client, obj, kind=kind, marks=marks)
        except Conflict:
            # the cache is behind this reconcile's own write: its event reconciles (and releases) again
            ctrl.queue.add_after(req, 1.0)

    return release
