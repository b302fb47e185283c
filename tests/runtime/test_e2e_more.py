"""More runtime behaviour against the emulator: resync, create_or_patch, losing the lease."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.coordination_v1 import Lease
from pyscaffold_op.runtime import Client, LeaderElectionLost, Request, ResourceVersionChanged, controllerutil
from pyscaffold_op.testing import eventually

from .conftest import make_manager
from .widgets import Widget, WidgetStatus, widget


async def _true(v: bool) -> bool:
    return v


async def test_periodic_resync_replays_cached_objects(env: Environment, api: Client) -> None:
    counts: dict[str, int] = {}
    filtered: dict[str, int] = {}

    async def count(req: Request) -> None:
        counts[req.name] = counts.get(req.name, 0) + 1

    async def count_filtered(req: Request) -> None:
        filtered[req.name] = filtered.get(req.name, 0) + 1

    mgr = make_manager(env, sync_period=0.2)
    mgr.builder().for_(Widget).complete(count)
    mgr.builder().for_(Widget, ResourceVersionChanged()).named("filtered").complete(count_filtered)
    await api.create(widget("rs"))
    async with mgr.running():
        await eventually(lambda: _true(counts.get("rs", 0) >= 4), timeout=5)
    assert filtered == {"rs": 1}  # resyncs carry no change: ResourceVersionChanged drops them


async def test_create_or_patch_spec_and_status(env: Environment, api: Client) -> None:
    def mutate(w: Widget) -> None:
        w.spec.size = 5
        w.status = WidgetStatus(observed_size=5)

    obj, op = await controllerutil.create_or_patch(api, widget("cp"), mutate)
    assert op == "created"
    stored = await api.get(Widget, "cp")
    assert stored.spec.size == 5 and stored.status is not None and stored.status.observed_size == 5
    obj, op = await controllerutil.create_or_patch(api, widget("cp"), mutate)
    assert op == "unchanged"

    def grow(w: Widget) -> None:
        w.spec.size = 6

    obj, op = await controllerutil.create_or_patch(api, widget("cp"), grow)
    assert op == "updated" and (await api.get(Widget, "cp")).spec.size == 6

    def status_only(w: Widget) -> None:
        w.status = WidgetStatus(observed_size=6)

    obj, op = await controllerutil.create_or_patch(api, widget("cp"), status_only)
    assert op == "updatedStatusOnly" and obj.status is not None and obj.status.observed_size == 6
    assert (await api.get(Widget, "cp")).status.observed_size == 6


async def test_create_or_update_against_the_server(env: Environment, api: Client) -> None:
    obj, op = await controllerutil.create_or_update(api, widget("cu"), lambda w: setattr(w.spec, "size", 2))
    assert op == "created" and obj.metadata.uid
    obj, op = await controllerutil.create_or_update(api, widget("cu"), lambda w: setattr(w.spec, "size", 2))
    assert op == "unchanged"
    obj, op = await controllerutil.create_or_update(api, widget("cu"), lambda w: setattr(w.spec, "size", 3))
    assert op == "updated" and (await api.get(Widget, "cu")).spec.size == 3


@pytest.mark.slow
async def test_losing_the_lease_stops_the_manager(env: Environment, api: Client) -> None:
    reconciles: list[str] = []

    async def reconcile(req: Request) -> None:
        reconciles.append(req.name)

    mgr = make_manager(
        env,
        leader_election=True,
        leader_election_id="lose-me",
        lease_duration=2.0,
        renew_deadline=0.6,
        retry_period=0.1,
    )
    mgr.builder().for_(Widget).complete(reconcile)
    task = asyncio.create_task(mgr.start(install_signal_handlers=False))
    await asyncio.wait_for(mgr.elected.wait(), 5)
    lease = await api.get(Lease, "lose-me", namespace="default")
    lease.spec.holder_identity = "thief"
    lease.spec.renew_time = datetime.now(UTC)
    await api.update(lease)  # someone else holds it now: renewals fail until the deadline
    with pytest.raises(LeaderElectionLost):
        await asyncio.wait_for(task, 5)
    assert mgr.metrics.value("leader_election_master_status", {"name": "lose-me"}) == 0
    assert (await api.get(Lease, "lose-me", namespace="default")).spec.holder_identity == "thief"


async def test_not_ready_names_the_kind_whose_crd_is_missing() -> None:
    # no CRDs installed: `pytest` before `make manifests` waited 30 s, then said only "manager not ready"
    from pyscaffold_op.runtime import Result

    class Noop:
        async def reconcile(self, request: Request) -> Result:
            return Result()

    async with Environment(kubelet=None) as env:
        mgr = make_manager(env)
        mgr.builder().for_(Widget).named("noop").complete(Noop())
        with pytest.raises(
            TimeoutError,
            match=r'no matches for kind "Widget" in version "test\.pyop\.io/v1"; run make install',
        ):
            async with mgr.running(timeout=2.0):
                pass
