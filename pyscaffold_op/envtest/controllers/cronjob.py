"""The CronJob controller: creates a Job for each time of the schedule (croniter, in the CronJob's
timeZone), honours concurrencyPolicy, startingDeadlineSeconds and suspend, tracks active Jobs and
trims the finished ones to the history limits. Its clock is injectable (`FakeClock`)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from pyscaffold_op.envtest.controllers.base import SimulatedController, new_owner_ref
from pyscaffold_op.envtest.controllers.events import NORMAL
from pyscaffold_op.envtest.controllers.job import finished
from pyscaffold_op.envtest.controllers.timestamps import parse_time, rfc3339
from pyscaffold_op.envtest.status import StatusError
from pyscaffold_op.envtest.types import Obj

if TYPE_CHECKING:
    pass

JOBS = ("batch", "v1", "jobs")
SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"
MAX_MISSED = 100  # like the real controller: more missed times than this are not all looked at


def schedule_times(
    schedule: str, tz: str | None, after: datetime, until: datetime
) -> tuple[list[datetime], datetime]:
    """The schedule's times in (after, until] (at most the last MAX_MISSED) and the next one after."""
    expr = schedule.strip()
    for prefix in ("CRON_TZ=", "TZ="):
        if expr.startswith(prefix):
            tz, _, expr = expr[len(prefix) :].partition(" ")
            expr = expr.strip()
    zone = ZoneInfo(tz) if tz else UTC
    it = croniter(expr, after.astimezone(zone))
    times: list[datetime] = []
    while True:
        t = it.get_next(datetime)
        if t > until:
            return times[-MAX_MISSED:], t
        times.append(t)
        if len(times) > 10 * MAX_MISSED:
            times = times[-MAX_MISSED:]


class CronJobController(SimulatedController):
    primary = ("batch", "v1", "cronjobs")
    owns = ("batch", "jobs")
    kind = "CronJob"
    component = "cronjob-controller"

    def reconcile(self, namespace: str, name: str) -> None:
        cj = self.live(namespace, name)
        if cj is None:
            return
        spec = cj.get("spec") or {}
        status: Obj = dict(cj.get("status") or {})
        jobs = self.owned(JOBS, cj)
        active = [j for j in jobs if not finished(j)]
        successful = [j for j in jobs if finished(j) == "Complete"]
        now = self.clock.now()
        listed = {r.get("uid") for r in status.get("active") or []}
        for j in jobs:  # a Job of the active list that finished: seen once, as the real controller says
            condition = finished(j)
            if condition and j["metadata"]["uid"] in listed:
                self.record(
                    cj,
                    NORMAL,
                    "SawCompletedJob",
                    f"Saw completed job: {j['metadata']['name']}, condition: {condition}",
                )
        self._trim(cj, successful, int(spec.get("successfulJobsHistoryLimit", 3)))
        self._trim(
            cj, [j for j in jobs if finished(j) == "Failed"], int(spec.get("failedJobsHistoryLimit", 1))
        )
        completion_times = [
            t for t in (parse_time((j.get("status") or {}).get("completionTime")) for j in successful) if t
        ]
        if completion_times:
            status["lastSuccessfulTime"] = rfc3339(max(completion_times))
        earliest = parse_time(status.get("lastScheduleTime")) or parse_time(
            cj["metadata"].get("creationTimestamp")
        )
        if earliest is None:
            earliest = now
        deadline = spec.get("startingDeadlineSeconds")
        if isinstance(deadline, int):  # times older than the deadline can never start
            earliest = max(earliest, now - timedelta(seconds=deadline))
        try:
            missed, nxt = schedule_times(str(spec.get("schedule", "")), spec.get("timeZone"), earliest, now)
        except (ValueError, KeyError, ZoneInfoNotFoundError):  # unparsable: nothing is ever scheduled
            missed, nxt = [], None
        if missed and not spec.get("suspend"):
            scheduled = missed[-1]
            policy = spec.get("concurrencyPolicy", "Allow")
            if policy == "Forbid" and active:
                missed = []  # try again at the next time; lastScheduleTime stays
                self.record(
                    cj,
                    NORMAL,
                    "JobAlreadyActive",
                    "Not starting job because prior execution is running and concurrency policy is Forbid",
                )
            else:
                if policy == "Replace":
                    for j in active:
                        self._delete_job(cj, j)
                    active = []
                job = self._create_job(cj, scheduled)
                if job is not None:
                    active.append(job)
            if missed:
                status["lastScheduleTime"] = rfc3339(scheduled)
        known = {r.get("uid"): r for r in status.pop("active", None) or []}
        if active:  # references keep the resourceVersion they were made with, as the real ones do
            status["active"] = [known.get(j["metadata"]["uid"]) or _ref(j) for j in active]
        self.write_status(self.primary, cj, status)
        if nxt is not None and not spec.get("suspend"):
            self.enqueue_after((namespace, name), (nxt - now).total_seconds())

    def _create_job(self, cj: Obj, scheduled: datetime) -> Obj | None:
        template = copy.deepcopy((cj.get("spec") or {}).get("jobTemplate") or {})
        tmeta = template.get("metadata") or {}
        name = f"{cj['metadata']['name']}-{int(scheduled.timestamp() // 60)}"
        meta: Obj = {
            "name": name,
            "labels": dict(tmeta.get("labels") or {}),
            "annotations": {**(tmeta.get("annotations") or {}), SCHEDULED: rfc3339(scheduled)},
            "ownerReferences": [new_owner_ref(cj)],
        }
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": template.get("spec") or {}}
        try:
            created = self.create(JOBS, cj["metadata"].get("namespace", ""), job)
        except StatusError as err:
            if err.code == 409:  # already started for this time
                return None
            raise
        self.record(cj, NORMAL, "SuccessfulCreate", f"Created job {created['metadata']['name']}")
        return created

    def _trim(self, cj: Obj, jobs: list[Obj], keep: int) -> None:
        jobs = sorted(
            jobs, key=lambda j: (j.get("status") or {}).get("startTime") or j["metadata"]["creationTimestamp"]
        )
        for j in jobs[: max(len(jobs) - keep, 0)]:
            self._delete_job(cj, j)

    def _delete_job(self, cj: Obj, job: Obj) -> None:
        self.delete(JOBS, job, propagation="Background")
        self.record(cj, NORMAL, "SuccessfulDelete", f"Deleted job {job['metadata']['name']}")


def _ref(job: Obj) -> Obj:
    meta = job["metadata"]
    return {
        "kind": "Job",
        "namespace": meta.get("namespace", ""),
        "name": meta["name"],
        "uid": meta["uid"],
        "apiVersion": "batch/v1",
        "resourceVersion": meta["resourceVersion"],
    }
