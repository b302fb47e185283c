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

"""The at operator end to end: an At scheduled a few seconds ahead, handled by the manager `make run`
starts, goes PENDING, then RUNNING with its Pod at the scheduled time, then DONE.

What runs the Pod depends on the server (`make test-e2e`'s choice): the emulator's kubelet simulator
runs it (`echo` exits 0 after a moment); a cluster's kubelet runs busybox. The real kube-apiserver of
`make test-e2e ENVTEST=real` has no kubelet, so the Pod would stay Pending forever: there the test does
what a kubelet would, writing the Pod's status (phase Succeeded, the container terminated with exit
code 0) through the status subresource, and checks what the operator makes of it. That is all the
real server can honestly show: the operator's part, not a container's.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pyscaffold_op.apimachinery import ObjectMeta
from pyscaffold_op.models.core_v1 import ContainerState, ContainerStateTerminated, ContainerStatus, Pod, PodStatus
from pyscaffold_op.runtime import Client, NotFound
from pyscaffold_op.testing import eventually
from pyscaffold_op.testing.e2e import Operator

from programming_kubernetes.api.v1alpha1.at_types import At, AtSpec
from programming_kubernetes.controllers.at_controller import POD_CONTAINER, pod_name_for

pytestmark = pytest.mark.e2e

NAMESPACE = "default"
LEAD = timedelta(seconds=4)  # how far ahead the At is scheduled: long enough to see it wait


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


async def test_an_at_waits_runs_its_pod_on_time_and_ends_done(operator: Operator, e2e_client: Client) -> None:
    due = (datetime.now(UTC) + LEAD).replace(microsecond=0)
    at = At(
        metadata=ObjectMeta(name="e2e", namespace=NAMESPACE), spec=AtSpec(schedule=rfc3339(due), command="echo e2e")
    )
    await eventually(lambda: e2e_client.create(at), timeout=30)
    seen: list[str] = []

    async def phase(want: str) -> bool:
        current = await e2e_client.get(At, "e2e", NAMESPACE)
        now = current.status.phase if current.status else None
        if now is not None and (not seen or seen[-1] != now):
            seen.append(now)
        return now == want

    await eventually(lambda: phase("PENDING"), timeout=30)
    with pytest.raises(NotFound):  # no Pod before the schedule
        await e2e_client.get(Pod, pod_name_for("e2e"), NAMESPACE)

    pod = await eventually(lambda: e2e_client.get(Pod, pod_name_for("e2e"), NAMESPACE), timeout=30)
    assert datetime.now(UTC) >= due - timedelta(seconds=1), "the Pod was created before the schedule"
    if not operator.runs_pods:  # the real kube-apiserver: no kubelet; finish the Pod as one would
        await eventually(lambda: phase("RUNNING"), timeout=30)
        finished = datetime.now(UTC).replace(microsecond=0)
        pod.status = PodStatus(
            phase="Succeeded",
            container_statuses=[
                ContainerStatus(
                    name=POD_CONTAINER,
                    image=pod.spec.containers[0].image or "busybox" if pod.spec else "busybox",
                    image_id="",
                    ready=False,
                    restart_count=0,
                    state=ContainerState(
                        terminated=ContainerStateTerminated(
                            exit_code=0, reason="Completed", started_at=finished, finished_at=finished
                        )
                    ),
                )
            ],
        )
        await e2e_client.status().update(pod)

    await eventually(lambda: phase("DONE"), timeout=60)
    done = await e2e_client.get(At, "e2e", NAMESPACE)
    assert done.status is not None
    assert (done.status.outcome, done.status.exit_code) == ("Succeeded", 0)
    assert done.status.pod_name == pod_name_for("e2e")
    # RUNNING may pass faster than a poll where a kubelet runs `echo`; its marks stay on the status
    assert done.status.start_time is not None and done.status.start_time >= due - timedelta(seconds=1)
    assert done.status.completion_time is not None and done.status.completion_time >= done.status.start_time
    assert seen[0] == "PENDING" and seen[-1] == "DONE" and seen in (["PENDING", "DONE"], ["PENDING", "RUNNING", "DONE"])
    if not operator.runs_pods:
        assert seen == ["PENDING", "RUNNING", "DONE"]
