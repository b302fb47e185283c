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

"""The CronJob controller: runs a Job from the CronJob's template at each time of its schedule.

kubebuilder's CronJob tutorial, reconcile step for reconcile step: load the CronJob, list the Jobs it
owns (through a cache index on their controller), rebuild the status from them (active Jobs, the last
scheduled time, conditions), delete finished Jobs beyond the history limits, and, unless suspended,
start the run that is due, within the starting deadline and as the concurrency policy allows; then
requeue for the next run. Time comes from the manager's clock, so tests move it (Go's `Clock`).
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from pyscaffold_op.apimachinery import Condition, ObjectMeta, set_condition
from pyscaffold_op.clock import Clock
from pyscaffold_op.models.batch_v1 import Job
from pyscaffold_op.runtime import (
    Client,
    EventRecorder,
    Manager,
    NotFound,
    Request,
    Result,
    controllerutil,
    ignore_not_found,
    object_reference,
)

from project.api.v1 import CronJob, CronJobStatus
from project.api.v1.cronjob_types import ConcurrencyPolicy
from project.cron import ScheduleError, parse_standard

log = logging.getLogger(__name__)

SCHEDULED_TIME_ANNOTATION = "batch.tutorial.kubebuilder.io/scheduled-at"
JOB_OWNER_KEY = ".metadata.controller"  # the cache index of Jobs by the name of their CronJob
MAX_MISSED_STARTS = 100

# Condition types (kubebuilder's status conventions)
AVAILABLE, PROGRESSING, DEGRADED = "Available", "Progressing", "Degraded"


class TooManyMissedStarts(ValueError):
    pass


def is_finished(job: Job) -> str | None:
    """ "Complete" or "Failed" once the Job has that condition True, else None (still running)."""
    conditions = (job.status.conditions if job.status else None) or []
    for condition in conditions:
        if condition.type in ("Complete", "Failed") and condition.status == "True":
            return condition.type
    return None


def scheduled_time(job: Job) -> datetime | None:
    """The run the Job was created for, from the annotation the controller put on it."""
    raw = (job.metadata.annotations or {}).get(SCHEDULED_TIME_ANNOTATION)
    return datetime.fromisoformat(raw) if raw else None


def next_schedule(cron_job: CronJob, now: datetime) -> tuple[datetime | None, datetime | None]:
    """(the last run missed since the last scheduled one, or None; the next run after now)."""
    schedule = parse_standard(cron_job.spec.schedule)
    status = cron_job.status
    earliest = (status.last_schedule_time if status else None) or cron_job.metadata.creation_timestamp or now
    if cron_job.spec.starting_deadline_seconds is not None:
        # nothing scheduled before the deadline will be started anyway
        earliest = max(earliest, now - timedelta(seconds=cron_job.spec.starting_deadline_seconds))
    if earliest > now:
        return None, schedule.next(now)
    last_missed: datetime | None = None
    starts = 0
    run = schedule.next(earliest)
    while run is not None and run <= now:
        # A controller stopped for days would otherwise start one Job per missed run, and a wrong clock
        # could make that millions.
        last_missed, starts = run, starts + 1
        if starts > MAX_MISSED_STARTS:
            raise TooManyMissedStarts(
                "Too many missed start times (> 100). Set or decrease .spec.startingDeadlineSeconds or check clock skew."
            )
        run = schedule.next(run)
    return last_missed, schedule.next(now)


# +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=get;list;watch;create;update;patch;delete
# +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs/status,verbs=get;update;patch
# +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs/finalizers,verbs=update
# +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete
# +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=get
@dataclass
class CronJobReconciler:
    """Reconciles CronJob objects."""

    client: Client
    recorder: EventRecorder | None = None
    clock: Clock | None = None  # the manager's, unless a test gives one

    async def reconcile(self, request: Request) -> Result:
        now = self._now()
        # 1: load the CronJob by name
        try:
            cron_job = await self.client.get(CronJob, request.name, namespace=request.namespace)
        except NotFound:
            log.info("CronJob resource not found. Ignoring since object must be deleted")
            return Result()
        status = cron_job.status = cron_job.status or CronJobStatus()
        if not status.conditions:
            set_condition(
                status.conditions,
                Condition(type=PROGRESSING, status="Unknown", reason="Reconciling", message="Starting reconciliation"),
            )
            cron_job = await self.client.status().update(cron_job)
            status = cron_job.status = cron_job.status or CronJobStatus()

        # 2: list the active Jobs, and update the status
        try:
            child_jobs = await self.client.list(Job, request.namespace, fields={JOB_OWNER_KEY: request.name})
        except Exception as err:
            await self._degrade(request, "ReconciliationError", f"Failed to list child jobs: {err}")
            raise
        active: list[Job] = []
        successful: list[Job] = []
        failed: list[Job] = []
        most_recent: datetime | None = None
        for job in child_jobs:
            finished = is_finished(job)
            (active if finished is None else failed if finished == "Failed" else successful).append(job)
            try:
                when = scheduled_time(job)
            except ValueError:
                log.exception("unable to parse schedule time for child job", extra={"job": job.metadata.name})
                continue
            if when is not None and (most_recent is None or when > most_recent):
                most_recent = when
        status.last_schedule_time = most_recent
        status.active = [object_reference(job) for job in active] or None
        log.debug(
            "job count",
            extra={"active jobs": len(active), "successful jobs": len(successful), "failed jobs": len(failed)},
        )
        self._set_state_conditions(cron_job, active, failed)
        cron_job = await self.client.status().update(cron_job)

        # 3: delete the finished Jobs beyond the history limits (best effort: no requeue for a failure)
        await self._trim(failed, cron_job.spec.failed_jobs_history_limit, "failed")
        await self._trim(successful, cron_job.spec.successful_jobs_history_limit, "successful")

        # 4: nothing to start while suspended
        if cron_job.spec.suspend:
            log.debug("cronjob suspended, skipping")
            return Result()

        # 5: the next run, and the one we missed
        try:
            missed, next_run = next_schedule(cron_job, now)
        except (ScheduleError, TooManyMissedStarts) as err:
            log.error("unable to figure out CronJob schedule: %s", err)
            # no requeue: an update that fixes the schedule triggers the next reconcile
            await self._degrade(request, "InvalidSchedule", f"Failed to parse schedule: {err}")
            return Result()
        scheduled_result = Result(requeue_after=(next_run - now) if next_run else None)
        extra = {"now": now.isoformat(), "next run": next_run.isoformat() if next_run else None}
        if missed is None:
            log.debug("no upcoming scheduled times, sleeping until next", extra=extra)
            return scheduled_result

        # 6: run the missed Job unless the concurrency policy forbids it. (A run older than the starting
        # deadline is never "missed": next_schedule looks no further back. The Go tutorial's check for a
        # run past its deadline here, with its MissedSchedule condition, can never be true, so it is left out.)
        extra["current run"] = missed.isoformat()
        policy = cron_job.spec.concurrency_policy
        if policy == ConcurrencyPolicy.FORBID and active:
            log.debug("concurrency policy blocks concurrent runs, skipping", extra={**extra, "num active": len(active)})
            return scheduled_result
        if policy == ConcurrencyPolicy.REPLACE:
            for job in active:
                with contextlib.suppress(NotFound):  # a Job already gone is fine
                    await self.client.delete(job, propagation_policy="Background")
        job = self._job_for(cron_job, missed)
        try:
            await self.client.create(job)
        except Exception as err:
            log.error("unable to create Job for CronJob: %s", err, extra={"job": job.metadata.name})
            await self._degrade(request, "JobCreationFailed", f"Failed to create job: {err}")
            raise
        log.debug("created Job for CronJob run", extra={**extra, "job": job.metadata.name})
        cron_job = await self.client.get(CronJob, request.name, namespace=request.namespace)
        cron_job.status = cron_job.status or CronJobStatus()
        set_condition(
            cron_job.status.conditions,
            Condition(type=PROGRESSING, status="True", reason="JobCreated", message=f"Created job {job.metadata.name}"),
        )
        try:
            await self.client.status().update(cron_job)
        except Exception as err:  # the next reconcile writes the status again
            log.error("Failed to update CronJob status: %s", err)

        # 7: requeue when the next run is due (the Job's own events reconcile sooner)
        return scheduled_result

    def _now(self) -> datetime:
        return (self.clock.now() if self.clock else datetime.now().astimezone()).replace(microsecond=0)

    @staticmethod
    def _set_state_conditions(cron_job: CronJob, active: list[Job], failed: list[Job]) -> None:
        conditions = cron_job.status.conditions if cron_job.status else []

        def state(kind: str, value: Literal["True", "False", "Unknown"], reason: str, message: str) -> None:
            set_condition(conditions, Condition(type=kind, status=value, reason=reason, message=message))

        if cron_job.spec.suspend:
            state(AVAILABLE, "False", "Suspended", "CronJob is suspended")
        elif failed:
            state(DEGRADED, "True", "JobsFailed", f"{len(failed)} job(s) have failed")
            state(AVAILABLE, "False", "JobsFailed", f"{len(failed)} job(s) have failed")
        elif active:
            state(PROGRESSING, "True", "JobsActive", f"{len(active)} job(s) are currently active")
            state(AVAILABLE, "True", "JobsActive", f"CronJob is progressing with {len(active)} active job(s)")
        else:
            state(AVAILABLE, "True", "AllJobsCompleted", "All jobs have completed successfully")
            state(PROGRESSING, "False", "NoJobsActive", "No jobs are currently active")

    async def _degrade(self, request: Request, reason: str, message: str) -> None:
        """Set Degraded=True on the newest copy of the CronJob; a failure here is only logged."""
        try:
            cron_job = await self.client.get(CronJob, request.name, namespace=request.namespace)
            cron_job.status = cron_job.status or CronJobStatus()
            set_condition(
                cron_job.status.conditions, Condition(type=DEGRADED, status="True", reason=reason, message=message)
            )
            await self.client.status().update(cron_job)
        except Exception as err:
            log.error("Failed to update CronJob status: %s", err)

    async def _trim(self, jobs: list[Job], limit: int | None, which: str) -> None:
        if limit is None:
            return
        jobs = sorted(
            jobs,
            key=lambda job: (job.status.start_time is not None, job.status.start_time) if job.status else (False, None),
        )
        for job in jobs[: max(0, len(jobs) - limit)]:
            try:
                await self.client.delete(job, propagation_policy="Background")
            except Exception as err:
                if ignore_not_found(err) is not None:
                    log.error("unable to delete old %s job: %s", which, err, extra={"job": job.metadata.name})
                continue
            log.debug("deleted old %s job", which, extra={"job": job.metadata.name})

    def _job_for(self, cron_job: CronJob, scheduled: datetime) -> Job:
        """The Job of the run at `scheduled`: the template's spec, labels and annotations, a name that
        is the same for the same run (so a second reconcile cannot create it twice), the scheduled time
        as an annotation, and the CronJob as its controller (garbage collection, and `owns(Job)`)."""
        template = cron_job.spec.job_template
        meta = template.metadata or ObjectMeta()
        job = Job(
            metadata=ObjectMeta(
                name=f"{cron_job.metadata.name}-{int(scheduled.timestamp())}",
                namespace=cron_job.metadata.namespace,
                labels=dict(meta.labels or {}),
                annotations={**(meta.annotations or {}), SCHEDULED_TIME_ANNOTATION: rfc3339(scheduled)},
            ),
            spec=template.spec.model_copy(deep=True) if template.spec else None,
        )
        controllerutil.set_controller_reference(cron_job, job)
        return job

    def setup_with_manager(self, mgr: Manager) -> None:
        """Index Jobs by their CronJob, and reconcile CronJobs as they or their Jobs change."""
        if self.clock is None:
            self.clock = mgr.clock
        mgr.get_field_indexer().index_field(Job, JOB_OWNER_KEY, job_owner)
        # A CronJob's own status writes must come back: the Go tutorial relies on them (with_status_events).
        mgr.builder().for_(CronJob).with_status_events().owns(Job).named("cronjob").complete(self)


def job_owner(job: Job) -> list[str]:
    """The name of the Job's controller when it is one of our CronJobs (any version: group and kind)."""
    for ref in job.metadata.owner_references or []:
        if ref.controller and ref.kind == "CronJob" and ref.api_version.split("/")[0] == CronJob.gvk.group:
            return [ref.name]
    return []


def rfc3339(when: datetime) -> str:
    """Go's time.RFC3339: whole seconds, Z for UTC."""
    return when.isoformat(timespec="seconds").replace("+00:00", "Z")
