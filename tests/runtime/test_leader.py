"""Leader election against an in-memory Lease store, on a fake clock: lease timings are logic, not waits."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from typing import Any

from pyscaffold_op.models.coordination_v1 import Lease
from pyscaffold_op.runtime.client.errors import Conflict, NotFound
from pyscaffold_op.runtime.clock import FakeClock
from pyscaffold_op.runtime.manager.leader import LeaderElector

TIMINGS = {"lease_duration": 2.0, "renew_deadline": 1.0, "retry_period": 0.1}


class Leases:
    """One Lease, stored as the server would: copies in and out, resourceVersion checked on update."""

    def __init__(self) -> None:
        self.lease: Lease | None = None
        self.rv = 0
        self.after_update: Callable[[], object] | None = None
        self.hang: asyncio.Event | None = None  # set: requests wait until it is cleared (and set)

    async def get(self, kind: type, name: str, *, namespace: str | None = None) -> Lease:
        if self.hang is not None:
            await self.hang.wait()
        if self.lease is None:
            raise NotFound(f"leases {name!r} not found")
        return copy.deepcopy(self.lease)

    async def create(self, lease: Lease) -> Lease:
        self.rv += 1
        lease.metadata.resource_version = str(self.rv)
        self.lease = copy.deepcopy(lease)
        return lease

    async def update(self, lease: Lease) -> Lease:
        assert self.lease is not None
        if lease.metadata.resource_version != self.lease.metadata.resource_version:
            raise Conflict("the object has been modified")
        self.rv += 1
        lease.metadata.resource_version = str(self.rv)
        self.lease = copy.deepcopy(lease)
        if self.after_update is not None:
            self.after_update()
        return lease

    @property
    def holder(self) -> str | None:
        assert self.lease is not None and self.lease.spec is not None
        return self.lease.spec.holder_identity


def elector(leases: Leases, clock: FakeClock, identity: str, **kw: Any) -> LeaderElector:
    return LeaderElector(leases, "lock", "default", identity=identity, clock=clock, **{**TIMINGS, **kw})


async def ended(task: asyncio.Task[Any]) -> bool:
    """True once `task` is done; a real-time bound so a hang fails instead of blocking the suite."""
    done, _ = await asyncio.wait([task], timeout=5)
    return task in done


async def test_a_cancel_landing_as_a_renewal_returns_still_stops_and_releases() -> None:
    # The root cause of the takeover stall: on Python 3.11, asyncio.wait_for swallowed a cancellation
    # that arrived in the loop iteration where the renewal it wrapped finished, so the elector kept
    # renewing for ever, the standby never took over, and the manager's shutdown never ended.
    clock, leases = FakeClock(), Leases()
    e = elector(leases, clock, "me")
    task = e.start()
    await asyncio.wait_for(e.elected.wait(), 5)
    loop = asyncio.get_running_loop()
    leases.after_update = lambda: loop.call_soon(task.cancel)  # lands as the renewal's update returns
    await clock.wait_for_timers()
    clock.advance(TIMINGS["retry_period"])
    assert await ended(task)
    assert task.cancelled()
    assert leases.holder is None  # released on the way out (ReleaseOnCancel)


async def test_stop_while_renewing_releases_so_a_standby_need_not_wait_out_the_lease() -> None:
    clock, leases = FakeClock(), Leases()
    leader, standby = elector(leases, clock, "a"), elector(leases, clock, "b")
    leader.start()
    await asyncio.wait_for(leader.elected.wait(), 5)
    standby.start()
    await clock.wait_for_timers(2)  # both sleep: the leader before renewing, the standby before retrying
    assert not standby.elected.is_set()
    loop = asyncio.get_running_loop()
    stopping: asyncio.Future[asyncio.Task[bool]] = loop.create_future()

    def stop_now() -> None:  # told to stop as its renewal's update returns
        leases.after_update = None
        stopping.set_result(loop.create_task(leader.stop()))

    leases.after_update = stop_now
    clock.advance(TIMINGS["retry_period"])
    assert await asyncio.wait_for(await stopping, 5) is True
    assert leases.holder is None and not leader.is_leader
    # the standby's next retry finds the lease free: no need to wait out leaseDurationSeconds
    while not standby.elected.is_set():
        await clock.wait_for_timers()  # the standby sleeps until its next retry (or leads already)
        if not standby.elected.is_set():
            clock.advance(TIMINGS["retry_period"] * 1.2)
    assert clock.monotonic() - 1000.0 < TIMINGS["lease_duration"]
    assert leases.holder == "b" and leases.lease.spec.lease_transitions == 1
    await standby.stop()
    assert leases.holder is None


async def test_stop_is_bounded_when_the_api_server_hangs() -> None:
    clock, leases = FakeClock(), Leases()
    e = elector(leases, clock, "me")
    task = e.start()
    await asyncio.wait_for(e.elected.wait(), 5)
    leases.hang = asyncio.Event()  # requests from now on get no answer
    await clock.wait_for_timers()
    clock.advance(TIMINGS["retry_period"])  # a renewal starts and hangs
    assert await asyncio.wait_for(e.stop(timeout=0.05), 5) is False  # stopped, though not released
    leases.hang.set()
    assert await ended(task)


async def test_a_standby_takes_an_expired_lease_only_after_lease_duration_on_its_own_clock() -> None:
    from pyscaffold_op.apimachinery import ObjectMeta
    from pyscaffold_op.models.coordination_v1 import LeaseSpec

    clock, leases = FakeClock(), Leases()
    await leases.create(  # a leader that crashed: it holds the lease and will never renew it
        Lease(
            metadata=ObjectMeta(name="lock", namespace="default"),
            spec=LeaseSpec(holder_identity="gone", lease_duration_seconds=2, renew_time=clock.now()),
        )
    )
    standby = elector(leases, clock, "b")
    standby.start()
    while not standby.elected.is_set():
        await clock.wait_for_timers()
        if not standby.elected.is_set():
            clock.advance(clock.next_deadline() - clock.monotonic())  # type: ignore[operator]
    # first seen at t=0, so free at t=lease_duration: not before, and at the first retry after it
    waited = clock.monotonic() - 1000.0
    assert TIMINGS["lease_duration"] <= waited < TIMINGS["lease_duration"] + 1.2 * TIMINGS["retry_period"]
    assert leases.holder == "b" and leases.lease is not None and leases.lease.spec.lease_transitions == 1
    await standby.stop()
