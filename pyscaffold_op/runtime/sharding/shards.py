"""Sharded controllers: replicas split the keys of their controllers among themselves (docs/runtime.md,
"Sharding").

* **Membership.** Every replica holds a coordination.k8s.io/v1 Lease of its own, named
  `<group>-shard-<identity>` and labelled `shard.pyop.io/group=<group>`, renewed every `retry_period`
  as leader election renews its lease. Each round a replica lists the group's Leases: a member is live
  while its Lease changed within `lease_duration`, measured on the observer's clock from when it saw
  the change (client-go's rule: clock skew between machines does not matter).
* **Assignment.** A key goes to the live member that wins rendezvous hashing (`assign.py`): a member
  joining takes ~1/N of the keys, a member leaving gives away only its own.
* **Handover.** A replica *adopts* a new member set (a view) at once for what it gives up: from that
  moment its controllers drop those keys from their queues and hand them to no worker; it waits for
  their in-flight reconciles to end (`handover_timeout`, the lease duration by default, then they are
  cancelled) and only then *acknowledges* the view in its Lease (annotation `shard.pyop.io/view`). A
  key it gains waits until every member of the view has acknowledged it: by then the key's previous
  owner has drained it. A replica therefore holds key k only when it owns k in every view it adopted
  since the last view it saw acknowledged by all, and no key is ever reconciled by two replicas at once.
* **Failure.** A replica that cannot renew its Lease for `renew_deadline` stops reconciling at once
  and the manager exits (`ShardLeaseLost`) once a second renewal has failed; the others see its Lease
  expire `lease_duration` after its last renewal (later than it stopped, as `renew_deadline <
  lease_duration`) and only then take its keys. A replica that stops gracefully drains, then deletes
  its Lease: its keys move at once.
* **Fencing by age.** A replica holds nothing once its last successful renewal is older than
  `renew_deadline`, timed on its own monotonic clock from when it *sent* that renewal (never later
  than the others saw it). A replica that was not running for that long (SIGSTOP, a frozen VM, a
  blocked event loop) may wake after the others took its keys, and its first renewal still succeeds:
  so it rejoins as a new member instead, holding nothing (its in-flight reconciles revoked) until a
  view adopted after the gap is acknowledged by all.

Controllers of a sharded manager run on every replica (no leader election); a controller built with
`with_options(sharded=False)` and runnables added with `need_leader_election=True` stay single, on the
leader. Each replica caches every object (its informers are not split): the shard filter is a hash of
the request's key in the event handler and before each reconcile (see docs/runtime.md for why not
label selectors).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pyscaffold_op.runtime.client.errors import AlreadyExists, ApiError, Conflict, NotFound
from pyscaffold_op.runtime.clock import REAL_CLOCK, Clock
from pyscaffold_op.runtime.manager.fence import RenewalAge
from pyscaffold_op.runtime.manager.manager import LeaderElectionLost
from pyscaffold_op.runtime.sharding.assign import EMPTY, Assignment
from pyscaffold_op.runtime.sharding.ownerscope import OwnerScopes

if TYPE_CHECKING:
    from pyscaffold_op.runtime.controller.controller import Controller
    from pyscaffold_op.runtime.manager.manager import Manager

log = logging.getLogger("pyscaffold_op.runtime.sharding")

GROUP_LABEL = "shard.pyop.io/group"
VIEW_ANNOTATION = "shard.pyop.io/view"
IDENTITY_ANNOTATION = "shard.pyop.io/identity"

_DRAIN_POLL = 0.01  # seconds between looks at the in-flight keys while draining
_REVOKE_WAIT = 5.0  # how long revoked reconciles get to unwind before the view is acknowledged anyway


class ShardLeaseLost(LeaderElectionLost):
    """This replica could not renew its shard Lease within `renew_deadline`; it stopped reconciling
    and the manager stopped (exit non-zero so the pod restarts as a new member)."""


@dataclass(kw_only=True)
class ShardingOptions:
    """How the replicas of a manager split its controllers' keys (`ManagerOptions(sharding=...)`)."""

    name: str = ""
    """The shard group: the label value every member's Lease carries. Default: the manager's
    leader_election_id, else "pyop"."""
    namespace: str | None = None
    """Where the Leases live. Default: leader_election_namespace, the in-cluster namespace, else the
    kubeconfig's."""
    identity: str | None = None
    """This replica's name among the members. Default: hostname + a random suffix."""
    by: Literal["object", "owner"] = "object"
    """"object": a request is assigned by its own namespace/name. "owner": by the namespace/name of the
    controller owner of the requested object (from the cache), so a controller of child objects
    reconciles them on the replica that reconciles their owner."""
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    handover_timeout: float | None = None
    """How long a replica waits for in-flight reconciles of keys it gives away before cancelling them.
    Default: lease_duration."""

    def __post_init__(self) -> None:
        if not self.lease_duration > self.renew_deadline > self.retry_period > 0:
            raise ValueError("sharding needs lease_duration > renew_deadline > retry_period > 0")
        if self.by not in ("object", "owner"):
            raise ValueError(f'sharding by {self.by!r}: use "object" or "owner"')


def for_manager(mgr: Manager, options: ShardingOptions) -> Sharding:
    """The manager's Sharding, added as a runnable of every replica (`ManagerOptions(sharding=...)`)."""
    from pyscaffold_op.runtime.manager.manager import _in_cluster_namespace

    mo = mgr.options
    namespace = (
        options.namespace
        or mo.leader_election_namespace
        or _in_cluster_namespace()
        or mgr.transport.default_namespace
    )
    sharding = Sharding(
        mgr.api_reader,
        options,
        name=options.name or mo.leader_election_id or "pyop",
        namespace=namespace,
        clock=mgr.clock,
        on_lost=mgr.stop,
    )
    mgr.add(sharding, need_leader_election=False)
    return sharding


def lease_name(group: str, identity: str) -> str:
    """A DNS-1123 subdomain from the group and identity (hostnames and UUIDs fit after lowering)."""
    text = re.sub(r"[^a-z0-9.-]+", "-", f"{group}-shard-{identity}".lower()).strip("-.")
    return text[:253].rstrip("-.")


class ShardFilter:
    """One controller's view of the shard: does this replica reconcile this request now?"""

    def __init__(self, sharding: Sharding, ctrl: Controller) -> None:
        self.sharding, self.ctrl = sharding, ctrl
        self._store: Any = None
        self._owner_keys: dict[Hashable, str] = {}

    def key(self, req: Any) -> str:
        """The key hashed for `req`: its namespace/name, or its controller owner's ("owner" mode)."""
        own = f"{req.namespace}/{req.name}" if req.namespace else req.name
        if self.sharding.options.by != "owner":
            return own
        store = self._for_store()
        raw = store._items.get(own) if store is not None and store.stores_raw else None
        if raw is None:
            obj = store.get(own) if store is not None and not store.stores_raw else None
            if obj is None:  # gone from the cache: where it was last assigned, else its own key
                return self._owner_keys.get(req, own)
            from pyscaffold_op.runtime.objects import objmeta

            refs = objmeta.owner_references(obj)
        else:
            from pyscaffold_op.runtime.objects.rawobj import RawObject

            refs = RawObject(raw, store._decode).owner_references()
        key = own
        for ref in refs:
            if ref.controller:
                # the key the owner's controller hashes: a cluster-scoped owner's has no namespace
                scoped = req.namespace and self.sharding.owner_scopes.namespaced(ref.group, ref.kind)
                key = f"{req.namespace}/{ref.name}" if scoped else ref.name
                break
        self._owner_keys[req] = key
        return key

    def holds(self, req: Any) -> bool:
        return self.sharding.holds(self.key(req))

    def _for_store(self) -> Any:
        if self._store is None:
            informer = for_informer(self.ctrl)
            self._store = informer.store if informer is not None else None
        return self._store


class ShardedSink:
    """What a sharded controller's sources enqueue into: the queue, minus the keys not held here."""

    __slots__ = ("queue", "shard")

    def __init__(self, queue: Any, shard: ShardFilter) -> None:
        self.queue, self.shard = queue, shard

    def add(self, item: Any) -> None:
        if self.shard.holds(item):
            self.queue.add(item)

    def __getattr__(self, name: str) -> Any:  # add_after, add_rate_limited ...: the queue's own
        return getattr(self.queue, name)


def for_source(ctrl: Controller) -> Any:
    """The Kind source of the controller's `for_()` kind (its first Kind watch mapping objects to
    themselves), or None."""
    from pyscaffold_op.runtime.controller.controller import watches_of
    from pyscaffold_op.runtime.controller.handler import EnqueueRequestForObject
    from pyscaffold_op.runtime.controller.source import Kind

    for src, handler, _preds in watches_of(ctrl):
        if isinstance(src, Kind) and isinstance(handler, EnqueueRequestForObject) and src.cache is not None:
            return src
    return None


def for_informer(ctrl: Controller) -> Any:
    """The informer of the controller's `for_()` kind, or None."""
    src = for_source(ctrl)
    return src.cache.get_informer(src.type) if src is not None else None


class Sharding:
    """The membership and assignment of one replica; a runnable of its manager on every replica."""

    def __init__(
        self,
        client: Any,
        options: ShardingOptions,
        *,
        name: str,
        namespace: str,
        clock: Clock | None = None,
        on_lost: Callable[[], None] | None = None,
    ) -> None:
        from pyscaffold_op.runtime.manager.leader import default_identity

        self.client, self.options = client, options
        self.name, self.namespace = name, namespace
        self.identity = options.identity or default_identity()
        self.lease_name = lease_name(name, self.identity)
        self.clock = clock or REAL_CLOCK
        self.on_lost = on_lost
        self.handover_timeout = options.handover_timeout or options.lease_duration
        self.controllers: list[Controller] = []
        self.owner_scopes = OwnerScopes(self._for_kinds)
        self.current: Assignment = EMPTY  # the view adopted last (acknowledged once drained)
        self.pending: list[Assignment] = [EMPTY]  # views adopted since the last complete one
        self.acked = ""  # the digest this replica acknowledges in its Lease
        self.lost = False
        self.changed = asyncio.Event()  # set whenever what this replica holds changes (tests)
        self._observed: dict[str, tuple[tuple[Any, ...], float]] = {}  # lease -> (record, seen at)
        self._lease: Any = None
        self.renewal = RenewalAge(self.clock, options.renew_deadline)  # our Lease's age (manager/fence.py)
        self._failures = 0  # renewals failed since the last successful one
        self._stopping = False

    # -- what a controller asks ------------------------------------------------------------------------
    def holds(self, key: str) -> bool:
        """True when this replica may reconcile `key` now: its Lease was renewed within `renew_deadline`
        and it owns `key` in every view it adopted since the last view every member acknowledged."""
        renewal = self.renewal
        if not renewal.fresh():
            if renewal.last is not None:
                self._rejoin(renewal.age() or 0.0)
            return False
        me = self.identity
        for view in self.pending:  # noqa: SIM110  (a loop: all() over a generator costs twice as much here)
            if view.owner(key) != me:
                return False
        return True

    def attach(self, ctrl: Controller) -> None:
        """Shard `ctrl`: it runs on every replica and reconciles only the keys held here."""
        ctrl.need_leader_election = False
        ctrl.shard = ShardFilter(self, ctrl)
        self.controllers.append(ctrl)
        self.owner_scopes.forget()

    def _for_kinds(self) -> list[tuple[str, str, bool]]:
        """(group, kind, namespaced) of the sharded controllers' `for_()` kinds."""
        from pyscaffold_op.runtime.objects.kinds import info_for

        out = []
        for ctrl in self.controllers:
            src = for_source(ctrl)
            if src is not None:
                info = info_for(src.type)
                out.append((info.group, info.kind, info.namespaced))
        return out

    @property
    def members(self) -> tuple[str, ...]:
        return self.current.members

    @property
    def complete(self) -> bool:
        return len(self.pending) == 1 and self.pending[0] is self.current and self.current is not EMPTY

    # -- the runnable ------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Announce, then renew and follow the members until cancelled; delete the Lease on the way out."""
        opts = self.options
        log.info(
            "joining shard group",
            extra={
                "group": self.name,
                "identity": self.identity,
                "lease": f"{self.namespace}/{self.lease_name}",
            },
        )
        try:
            while not self._stopping:
                renewed = await self._renew()
                # lost: renewals keep failing past the deadline. Two failures at least: one renewal
                # whose request a pause caught in flight fails by its own timeout as the process wakes
                if not renewed and self.renewal.expired() and self._failures >= 2:
                    self._fence()
                    return
                if self.renewal.last is not None:
                    await self._follow()
                await self.clock.sleep(opts.retry_period)
        finally:
            if not self.lost:
                with contextlib.suppress(BaseException):
                    await asyncio.shield(self._leave())

    async def _follow(self) -> None:
        """One round: adopt a changed member set, or promote the current view once all acknowledged."""
        try:
            live, acks = await self._live_members()
        except Exception as err:
            log.warning("listing shard members: %s", err, extra={"group": self.name})
            return
        view = Assignment(live)
        if view != self.current:
            await self._adopt(view)
            await self._renew()  # publish the acknowledgement now, not a retry period later
            return
        if not self.complete and all(acks.get(m) == view.digest for m in view.members):
            self.pending = [self.current]
            self.changed.set()
            log.info(
                "shard view complete",
                extra={"group": self.name, "members": list(view.members), "identity": self.identity},
            )
            self._replay()

    async def _adopt(self, view: Assignment) -> None:
        """Give up at once what `view` does not give us; drain it; then acknowledge `view`."""
        log.info(
            "shard members changed",
            extra={"group": self.name, "members": list(view.members), "identity": self.identity},
        )
        self.current = view
        self.pending.append(view)
        self.changed.set()
        await self._drain()
        self.acked = view.digest

    async def _drain(self) -> None:
        """Wait for the in-flight reconciles of keys no longer held; past `handover_timeout`, cancel them."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.handover_timeout
        revoked_at: float | None = None
        renew_at = self.clock.monotonic() + self.options.retry_period
        while True:
            busy = [(c, k) for c in self.controllers for k in c.queue.processing() if not c.shard.holds(k)]
            if not busy:
                return
            if self.clock.monotonic() >= renew_at:
                # a drain may outlast renew_deadline (handover_timeout is the lease duration): keep
                # renewing meanwhile, with the acknowledgement of the view before, which still stands
                await self._renew()
                renew_at = self.clock.monotonic() + self.options.retry_period
            now = loop.time()
            if revoked_at is None and now >= deadline:
                log.warning(
                    "reconciles of moved keys ran past the handover timeout; cancelling them",
                    extra={"group": self.name, "count": len(busy)},
                )
                for ctrl, key in busy:
                    ctrl.revoke(key)
                revoked_at = now
            elif revoked_at is not None and now - revoked_at > _REVOKE_WAIT:
                log.error("revoked reconciles did not unwind", extra={"group": self.name, "count": len(busy)})
                return
            await asyncio.sleep(_DRAIN_POLL)

    def _replay(self) -> None:
        """Enqueue every cached object of each controller's for_() kind that is held here now: the
        events for keys gained were dropped while they were not."""
        from pyscaffold_op.runtime.controller.request import Request

        for ctrl in self.controllers:
            informer = for_informer(ctrl)
            if informer is None or ctrl.queue.shutting_down():
                continue
            sink = ctrl.sink()
            for key in informer.store.list_keys():
                ns, _, name = key.rpartition("/")
                sink.add(Request(ns, name))

    def _rejoin(self, age: float) -> None:
        """Our Lease is older than renew_deadline (we were not running): the others may have taken our
        keys meanwhile. Hold nothing, revoke what runs, and start over as a new member: the next round
        adopts a fresh view, whose keys are ours once every member has acknowledged it. Again at every
        look while the Lease stays that old: a view completed meanwhile may be stale by the next gap."""
        if self.current is EMPTY:
            return
        log.warning(
            "shard lease not renewed for %.1fs, more than renew_deadline: holding no key until a fresh view "
            "is acknowledged by all",
            age,
            extra={"group": self.name, "identity": self.identity},
        )
        self.pending = [EMPTY]
        self.current = EMPTY
        self.acked = ""
        self.changed.set()
        for ctrl in self.controllers:
            for key in ctrl.queue.processing():
                ctrl.revoke(key)

    def _fence(self) -> None:
        """Lost our Lease: hold nothing, cancel what runs, stop the manager."""
        log.error(
            "shard lease lost: could not renew within renew_deadline; stopping",
            extra={"group": self.name, "identity": self.identity},
        )
        self.lost = True
        self.pending = [EMPTY]
        self.current = EMPTY
        self.changed.set()
        for ctrl in self.controllers:
            ctrl.abort()
        if self.on_lost is not None:
            self.on_lost()

    # -- Leases ------------------------------------------------------------------------------------------
    async def _renew(self) -> bool:
        """Create or renew our Lease, with our acknowledgement; False on any failure (retried)."""
        renewed = await self._try_renew()
        self._failures = 0 if renewed else self._failures + 1
        return renewed

    async def _try_renew(self) -> bool:
        """One renewal (the Lease created if missing); True when the server took it."""
        from pyscaffold_op.apimachinery import ObjectMeta
        from pyscaffold_op.models.coordination_v1 import Lease, LeaseSpec

        sent = self.renewal.sending()
        if self.renewal.expired():  # woken after a gap: nothing we adopted before it still holds
            self._rejoin(self.renewal.age() or 0.0)
        now = self.clock.now()
        spec = LeaseSpec(
            holder_identity=self.identity,
            lease_duration_seconds=max(1, round(self.options.lease_duration)),
            renew_time=now,
        )
        labels, annotations = {GROUP_LABEL: self.name}, {VIEW_ANNOTATION: self.acked}
        try:
            async with asyncio.timeout(self.options.renew_deadline):
                if self._lease is None:
                    try:
                        self._lease = await self.client.get(Lease, self.lease_name, namespace=self.namespace)
                    except NotFound:
                        lease = Lease(
                            metadata=ObjectMeta(
                                name=self.lease_name,
                                namespace=self.namespace,
                                labels=labels,
                                annotations=annotations,
                            ),
                            spec=spec.model_copy(update={"acquire_time": now}),
                        )
                        self._lease = await self.client.create(lease)
                        self.renewal.renewed(sent)
                        return True
                lease = self._lease
                lease.metadata.labels = {**(lease.metadata.labels or {}), **labels}
                lease.metadata.annotations = {**(lease.metadata.annotations or {}), **annotations}
                acquired = (lease.spec and lease.spec.acquire_time) or now
                lease.spec = spec.model_copy(update={"acquire_time": acquired})
                self._lease = await self.client.update(lease)
                self.renewal.renewed(sent)
                return True
        except (Conflict, AlreadyExists, NotFound):
            self._lease = None  # read it again next round
            return False
        except (ApiError, TimeoutError, OSError) as err:
            log.warning("renewing shard lease: %s", err, extra={"lease": self.lease_name})
            self._lease = None
            return False
        except Exception as err:  # network errors of any kind: keep trying until the deadline
            log.warning("renewing shard lease: %r", err, extra={"lease": self.lease_name})
            self._lease = None
            return False

    async def _live_members(self) -> tuple[set[str], dict[str, str]]:
        """The members whose Lease changed within its duration (on our clock), and what each acknowledges."""
        from pyscaffold_op.models.coordination_v1 import Lease

        leases = await self.client.list(Lease, namespace=self.namespace, labels={GROUP_LABEL: self.name})
        now = self.clock.monotonic()
        live: set[str] = set()
        acks: dict[str, str] = {}
        seen = set()
        for lease in leases:
            name = lease.metadata.name
            spec = lease.spec
            holder = spec.holder_identity if spec is not None else None
            if not holder:
                continue
            seen.add(name)
            ack = (lease.metadata.annotations or {}).get(VIEW_ANNOTATION, "")
            record = (holder, spec.renew_time, ack)
            previous = self._observed.get(name)
            if previous is None or previous[0] != record:
                self._observed[name] = (record, now)
                seen_at = now
            else:
                seen_at = previous[1]
            duration = spec.lease_duration_seconds or self.options.lease_duration
            if holder == self.identity or seen_at + duration > now:
                live.add(holder)
                acks[holder] = ack
            elif now - seen_at > 2 * duration and holder != self.identity:
                await self._collect(lease)  # a member that died long ago: tidy its Lease away
        for name in set(self._observed) - seen:
            del self._observed[name]
        live.add(self.identity)  # we renewed within the deadline: we are a member
        acks[self.identity] = self.acked
        return live, acks

    async def _collect(self, lease: Any) -> None:
        with contextlib.suppress(Exception):
            await self.client.delete(lease)
            log.info("removed the expired shard lease of %s", lease.spec.holder_identity)

    async def _leave(self) -> None:
        """Graceful stop (after the manager drained the controllers): delete our Lease, so the others
        take our keys within a retry period instead of a lease duration."""
        from pyscaffold_op.models.coordination_v1 import Lease

        self._stopping = True
        try:
            async with asyncio.timeout(2.0):
                await self.client.delete(Lease, self.lease_name, namespace=self.namespace)
            log.info("left shard group", extra={"group": self.name, "identity": self.identity})
        except Exception as err:
            log.warning("could not delete shard lease: %s", err, extra={"lease": self.lease_name})
