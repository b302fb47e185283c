# Copyright The Kubernetes authors.
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

"""Tests of the CronJob controller against pyop's envtest API server (no cluster needed).

The Go tutorial's test (status from the Jobs a CronJob owns, history limits), then what it leaves
untested: Jobs created on schedule, the concurrency policies, the starting deadline, suspension, an
unparsable schedule. They share one API server for the session (`envtest_suite`: the CRDs are
installed once) and each gets a namespace of its own (`envtest_namespace`, where `suite_client`
creates by default). No Job controller runs (as in Go's envtest): a Job is active until a test
writes its status, and the manager's `FakeClock` is the only time that passes.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pyscaffold_op.apimachinery import ObjectMeta, OwnerReference, find_condition
from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.batch_v1 import Job, JobCondition, JobSpec, JobStatus
from pyscaffold_op.models.core_v1 import Container, PodSpec, PodTemplateSpec
from pyscaffold_op.runtime import Client, Manager, ManagerOptions, NotFound
from pyscaffold_op.testing import FakeClock, consistently, eventually, load_sample

from project.api.v1 import CronJob
from project.api.v1.cronjob_types import ConcurrencyPolicy
from project.controllers.cronjob_controller import SCHEDULED_TIME_ANNOTATION, CronJobReconciler

SAMPLE = Path(__file__).resolve().parents[1] / "config/samples/batch_v1_cronjob.yaml"
# The tests' runs fall on whole minutes of the fake clock; Go's test schedules "1 * * * *".
EVERY_MINUTE = "*/1 * * * *"


def new_cron_job(namespace: str, schedule: str = EVERY_MINUTE, **spec: object) -> CronJob:
    """The sample CronJob (the one `kubectl apply -k config/samples` creates), in the test's namespace."""
    cron_job = load_sample(CronJob, SAMPLE)
    cron_job.metadata = ObjectMeta(name="test-cronjob", namespace=namespace)
    cron_job.spec.schedule = schedule
    cron_job.spec.starting_deadline_seconds = None
    return cron_job.model_copy(update={"spec": cron_job.spec.model_copy(update=spec)})


def owned_job(cron_job: CronJob, name: str) -> Job:
    """A Job as if the controller had made it (Go's test makes its own, with a controller reference)."""
    owner = OwnerReference(
        api_version=CronJob.gvk.api_version,
        kind="CronJob",
        name=cron_job.metadata.name or "",
        uid=cron_job.metadata.uid or "",
        controller=True,
        block_owner_deletion=True,
    )
    spec = JobSpec(
        template=PodTemplateSpec(
            spec=PodSpec(containers=[Container(name="test-container", image="test-image")], restart_policy="OnFailure")
        )
    )
    return Job(
        metadata=ObjectMeta(name=name, namespace=cron_job.metadata.namespace, owner_references=[owner]), spec=spec
    )


async def finish(client: Client, job: Job, outcome: str, started: datetime) -> Job:
    """Write the status a Job controller writes when the Job completes or fails."""
    criterion = "SuccessCriteriaMet" if outcome == "Complete" else "FailureTarget"
    job.status = JobStatus(
        start_time=started,
        completion_time=started if outcome == "Complete" else None,
        conditions=[JobCondition(type=criterion, status="True"), JobCondition(type=outcome, status="True")],
    )
    return await client.status().update(job)


@asynccontextmanager
async def operator(env: Environment, namespace: str, clock: FakeClock | None = None) -> AsyncGenerator[Manager, None]:
    """The manager with the CronJob controller, watching the test's namespace, on a fake clock."""
    options = ManagerOptions(
        metrics_bind_address="0", health_probe_bind_address="0", namespace=namespace, clock=clock or FakeClock()
    )
    mgr = Manager(env.config, options)
    CronJobReconciler(client=mgr.client, recorder=mgr.get_event_recorder("cronjob-controller")).setup_with_manager(mgr)
    async with mgr.running():
        yield mgr


def next_minute(when: datetime) -> datetime:
    return when.replace(second=0, microsecond=0) + timedelta(minutes=1)


async def jobs_of(client: Client, namespace: str) -> list[Job]:
    return [job for job in await client.list(Job, namespace) if job.metadata.deletion_timestamp is None]


async def test_status_follows_the_jobs_and_history_limits_prune_them(
    envtest_suite: Environment, suite_client: Client, envtest_namespace: str
) -> None:
    """The Go tutorial's controller test, step for step."""
    async with operator(envtest_suite, envtest_namespace):
        cron_job = await suite_client.create(new_cron_job(envtest_namespace, schedule="1 * * * *"))

        async def read() -> CronJob:
            return await suite_client.get(CronJob, "test-cronjob")

        async def conditions_set() -> bool:
            found = await read()
            return bool(found.status and found.status.conditions)

        await eventually(conditions_set)

        async def all_jobs_completed() -> bool:
            found = await read()
            available = find_condition(found.status.conditions if found.status else [], "Available")
            return available is not None and available.reason == "AllJobsCompleted"

        await eventually(all_jobs_completed)

        async def no_active_jobs() -> bool:
            found = await read()
            return not (found.status and found.status.active)

        await consistently(no_active_jobs, duration=1.0, interval=0.1)

        test_job = await suite_client.create(owned_job(cron_job, "test-job"))
        test_job.status = JobStatus(active=2)
        await suite_client.status().update(test_job)

        async def one_active_job() -> CronJob | None:
            found = await read()
            active = found.status.active if found.status else None
            return found if active and [ref.name for ref in active] == ["test-job"] else None

        found = await eventually(one_active_job)
        available = find_condition(found.status.conditions if found.status else [], "Available")
        assert available is not None
        assert (available.status, available.reason) == ("True", "JobsActive")

        async def limit_history() -> CronJob:  # retried: the controller writes the status meanwhile
            found = await read()
            found.spec.failed_jobs_history_limit = found.spec.successful_jobs_history_limit = 1
            return await suite_client.update(found)

        await eventually(limit_history)
        now = datetime.now(UTC).replace(microsecond=0)
        old, new = now - timedelta(minutes=1), now + timedelta(seconds=1)
        for name, outcome, started in (
            ("test-failed-job-old", "Failed", old),
            ("test-failed-job-new", "Failed", new),
            ("test-successful-job-old", "Complete", old),
            ("test-successful-job-new", "Complete", new),
        ):
            await finish(suite_client, await suite_client.create(owned_job(cron_job, name)), outcome, started)

        async def pruned() -> bool:
            names = {job.metadata.name for job in await jobs_of(suite_client, envtest_namespace)}
            return names == {"test-job", "test-failed-job-new", "test-successful-job-new"}

        await eventually(pruned, timeout=10)
        current = await read()
        degraded = find_condition(current.status.conditions if current.status else [], "Degraded")
        assert degraded is not None and degraded.reason == "JobsFailed"


async def test_a_job_is_created_at_each_scheduled_time(
    envtest_suite: Environment, suite_client: Client, envtest_namespace: str
) -> None:
    clock = FakeClock()
    async with operator(envtest_suite, envtest_namespace, clock):
        cron_job = await suite_client.create(new_cron_job(envtest_namespace))
        created = cron_job.metadata.creation_timestamp
        assert created is not None
        await clock.wait_for_timers(1)  # the reconcile asked to be called at the next minute
        assert not await jobs_of(suite_client, envtest_namespace)

        first = next_minute(created)
        clock.advance((first - clock.now()).total_seconds() + 1)
        job = await eventually(lambda: suite_client.get(Job, f"test-cronjob-{int(first.timestamp())}"))
        assert (job.metadata.annotations or {})[SCHEDULED_TIME_ANNOTATION] == first.strftime("%Y-%m-%dT%H:%M:%SZ")
        owner = (job.metadata.owner_references or [None])[0]
        assert owner is not None and (owner.kind, owner.name, owner.controller) == ("CronJob", "test-cronjob", True)
        assert job.spec and job.spec.template.spec and job.spec.template.spec.containers[0].name == "hello"

        async def status_records_the_run() -> bool:
            found = await suite_client.get(CronJob, "test-cronjob")
            status = found.status
            return bool(status and status.last_schedule_time == first and status.active and len(status.active) == 1)

        await eventually(status_records_the_run)

        second = first + timedelta(minutes=1)
        clock.advance((second - clock.now()).total_seconds())  # Allow: a second Job beside the active one
        await eventually(lambda: suite_client.get(Job, f"test-cronjob-{int(second.timestamp())}"))
        assert len(await jobs_of(suite_client, envtest_namespace)) == 2


@pytest.mark.parametrize("policy", [ConcurrencyPolicy.FORBID, ConcurrencyPolicy.REPLACE])
async def test_the_concurrency_policy_decides_about_an_active_job(
    policy: ConcurrencyPolicy, envtest_suite: Environment, suite_client: Client, envtest_namespace: str
) -> None:
    clock = FakeClock()
    async with operator(envtest_suite, envtest_namespace, clock):
        cron_job = await suite_client.create(new_cron_job(envtest_namespace, concurrency_policy=policy))
        assert cron_job.metadata.creation_timestamp is not None
        running = await suite_client.create(owned_job(cron_job, "still-running"))

        async def active_seen() -> bool:
            found = await suite_client.get(CronJob, "test-cronjob")
            return bool(found.status and found.status.active)

        await eventually(active_seen)
        due = next_minute(cron_job.metadata.creation_timestamp)
        clock.advance((due - clock.now()).total_seconds() + 1)
        next_job = f"test-cronjob-{int(due.timestamp())}"
        if policy == ConcurrencyPolicy.FORBID:

            async def only_the_running_job() -> bool:
                return [job.metadata.name for job in await jobs_of(suite_client, envtest_namespace)] == [
                    "still-running"
                ]

            await consistently(only_the_running_job, duration=1.0, interval=0.1)
        else:
            await eventually(lambda: suite_client.get(Job, next_job))

            async def replaced() -> bool:
                try:
                    await suite_client.get(Job, running.metadata.name or "")
                except NotFound:
                    return True
                return False

            await eventually(replaced)


async def test_a_run_missed_by_more_than_the_starting_deadline_is_skipped(
    envtest_suite: Environment, suite_client: Client, envtest_namespace: str
) -> None:
    clock = FakeClock()
    async with operator(envtest_suite, envtest_namespace, clock):
        cron_job = await suite_client.create(new_cron_job(envtest_namespace, starting_deadline_seconds=10))
        assert cron_job.metadata.creation_timestamp is not None
        await clock.wait_for_timers(1)
        # the controller was away: it is called again 30 s after the run was due, 20 s past its deadline
        due = next_minute(cron_job.metadata.creation_timestamp)
        clock.advance((due - clock.now()).total_seconds() + 30)
        await clock.wait_for_timers(1)  # it waits for the next run instead

        async def no_jobs() -> bool:
            return not await jobs_of(suite_client, envtest_namespace)

        await consistently(no_jobs, duration=0.5, interval=0.1)
        following = due + timedelta(minutes=1)
        clock.advance((following - clock.now()).total_seconds() + 5)  # within the deadline: it runs
        job = await eventually(lambda: suite_client.get(Job, f"test-cronjob-{int(following.timestamp())}"))
        assert [job.metadata.name] == [j.metadata.name for j in await jobs_of(suite_client, envtest_namespace)]


async def test_a_suspended_cron_job_starts_nothing(
    envtest_suite: Environment, suite_client: Client, envtest_namespace: str
) -> None:
    clock = FakeClock()
    async with operator(envtest_suite, envtest_namespace, clock):
        cron_job = await suite_client.create(new_cron_job(envtest_namespace, suspend=True))
        assert cron_job.metadata.creation_timestamp is not None

        async def suspended() -> bool:
            found = await suite_client.get(CronJob, "test-cronjob")
            available = find_condition(found.status.conditions if found.status else [], "Available")
            return available is not None and available.reason == "Suspended"

        await eventually(suspended)

        # A status write that met a conflict (the cache had not yet seen the previous write) arms its
        # retry's back-off on this clock, at times after all looked quiet: fire what is armed until
        # nothing is armed for half a second. A suspended CronJob woken by anything but an update
        # would arm its schedule again after every reconcile and never get there.
        async def nothing_armed() -> bool:
            return clock.pending() == 0

        async def settled() -> bool:
            clock.advance(3 * 60)
            await consistently(nothing_armed, duration=0.5, interval=0.1)
            return True

        await eventually(settled, timeout=10)

        async def no_jobs() -> bool:
            return not await jobs_of(suite_client, envtest_namespace)

        await consistently(no_jobs, duration=0.5, interval=0.1)


async def test_an_unparsable_schedule_degrades_the_cron_job(
    envtest_suite: Environment, suite_client: Client, envtest_namespace: str
) -> None:
    # the validating webhook refuses it; this test runs the controller alone, as if it had been bypassed
    async with operator(envtest_suite, envtest_namespace):
        await suite_client.create(new_cron_job(envtest_namespace, schedule="every day"))

        async def degraded() -> str | None:
            found = await suite_client.get(CronJob, "test-cronjob")
            condition = find_condition(found.status.conditions if found.status else [], "Degraded")
            return condition.message if condition and condition.reason == "InvalidSchedule" else None

        message = await eventually(degraded)
        assert message == "Failed to parse schedule: Expected exactly 5 fields, found 2: every day"
