"""Jobs and CronJobs under the simulated controllers (CronJobs on a fake clock)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from lightkube import AsyncClient
from lightkube.resources.batch_v1 import CronJob, Job
from lightkube.resources.core_v1 import Pod

from pyscaffold_op.envtest import Environment, KubeletSimulator
from pyscaffold_op.envtest.controllers import FakeClock, Workloads
from pyscaffold_op.testing import eventually
from tests.envtest.lightkube_client import lightkube_client


def job(name: str, script: str, restart: str = "Never", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": restart,
                    "containers": [{"name": "main", "image": "busybox", "command": ["sh", "-c", script]}],
                }
            },
            **spec,
        },
    }


@pytest.fixture
async def client() -> AsyncIterator[AsyncClient]:
    kubelet = KubeletSimulator(
        pending_seconds=0.01, run_seconds=0.02, stop_seconds=0.01, restart_backoff=0.01
    )
    async with Environment(kubelet=kubelet, workloads=Workloads(job_backoff_seconds=0.01)) as env:
        c = lightkube_client(env)
        yield c
        await c.close()


def cond(obj: Any, typ: str) -> Any:
    return next((c for c in (obj.status.conditions or []) if c.type == typ), None)


async def finished(client: AsyncClient, name: str, typ: str) -> Job:
    async def check() -> Job:
        j = await client.get(Job, name)
        c = cond(j, typ) if j.status else None
        assert c is not None and c.status == "True", j.status
        return j

    return await eventually(check)


async def test_job_runs_pods_to_completion(client: AsyncClient) -> None:
    await client.create(Job.from_dict(job("pi", "echo 3.14", completions=3, parallelism=2)))
    j = await finished(client, "pi", "Complete")
    assert j.status.succeeded == 3 and not j.status.failed and not j.status.active
    assert (cond(j, "Complete").reason, cond(j, "Complete").message) == (
        "CompletionsReached",
        "Reached expected number of succeeded pods",
    )
    assert cond(j, "SuccessCriteriaMet").status == "True"
    assert j.status.startTime and j.status.completionTime and j.status.ready == 0
    pods = [p async for p in client.list(Pod, labels={"job-name": "pi"})]
    assert len(pods) == 3 and {p.status.phase for p in pods} == {"Succeeded"}
    assert all(p.metadata.ownerReferences[0].uid == j.metadata.uid for p in pods)


async def test_job_fails_past_backoff_limit(client: AsyncClient) -> None:
    await client.create(Job.from_dict(job("bad", "exit 2", backoffLimit=2)))
    j = await finished(client, "bad", "Failed")
    assert j.status.failed == 3 and not j.status.succeeded  # backoffLimit + 1 failed pods
    failed = cond(j, "Failed")
    assert (failed.reason, failed.message) == (
        "BackoffLimitExceeded",
        "Job has reached the specified backoff limit",
    )
    assert cond(j, "FailureTarget").status == "True" and cond(j, "Complete") is None


async def test_job_on_failure_counts_restarts(client: AsyncClient) -> None:
    await client.create(Job.from_dict(job("flaky", "exit 1", restart="OnFailure", backoffLimit=2)))
    j = await finished(client, "flaky", "Failed")
    assert cond(j, "Failed").reason == "BackoffLimitExceeded"


async def test_indexed_job_and_ttl(client: AsyncClient) -> None:
    await client.create(
        Job.from_dict(job("idx", "echo ok", completions=3, parallelism=3, completionMode="Indexed"))
    )
    j = await finished(client, "idx", "Complete")
    assert j.status.completedIndexes == "0-2"
    pods = [p async for p in client.list(Pod, labels={"job-name": "idx"})]
    assert sorted(p.metadata.annotations["batch.kubernetes.io/job-completion-index"] for p in pods) == [
        "0",
        "1",
        "2",
    ]
    # each container reads its index from the Pod's label (addCompletionIndexEnvVariables)
    env = pods[0].spec.containers[0].env
    assert env is not None and [(e.name, e.valueFrom.fieldRef.fieldPath) for e in env] == [
        ("JOB_COMPLETION_INDEX", "metadata.labels['batch.kubernetes.io/job-completion-index']")
    ]
    assert env[0].valueFrom.fieldRef.apiVersion == "v1"  # defaulted by the API server
    await client.create(Job.from_dict(job("short", "echo ok", ttlSecondsAfterFinished=0)))

    async def gone() -> bool:
        assert [j.metadata.name async for j in client.list(Job)] == ["idx"]
        return True

    await eventually(gone)


async def test_long_running_job_stays_active_until_deadline() -> None:
    clock = FakeClock()
    kubelet = KubeletSimulator(pending_seconds=0.01, stop_seconds=0.01)
    async with Environment(kubelet=kubelet, workloads=Workloads(clock=clock)) as env:
        client = lightkube_client(env)
        await client.create(Job.from_dict(job("forever", "sleep 3600", activeDeadlineSeconds=60)))

        async def running() -> bool:
            j = await client.get(Job, "forever")
            assert j.status and j.status.active == 1 and j.status.ready == 1, j.status
            return True

        await eventually(running)
        clock.advance(59)
        await eventually(running)
        clock.advance(2)
        j = await finished(client, "forever", "Failed")
        assert cond(j, "Failed").reason == "DeadlineExceeded"
        # the running Pod was deleted and counted as failed; nothing is left terminating
        assert (j.status.failed, j.status.terminating, j.status.active) == (1, 0, None)
        await client.close()


async def test_failed_job_waits_for_its_pods_to_stop() -> None:
    """FailureTarget at once, Failed only once no Pod is terminating (enactJobFinished)."""
    clock = FakeClock()
    kubelet = KubeletSimulator(pending_seconds=0.01, stop_seconds=1.5)
    async with Environment(kubelet=kubelet, workloads=Workloads(clock=clock)) as env:
        client = lightkube_client(env)
        await client.create(Job.from_dict(job("slow", "sleep 3600", activeDeadlineSeconds=10)))

        async def running() -> bool:
            j = await client.get(Job, "slow")
            return bool(j.status and j.status.active == 1)

        await eventually(running)
        clock.advance(11)

        async def targeted() -> Job:
            j = await client.get(Job, "slow")
            assert cond(j, "FailureTarget") is not None, j.status
            return j

        j = await eventually(targeted)
        assert cond(j, "Failed") is None and j.status.terminating == 1 and j.status.failed == 1
        j = await finished(client, "slow", "Failed")
        assert j.status.terminating == 0 and cond(j, "FailureTarget").reason == "DeadlineExceeded"
        await client.close()


async def test_cronjob_creates_jobs_on_schedule() -> None:
    clock = FakeClock(datetime.now(UTC).replace(second=30, microsecond=0))
    kubelet = KubeletSimulator(pending_seconds=0.01, run_seconds=0.01)
    async with Environment(kubelet=kubelet, workloads=Workloads(clock=clock)) as env:
        client = lightkube_client(env)
        await client.create(
            CronJob.from_dict(
                {
                    "apiVersion": "batch/v1",
                    "kind": "CronJob",
                    "metadata": {"name": "tick"},
                    "spec": {
                        "schedule": "*/1 * * * *",
                        "successfulJobsHistoryLimit": 2,
                        "jobTemplate": job("x", "echo tick")["spec"]
                        and {"spec": job("x", "echo tick")["spec"]},
                    },
                }
            )
        )
        assert [j async for j in client.list(Job)] == []
        for minute in range(1, 4):
            clock.advance(60)

            async def ran(n: int = minute) -> list[Job]:
                jobs = [j async for j in client.list(Job)]
                done = [j for j in jobs if j.status and cond(j, "Complete")]
                assert len(done) == min(n, 2), [j.metadata.name for j in jobs]
                assert len(jobs) == min(n, 2)
                return jobs

            jobs = await eventually(ran)
        for j in jobs:
            scheduled = j.metadata.annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"]
            assert j.metadata.name == f"tick-{int(datetime.fromisoformat(scheduled).timestamp()) // 60}"
            assert j.metadata.ownerReferences[0].kind == "CronJob"
        cj = await client.get(CronJob, "tick")
        assert cj.status.lastScheduleTime and cj.status.lastSuccessfulTime
        assert cj.status.lastScheduleTime.second == 0
        await client.close()


async def test_cronjob_forbid_skips_while_a_job_runs() -> None:
    clock = FakeClock(datetime.now(UTC).replace(second=30, microsecond=0))
    async with Environment(
        kubelet=KubeletSimulator(pending_seconds=0.01), workloads=Workloads(clock=clock)
    ) as env:
        client = lightkube_client(env)
        await client.create(
            CronJob.from_dict(
                {
                    "apiVersion": "batch/v1",
                    "kind": "CronJob",
                    "metadata": {"name": "slow"},
                    "spec": {
                        "schedule": "* * * * *",
                        "concurrencyPolicy": "Forbid",
                        "jobTemplate": {"spec": job("x", "sleep 3600")["spec"]},
                    },
                }
            )
        )
        clock.advance(60)

        async def one_active() -> CronJob:
            cj = await client.get(CronJob, "slow")
            assert cj.status and len(cj.status.active or []) == 1, cj.status
            return cj

        first = await eventually(one_active)
        clock.advance(60)
        await eventually(one_active)
        assert len([j async for j in client.list(Job)]) == 1
        assert (await client.get(CronJob, "slow")).status.lastScheduleTime == first.status.lastScheduleTime
        await client.close()


async def test_suspended_job_stops_its_pods_without_counting_failures(client: AsyncClient) -> None:
    await client.create(Job.from_dict(job("pause", "sleep 3600", parallelism=2, completions=2)))

    async def active(n: int) -> Job:
        j = await client.get(Job, "pause")
        assert j.status and (j.status.active or 0) == n and (j.status.ready or 0) == n, j.status
        return j

    await eventually(lambda: active(2))
    await client.patch(Job, "pause", {"spec": {"suspend": True}})

    async def suspended() -> Job:
        j = await active(0)
        assert cond(j, "Suspended") is not None and cond(j, "Suspended").status == "True"
        assert [p async for p in client.list(Pod, labels={"job-name": "pause"})] == []
        return j

    j = await eventually(suspended)
    assert not j.status.failed and cond(j, "Failed") is None
    await client.patch(Job, "pause", {"spec": {"suspend": False}})
    j = await eventually(lambda: active(2))
    assert cond(j, "Suspended").status == "False" and cond(j, "Suspended").reason == "JobResumed"


async def test_job_counts_pods_once_through_its_tracking_finalizer(client: AsyncClient) -> None:
    """Each Pod carries batch.kubernetes.io/job-tracking until counted; deleting the finished Pods
    afterwards takes nothing from the Job's counters (the real controller's uncounted tracking)."""
    await client.create(Job.from_dict(job("track", "echo hi", completions=2, completionMode="Indexed")))
    j = await finished(client, "track", "Complete")
    assert j.status.succeeded == 2 and j.status.completedIndexes == "0-1"
    pods = [p async for p in client.list(Pod, labels={"job-name": "track"})]
    assert len(pods) == 2 and all(not p.metadata.finalizers for p in pods)
    env = pods[0].spec.containers[0].env
    assert [e.name for e in env] == ["JOB_COMPLETION_INDEX"]
    assert (
        env[0].valueFrom.fieldRef.fieldPath == "metadata.labels['batch.kubernetes.io/job-completion-index']"
    )
    for p in pods:
        await client.delete(Pod, p.metadata.name)
    await eventually(lambda: _no_pods(client, "track"))
    j = await client.get(Job, "track")
    assert j.status.succeeded == 2 and j.status.completedIndexes == "0-1"


async def test_running_job_pods_hold_the_tracking_finalizer(client: AsyncClient) -> None:
    await client.create(Job.from_dict(job("hold", "sleep 3600")))

    async def running() -> Pod:
        pods = [p async for p in client.list(Pod, labels={"job-name": "hold"})]
        assert len(pods) == 1 and pods[0].status.phase == "Running"
        return pods[0]

    pod = await eventually(running)
    assert pod.metadata.finalizers == ["batch.kubernetes.io/job-tracking"]


async def _no_pods(client: AsyncClient, name: str) -> bool:
    return [p async for p in client.list(Pod, labels={"job-name": name})] == []


async def test_pod_failure_policy_fails_ignores_and_counts(client: AsyncClient) -> None:
    """podFailurePolicy: a FailJob rule fails the Job at the first matching exit code (reason
    PodFailurePolicy, the real message); an Ignore rule's failures are not counted."""
    rules = [
        {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [3]}},
        {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [4]}},
    ]
    await client.create(
        Job.from_dict(job("fatal", "exit 3", backoffLimit=5, podFailurePolicy={"rules": rules}))
    )
    j = await finished(client, "fatal", "Failed")
    [pod] = [p async for p in client.list(Pod, labels={"job-name": "fatal"})]
    failed = cond(j, "Failed")
    assert (failed.reason, failed.message) == (
        "PodFailurePolicy",
        f"Container main for pod default/{pod.metadata.name} failed with exit code 3 "
        "matching FailJob rule at index 0",
    )
    assert cond(j, "FailureTarget").reason == "PodFailurePolicy" and j.status.failed == 1

    # exit 4 is ignored: the Pods are replaced without counting, so the Job never fails by its limit
    await client.create(
        Job.from_dict(job("shrug", "exit 4", backoffLimit=0, podFailurePolicy={"rules": rules}))
    )

    async def replaced() -> bool:
        pods = [p async for p in client.list(Pod, labels={"job-name": "shrug"})]
        return len([p for p in pods if p.status.phase == "Failed"]) >= 2

    await eventually(replaced)
    j = await client.get(Job, "shrug")
    assert not j.status.failed and cond(j, "Failed") is None


async def test_success_policy_completes_an_indexed_job_early(client: AsyncClient) -> None:
    """successPolicy: once the named indexes succeed the Job is SuccessCriteriaMet then Complete
    (reason SuccessPolicy, "Matched rules at index 0"), the other Pods stopped uncounted."""
    body = job(
        "early",
        "if [ $JOB_COMPLETION_INDEX = 0 ]; then exit 0; fi; sleep 3600",
        completions=3,
        parallelism=3,
        completionMode="Indexed",
        successPolicy={"rules": [{"succeededIndexes": "0"}]},
    )
    await client.create(Job.from_dict(body))
    j = await finished(client, "early", "Complete")
    complete = cond(j, "Complete")
    assert (complete.reason, complete.message) == ("SuccessPolicy", "Matched rules at index 0")
    assert cond(j, "SuccessCriteriaMet").reason == "SuccessPolicy"
    assert (j.status.succeeded, j.status.completedIndexes, j.status.failed) == (1, "0", None)
