"""Issue 38: a shard replica paused right after a renewal, for longer than its renew deadline, woke up
and started keys the others had taken meanwhile: its first renewal after the pause succeeded and
`holds()` never looked at how old its Lease was. Now a replica holds nothing once its last successful
renewal is older than `renew_deadline` on its own monotonic clock, and after such a gap it rejoins as a
new member: no key until a view adopted after the gap is acknowledged by every member.

Two replicas on one emulator, each on its own `FakeClock`: replica a is "paused" by not moving its clock
while b's moves; then a's clock jumps by the pause at once, as a process sees time after SIGCONT. The
multi-process version (real SIGSTOP/SIGCONT, 20 runs) is test_shard_sigstop.py."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from pyscaffold_op.runtime import Client, ShardingOptions
from pyscaffold_op.runtime.sharding.assign import Assignment
from pyscaffold_op.runtime.sharding.shards import Sharding
from pyscaffold_op.testing import FakeClock, eventually

LEASE, DEADLINE, RETRY = 15.0, 10.0, 2.0
KEYS = [f"default/k{i}" for i in range(40)]


class Flaky:
    """A client whose Lease updates fail while `failing` is set; `before_update`, when given, runs
    once before the next update (the process being paused while that request is in flight)."""

    def __init__(self, inner: Client) -> None:
        self.inner = inner
        self.failing = False
        self.before_update: Callable[[], None] | None = None

    async def update(self, obj: Any) -> Any:
        hook, self.before_update = self.before_update, None
        if hook is not None:
            hook()
            raise TimeoutError  # the renewal's own timeout, fired by the time the pause took
        if self.failing:
            raise TimeoutError
        return await self.inner.update(obj)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Pair:
    """Replicas a and b, each running its membership loop on its own fake clock."""

    def __init__(self, api: Client) -> None:
        self.clocks = {"a": FakeClock(), "b": FakeClock()}
        self.clients = {"a": Flaky(api), "b": Flaky(api)}
        self.replicas = {
            name: Sharding(
                self.clients[name],
                ShardingOptions(
                    identity=name, lease_duration=LEASE, renew_deadline=DEADLINE, retry_period=RETRY
                ),
                name="pause",
                namespace="default",
                clock=clock,
            )
            for name, clock in self.clocks.items()
        }
        self.tasks: list[asyncio.Task[None]] = []
        self.overlaps: list[str] = []
        self.paused = False  # replica a is stopped: it runs no code, so it asks holds() nothing

    async def start(self) -> None:
        self.tasks = [asyncio.create_task(r.start()) for r in self.replicas.values()]
        for clock in self.clocks.values():
            await clock.wait_for_timers(1)

    async def step(self, *names: str, seconds: float = RETRY) -> None:
        """Move the clocks of `names` by `seconds` and wait until each loop sleeps again."""
        for name in names:
            self.clocks[name].advance(seconds)
            self.check()
        for name in names:
            await self.clocks[name].wait_for_timers(1)
        self.check()

    def check(self) -> None:
        """No key held by both replicas at this moment (a paused replica asks nothing: not checked)."""
        if self.paused:
            return
        a, b = self.replicas["a"], self.replicas["b"]
        self.overlaps += [k for k in KEYS if a.holds(k) and b.holds(k)]

    def settled(self, members: tuple[str, ...]) -> bool:
        return all(r.complete and r.members == members for r in self.replicas.values())

    async def until(self, members: tuple[str, ...], *names: str) -> None:
        for _ in range(30):
            if all(self.replicas[n].complete and self.replicas[n].members == members for n in names):
                return
            await self.step(*names)
        raise AssertionError(f"{names} never completed the view {members}")

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task


@pytest.fixture
async def pair(api: Client) -> AsyncIterator[Pair]:
    p = Pair(api)
    await p.start()
    try:
        yield p
    finally:
        await p.stop()


@pytest.mark.parametrize(
    "pause",
    [DEADLINE + 2, LEASE + 5],  # past the deadline only; past the lease too (b takes a's keys)
    ids=["past-renew-deadline", "past-lease-duration"],
)
async def test_a_paused_replica_holds_nothing_until_a_fresh_view(pair: Pair, pause: float) -> None:
    a, b = pair.replicas["a"], pair.replicas["b"]
    await pair.until(("a", "b"), "a", "b")
    mine = [k for k in KEYS if Assignment(["a", "b"]).owner(k) == "a"]
    assert mine and all(a.holds(k) for k in mine)
    # a is paused right after a renewal; b's time goes on
    pair.paused = True
    for _ in range(int(pause // RETRY)):
        await pair.step("b")
    if pause > LEASE:
        await pair.until(("b",), "b")  # a's Lease expired on b's clock: b took a's keys
        assert all(b.holds(k) for k in mine)
    # SIGCONT: a's clock jumps by the pause before its loop runs
    pair.clocks["a"].advance(pause)
    pair.paused = False
    assert not any(a.holds(k) for k in mine)  # its Lease is older than the renew deadline
    pair.check()
    await pair.clocks["a"].wait_for_timers(1)
    assert not any(a.holds(k) for k in mine)  # renewed, but its view is not complete yet
    await pair.until(("a", "b"), "a", "b")
    assert all(a.holds(k) for k in mine) and not any(b.holds(k) for k in mine)
    assert pair.overlaps == []


async def test_renewals_older_than_the_deadline_hold_nothing(pair: Pair) -> None:
    """The age is measured from when the last successful renewal was sent, on the replica's own clock:
    a replica whose loop is stuck (here: its clock moves, its loop does not renew) lets go at the
    deadline, before the others could take its keys at the lease duration."""
    a = pair.replicas["a"]
    await pair.until(("a", "b"), "a", "b")
    mine = [k for k in KEYS if Assignment(["a", "b"]).owner(k) == "a"]
    assert all(a.holds(k) for k in mine)
    assert a.renewal.last is not None
    sent = a.renewal.last
    pair.clocks["a"]._mono = sent + DEADLINE  # exactly at the deadline: still held
    assert all(a.holds(k) for k in mine)
    pair.clocks["a"]._mono = sent + DEADLINE + 0.001
    assert not any(a.holds(k) for k in mine)
    assert a.current.members == () and a.acked == ""  # it will rejoin as a new member


async def test_renewals_failing_past_the_deadline_fence_the_replica(pair: Pair) -> None:
    a = pair.replicas["a"]
    await pair.until(("a", "b"), "a", "b")
    mine = [k for k in KEYS if Assignment(["a", "b"]).owner(k) == "a"]
    pair.clients["a"].failing = True  # the API server stops answering a
    steps = 0
    while not a.lost:
        pair.clocks["a"].advance(RETRY)
        steps += 1
        await eventually(lambda: a.lost or pair.clocks["a"].pending() > 0, timeout=10)
        if steps * RETRY > DEADLINE:
            assert not any(a.holds(k) for k in mine)  # let go at the deadline, whatever comes next
        assert steps * RETRY <= DEADLINE + 2 * RETRY, "never fenced"
    assert steps * RETRY > DEADLINE and a.current.members == ()
    await asyncio.wait_for(pair.tasks[0], 5)  # its loop ended: the manager stops (ShardLeaseLost)


async def test_a_renewal_in_flight_during_the_pause_does_not_fence(pair: Pair) -> None:
    """SIGSTOP while a renewal's request is in flight: on SIGCONT its timeout has passed and it fails.
    One failure after a gap is the pause, not a lost server: the next renewal succeeds and the replica
    rejoins, holding nothing until the fresh view is complete."""
    a = pair.replicas["a"]
    await pair.until(("a", "b"), "a", "b")
    mine = [k for k in KEYS if Assignment(["a", "b"]).owner(k) == "a"]
    pause = LEASE + 5

    def paused() -> None:
        pair.clocks["a"].advance(pause)

    pair.clients["a"].before_update = paused
    pair.paused = True
    for _ in range(int(pause // RETRY)):  # b's time goes on (the request is "in flight" meanwhile)
        await pair.step("b")
    await pair.until(("b",), "b")
    pair.clocks["a"].advance(RETRY)  # a's loop renews: the hook pauses it, then the renewal fails
    pair.paused = False
    await pair.clocks["a"].wait_for_timers(1)
    assert not a.lost and not any(a.holds(k) for k in mine)
    await pair.until(("a", "b"), "a", "b")
    assert not a.lost and all(a.holds(k) for k in mine)
    assert pair.overlaps == []
