# Copyright The programming-kubernetes Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""End-to-end tests of the At operator against pyscaffold_op.envtest and its kubelet simulator.

Each test starts a real Manager on the emulator's loopback API server, so the reconciler is driven
through the same watch, cache, work queue and HTTP client code as on a cluster.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from pyscaffold_op.apimachinery import ObjectMeta
from pyscaffold_op.envtest import Environment, KubeletSimulator, PodOutcome
from pyscaffold_op.models.core_v1 import Pod
from pyscaffold_op.runtime import Client, Invalid, Manager, ManagerOptions, NotFound
from pyscaffold_op.testing import FakeClock, eventually

from programming_kubernetes.api.v1alpha1.at_types import At, AtSpec, AtStatus, ScheduleError
from programming_kubernetes.controllers.at_controller import LABEL_AT, AtReconciler, pod_name_for

NAMESPACE = "default"


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_at(name: str, schedule: str, command: str = "echo hello") -> At:
    return At(metadata=ObjectMeta(name=name, namespace=NAMESPACE), spec=AtSpec(schedule=schedule, command=command))


def start_manager(env: Environment, clock: FakeClock | None = None) -> Manager:
    """A manager for `env`; with a fake `clock`, its work queue and the reconciler both read time from it."""
    mgr = Manager(env.config, ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0", clock=clock))
    reconciler = AtReconciler(client=mgr.client, recorder=mgr.get_event_recorder("at-controller"))
    if clock is not None:
        reconciler.clock = clock.now
    reconciler.setup_with_manager(mgr)
    return mgr


@pytest.fixture
async def manager(envtest: Environment) -> AsyncIterator[Manager]:
    mgr = start_manager(envtest)
    async with mgr.running():
        yield mgr


async def get_pod(client: Client, at_name: str) -> Pod | None:
    try:
        return await client.get(Pod, pod_name_for(at_name), namespace=NAMESPACE)
    except NotFound:
        return None


async def wait_done(client: Client, name: str) -> AtStatus:
    """The At's status once it is DONE."""

    async def done() -> AtStatus | None:
        at = await client.get(At, name, namespace=NAMESPACE)
        return at.status if at.status and at.status.phase == "DONE" else None

    return await eventually(done, timeout=10)


async def test_past_schedule_creates_pod_right_away(manager: Manager, client: Client) -> None:
    await client.create(new_at("past", rfc3339(datetime.now(UTC) - timedelta(hours=1))))
    pod = await eventually(lambda: get_pod(client, "past"), timeout=3)
    assert pod.metadata.labels[LABEL_AT] == "past"
    owner = pod.metadata.owner_references[0]
    assert (owner.kind, owner.name, owner.controller) == ("At", "past", True)
    assert pod.spec is not None
    assert pod.spec.restart_policy == "Never"
    assert pod.spec.containers[0].image == "busybox"


async def test_future_schedule_waits_then_runs_on_time(envtest: Environment, client: Client) -> None:
    clock = FakeClock()  # time moves only when the test says so: "on time" is exact, not a race
    due = clock.now() + timedelta(hours=2)
    mgr = start_manager(envtest, clock)
    queue = mgr.controllers[0].queue
    async with mgr.running():
        await client.create(new_at("later", rfc3339(due)))

        async def waiting() -> bool:
            at = await client.get(At, "later", namespace=NAMESPACE)
            return at.status is not None and at.status.phase == "PENDING" and queue.waiting() == 1

        await eventually(waiting)
        assert clock.next_deadline() == clock.monotonic() + 7200  # requeued for exactly when it is due
        clock.advance(7199.999)
        assert queue.waiting() == 1 and await get_pod(client, "later") is None, "Pod created before the schedule"
        clock.advance(0.001)
        pod = await eventually(lambda: get_pod(client, "later"), timeout=3)
        assert pod is not None

        async def started() -> At | None:  # the reconciler records the start after creating the Pod
            at = await client.get(At, "later", namespace=NAMESPACE)
            return at if at.status is not None and at.status.start_time is not None else None

        at = await eventually(started, timeout=3)
        assert at.status is not None and at.status.start_time == due.replace(microsecond=0)


@pytest.mark.needs_cluster("the Pod must run: a kubelet (the emulator's simulator, kwok in cluster mode)")
async def test_succeeding_command_ends_done_succeeded(manager: Manager, client: Client) -> None:
    await client.create(new_at("ok", rfc3339(datetime.now(UTC)), command="echo QAQ"))
    status = await wait_done(client, "ok")
    assert status.outcome == "Succeeded"
    assert status.exit_code == 0
    assert status.pod_name == pod_name_for("ok")
    assert status.completion_time is not None


@pytest.mark.needs_cluster("the Pod must run: a kubelet (the emulator's simulator, kwok in cluster mode)")
async def test_failing_command_ends_done_failed(manager: Manager, client: Client) -> None:
    await client.create(new_at("fails", rfc3339(datetime.now(UTC)), command="exit 3"))
    status = await wait_done(client, "fails")
    assert status.outcome == "Failed"
    assert status.exit_code == 3
    pod = await get_pod(client, "fails")
    assert pod is not None and pod.status is not None and pod.status.phase == "Failed"


@pytest.mark.needs_cluster("the garbage collector deletes the Pod (kube-controller-manager's; the emulator runs one)")
async def test_deleting_the_at_garbage_collects_its_pod(manager: Manager, client: Client) -> None:
    await client.create(new_at("gone", rfc3339(datetime.now(UTC))))
    await eventually(lambda: get_pod(client, "gone"), timeout=3)
    await client.delete(At, "gone", namespace=NAMESPACE)

    async def pod_gone() -> bool:
        return await get_pod(client, "gone") is None

    await eventually(pod_gone, timeout=5)


async def test_quoted_command_reaches_the_container_intact(manager: Manager, client: Client) -> None:
    await client.create(new_at("quoted", rfc3339(datetime.now(UTC)), command='echo "hello world"'))
    pod = await eventually(lambda: get_pod(client, "quoted"), timeout=3)
    assert pod.spec is not None
    assert pod.spec.containers[0].command == ["/bin/sh", "-c", 'echo "hello world"']


@pytest.mark.parametrize("schedule", ["tomorrow", "2026-01-30T21:04:00", "2026-13-40T99:04:00Z"])
async def test_invalid_schedule_is_rejected_by_the_crd_schema(
    envtest: Environment, client: Client, schedule: str
) -> None:
    with pytest.raises(Invalid) as raised:
        await client.create(new_at("bad", schedule))
    assert "spec.schedule" in str(raised.value)


def test_schedule_parsing_requires_a_time_zone() -> None:
    assert AtSpec(schedule="2016-01-30T21:04:00Z", command="x").schedule_time() == datetime(
        2016, 1, 30, 21, 4, tzinfo=UTC
    )
    shanghai = AtSpec(schedule="2016-01-31T05:04:00+08:00", command="x").schedule_time()
    assert shanghai == datetime(2016, 1, 30, 21, 4, tzinfo=UTC)
    with pytest.raises(ScheduleError):
        AtSpec(schedule="2016-01-30T21:04:00", command="x").schedule_time()


async def test_manager_restart_midway_does_not_duplicate_the_pod(tmp_path: object) -> None:
    slow = KubeletSimulator(rule=lambda pod: PodOutcome(exit_code=0, run_seconds=1.0))
    async with Environment(crd_paths=["config/crd/bases"], kubelet=slow) as env:
        from pyscaffold_op.runtime import new_client

        client = new_client(env.config)
        try:
            first = start_manager(env)
            async with first.running():
                await client.create(new_at("restart", rfc3339(datetime.now(UTC))))
                await eventually(lambda: get_pod(client, "restart"), timeout=3)
            second = start_manager(env)
            async with second.running():
                status = await wait_done(client, "restart")
            assert status.outcome == "Succeeded"
            pods = await client.list(Pod, namespace=NAMESPACE, labels={LABEL_AT: "restart"})
            assert len(pods) == 1, [p.metadata.name for p in pods]
        finally:
            await client.close()
