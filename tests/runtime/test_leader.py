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


async def lead(clock: FakeClock, e: LeaderElector) -> None:
    e.start()
    await asyncio.wait_for(e.elected.wait(), 5)
    await clock.wait_for_timers()  # asleep until its next renewal


async def test_a_leader_paused_past_the_renew_deadline_holds_nothing_until_renewed() -> None:
    """Paused (SIGSTOP) right after a renewal, for longer than renew_deadline but shorter than the lease:
    nobody could take the lease, so the first renewal after the pause succeeds and work resumes; until
    then no reconcile may start (on waking, the process cannot know yet)."""
    clock, leases = FakeClock(), Leases()
    a = elector(leases, clock, "a")
    await lead(clock, a)
    assert a.holds()
    sent = a.renewal.last
    assert sent is not None
    clock._mono = sent + TIMINGS["renew_deadline"]  # exactly at the deadline: still held
    assert a.holds()
    clock.advance(0.5)  # SIGCONT: time jumped past the deadline before the loop could run
    assert not a.holds()
    waiter = asyncio.ensure_future(a.wait_holds())
    await asyncio.sleep(0)
    assert await asyncio.wait_for(waiter, 5) is True  # the overdue renewal ran and found the lease ours
    assert a.holds() and not a.lost.is_set() and leases.holder == "a"
    await a.stop()


async def test_a_leader_that_finds_another_holder_loses_at_once_not_after_the_renew_deadline() -> None:
    """Paused past the lease duration: a standby took the lease. client-go retries its renewal until
    renew_deadline (reconciling all along); pyop's leader started nothing since it woke, and gives up
    on the first renewal that reads another holder."""
    clocks = {"a": FakeClock(), "b": FakeClock()}
    leases = Leases()
    a, b = elector(leases, clocks["a"], "a"), elector(leases, clocks["b"], "b")
    await lead(clocks["a"], a)
    b.start()
    while not b.elected.is_set():  # a is paused: only b's time moves
        await clocks["b"].wait_for_timers()
        if not b.elected.is_set():
            clocks["b"].advance(TIMINGS["retry_period"])
    assert leases.holder == "b"
    assert a.is_leader and not a.lost.is_set()  # a has not run since: it still thinks it leads
    waiter = asyncio.ensure_future(a.wait_holds())
    clocks["a"].advance(TIMINGS["lease_duration"] + 1)  # SIGCONT
    assert not a.holds()
    assert await asyncio.wait_for(waiter, 5) is False
    assert a.lost.is_set() and not a.is_leader
    # at its first attempt: its clock never moved on for a renew deadline of retries
    assert a._task is not None and await ended(a._task)
    assert leases.holder == "b"
    await b.stop()


async def test_a_renewal_caught_in_flight_by_a_pause_is_retried_once_not_taken_as_lost() -> None:
    """SIGSTOP while the renewal's request is in flight, for longer than renew_deadline: on SIGCONT its
    timeout has passed and it fails. That is the pause, not the server: one more attempt, which finds
    the lease still ours."""
    clock, leases = FakeClock(), Leases()
    a = elector(leases, clock, "a")
    await lead(clock, a)
    leases.hang = asyncio.Event()  # the next request is "in flight" until the pause ends
    clock.advance(TIMINGS["retry_period"])  # the renewal starts and waits for its answer
    await clock.wait_for_timers()  # its timeout is armed
    clock.advance(TIMINGS["renew_deadline"] + 0.5)  # paused meanwhile: the timeout fires on waking
    leases.hang.set()
    leases.hang = None
    assert await asyncio.wait_for(a.wait_holds(), 5) is True
    assert not a.lost.is_set() and leases.holder == "a"
    await a.stop()


async def test_renewals_failing_past_the_deadline_still_lose_the_lease() -> None:
    clock, leases = FakeClock(), Leases()
    a = elector(leases, clock, "a")
    await lead(clock, a)

    async def refuse(lease: Lease) -> Lease:
        raise Conflict("the object has been modified")

    leases.update = refuse  # type: ignore[method-assign]
    steps = 0
    while not a.lost.is_set():
        await clock.wait_for_timers()
        clock.advance(TIMINGS["retry_period"])
        await asyncio.sleep(0)
        steps += 1
        if steps * TIMINGS["retry_period"] > TIMINGS["renew_deadline"]:
            assert not a.holds()  # fenced by the age of its last renewal, before the loop gives up
        assert steps < 100, "never lost"
    assert not a.is_leader
