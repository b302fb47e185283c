"""A leader paused (SIGSTOP) right after renewing its Lease, for longer than the lease duration, woke while
another replica led and kept reconciling until its renewals had failed for `renew_deadline` (client-go's
leader election checks nothing before a reconcile). Now a leader-elected controller starts no reconcile
once the leader's last successful renewal is older than `renew_deadline` on its own monotonic clock;
the next renewal decides: the Lease still names it (nobody led meanwhile) and work resumes, or it names
another holder and leadership is lost at once (the manager stops, `LeaderElectionLost`).

A manager on its own `FakeClock` against the emulator and the real kube-apiserver; a standby elector on
another. The leader is "paused" by not moving its clock while the standby's moves; then its clock jumps
by the pause at once, as a process sees time after SIGCONT, and an event reaches its controller in the
same instant. The multi-process version (real SIGSTOP/SIGCONT) is test_leader_sigstop.py."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.coordination_v1 import Lease
from pyscaffold_op.runtime import LeaderElectionLost, Manager, ManagerOptions, Request, new_client
from pyscaffold_op.runtime.manager.leader import LeaderElector
from pyscaffold_op.testing import FakeClock, eventually
from tests.runtime.widgets import Widget, widget

from .servers import MODES, environment

LEASE, DEADLINE, RETRY = 15.0, 10.0, 2.0
LEASE_ID = "pause.test.pyop.io"


@pytest.fixture(params=MODES)
async def env(request: pytest.FixtureRequest) -> AsyncIterator[Environment]:
    async with environment(request.param) as e:
        yield e


class Writes:
    """The elector's client, noting each Lease update the server took."""

    def __init__(self, inner: Any, steps: list[str]) -> None:
        self.inner, self.steps = inner, steps

    async def update(self, obj: Any) -> Any:
        out = await self.inner.update(obj)
        self.steps.append("renewed")
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Leader:
    """A manager leading on its own fake clock, with one controller that records its reconciles."""

    def __init__(self, env: Environment) -> None:
        self.clock = FakeClock()
        self.calls: list[tuple[float, str]] = []  # (fake monotonic time, name)
        self.mgr = Manager(
            env.config,
            ManagerOptions(
                metrics_bind_address="0",
                health_probe_bind_address="0",
                graceful_shutdown_timeout=2.0,
                leader_election=True,
                leader_election_id=LEASE_ID,
                leader_election_namespace="default",
                leader_identity="a",
                lease_duration=LEASE,
                renew_deadline=DEADLINE,
                retry_period=RETRY,
                clock=self.clock,
            ),
        )

        async def reconcile(req: Request) -> None:
            self.calls.append((self.clock.monotonic(), req.name))
            self.steps.append(f"reconcile {req.name}")

        self.steps: list[str] = []  # reconciles and the leader's lease writes, in the order they happened
        assert self.mgr.elector is not None
        self.mgr.elector.client = Writes(self.mgr.elector.client, self.steps)

        self.mgr.builder().for_(Widget).complete(reconcile)
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.task = asyncio.create_task(self.mgr.start(install_signal_handlers=False))
        await asyncio.wait_for(self.mgr.elected.wait(), 30)
        await self.clock.wait_for_timers()  # its renew loop sleeps till the next renewal

    async def stop(self) -> None:
        self.mgr.stop()
        if self.task is not None:
            with contextlib.suppress(LeaderElectionLost):
                await asyncio.wait_for(self.task, 30)

    def wake(self, pause: float, event: str) -> None:
        """SIGCONT after `pause`: time jumps, and an event for `event` is queued in the same instant."""
        self.clock.advance(pause)
        self.mgr.controllers[0].queue.add(Request("default", event))


@pytest.fixture
async def leader(env: Environment) -> AsyncIterator[Leader]:
    ld = Leader(env)
    await ld.start()
    try:
        yield ld
    finally:
        await ld.stop()


async def standby_takes_over(env: Environment, clock: FakeClock) -> LeaderElector:
    """A standby on its own clock, moved until it leads (the lease expired on its clock)."""
    api = new_client(env.config)
    standby = LeaderElector(
        api,
        LEASE_ID,
        "default",
        identity="b",
        lease_duration=LEASE,
        renew_deadline=DEADLINE,
        retry_period=RETRY,
        clock=clock,
    )
    standby.start()
    for _ in range(50):
        await clock.wait_for_timers()
        if standby.elected.is_set():
            return standby
        clock.advance(RETRY * 1.2)
        await asyncio.sleep(0.01)  # its request to the server
    raise AssertionError("the standby never took the expired lease")


async def test_a_leader_paused_past_the_lease_starts_no_reconcile_and_exits(
    env: Environment, leader: Leader
) -> None:
    api = new_client(env.config)
    try:
        await api.create(widget("before"))
        await eventually(lambda: any(n == "before" for _, n in leader.calls), timeout=30)
        standby_clock = FakeClock()
        standby = await standby_takes_over(env, standby_clock)  # the leader is paused meanwhile
        woke_at = leader.clock.monotonic() + LEASE + 5
        leader.wake(LEASE + 5, "after")
        assert leader.task is not None
        with pytest.raises(LeaderElectionLost):
            await asyncio.wait_for(leader.task, 30)
        assert [n for t, n in leader.calls if t >= woke_at] == []
        # lost at its first renewal after the pause, not after a renew deadline of retries
        assert leader.clock.monotonic() == woke_at
        await standby.stop()
    finally:
        await api.close()


async def test_a_leader_paused_past_the_renew_deadline_only_resumes_once_renewed(
    env: Environment, leader: Leader
) -> None:
    """Nobody could take the lease (the pause is shorter than the lease duration): the event queued on
    waking is reconciled only after the first renewal found the lease still ours, and the leader leads on."""
    api = new_client(env.config)
    try:
        before = (await api.get(Lease, LEASE_ID, namespace="default")).spec
        assert before is not None and before.holder_identity == "a"
        mark = len(leader.steps)
        leader.wake(DEADLINE + 1, "after")
        await eventually(lambda: "reconcile after" in leader.steps, timeout=30)
        assert leader.steps[mark:][:2] == ["renewed", "reconcile after"]  # renewed before it started
        after = (await api.get(Lease, LEASE_ID, namespace="default")).spec
        assert after is not None and after.holder_identity == "a"
        assert after.lease_transitions == before.lease_transitions
        assert leader.task is not None and not leader.task.done()
    finally:
        await api.close()
