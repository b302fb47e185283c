"""Lost leadership and shutdown edges: a manager stops reconciling at once when it loses its lease, and
a drain that runs past its grace period is an error."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from runtime.widgets import Widget, widget  # `tests/` is on sys.path: the runtime tests are package `runtime`

from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.coordination_v1 import Lease
from pyscaffold_op.runtime import (
    Client,
    LeaderElectionLost,
    Manager,
    ManagerOptions,
    Request,
    ShutdownTimeout,
)
from pyscaffold_op.testing import eventually


class Stuck:
    """A reconcile that never ends on its own; records that it started and that it was cancelled."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.cancelled: list[str] = []

    async def reconcile(self, request: Request) -> None:
        self.started.append(request.name)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.append(request.name)
            raise


async def test_a_leader_that_loses_its_lease_cancels_in_flight_reconciles_at_once(
    env: Environment, api: Client
) -> None:
    # Before: the manager drained for graceful_shutdown_timeout (30 s by default) while the next leader
    # could already reconcile the same keys: split brain for up to ~25 s.
    stuck = Stuck()
    mgr = Manager(
        env.config,
        ManagerOptions(
            health_probe_bind_address="0",
            leader_election=True,
            leader_election_id="lose-mid-reconcile",
            lease_duration=2.0,
            renew_deadline=0.6,
            retry_period=0.1,
            graceful_shutdown_timeout=60.0,  # a drain would outlive the test's bound below
        ),
    )
    mgr.builder().for_(Widget).complete(stuck)
    task = asyncio.create_task(mgr.start(install_signal_handlers=False))
    await asyncio.wait_for(mgr.elected.wait(), 10)
    await api.create(widget("busy"))
    await eventually(lambda: stuck.started == ["busy"])
    lease = await api.get(Lease, "lose-mid-reconcile", namespace="default")
    lease.spec.holder_identity = "next-leader"
    lease.spec.renew_time = datetime.now(UTC)
    await api.update(lease)  # renewals fail from now on, until the renew deadline passes
    with pytest.raises(LeaderElectionLost):
        await asyncio.wait_for(task, 20)  # far below the 60 s drain: the reconcile was cancelled
    assert stuck.cancelled == ["busy"]


async def test_a_drain_past_the_grace_period_cancels_and_is_an_error(env: Environment, api: Client) -> None:
    # Before: start() returned normally (exit 0) although reconciles were cut off.
    stuck = Stuck()
    mgr = Manager(env.config, ManagerOptions(health_probe_bind_address="0", graceful_shutdown_timeout=0.05))
    mgr.builder().for_(Widget).complete(stuck)
    with pytest.raises(ShutdownTimeout, match="graceful_shutdown_timeout"):
        async with mgr.running():
            await api.create(widget("busy"))
            await eventually(lambda: stuck.started == ["busy"])
    assert stuck.cancelled == ["busy"]
    assert mgr.transport.open_connections == 0  # connections closed all the same
