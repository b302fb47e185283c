"""CronJobs: a run on schedule (each minute: a scenario may wait up to one), history limits,
suspend, concurrency, failing runs and deletion. The real controller acts on the wall clock, so these
wait for the minute boundary; the emulator's does too unless given a FakeClock."""

from __future__ import annotations

from typing import Any

from tests.workloads.harness import Scenario
from tests.workloads.kube import DONE, FAIL, SLEEP, Kube, container, obj
from tests.workloads.scenarios.jobs import condition

RESOURCES = ("cronjobs", "jobs", "pods", "events")
MINUTE = 150  # bound for a run: the next minute boundary, the Job's pods, a controller's resync


def cronjob(
    name: str = "cron", schedule: str = "* * * * *", command: list[str] = DONE, **spec: Any
) -> dict[str, Any]:
    pod = {"spec": {"restartPolicy": "Never", "containers": [container("main", "busybox", command)]}}
    job_spec: dict[str, Any] = {"template": pod, "backoffLimit": 0}
    return obj("batch/v1", "CronJob", name, {"schedule": schedule, "jobTemplate": {"spec": job_spec}, **spec})


def _first_run(k: Kube, until: str = "Complete") -> None:
    k.until(
        f"a Job of the CronJob is {until}",
        lambda: any(condition(until)(j) for j in k.list("jobs")),
        MINUTE,
    )


def _one_run(**spec: Any) -> Any:
    def act(k: Kube) -> None:
        k.create(cronjob(**spec))
        _first_run(k)
        k.wait(
            "cronjobs",
            "cron",
            lambda c: bool(c["status"].get("lastSuccessfulTime")),
            "saw the run succeed",
            60,
        )
        k.wait("cronjobs", "cron", lambda c: not c["status"].get("active"), "has none active", 60)

    return act


def _history_zero(k: Kube) -> None:
    k.create(cronjob(successfulJobsHistoryLimit=0))
    k.wait(
        "cronjobs", "cron", lambda c: bool(c["status"].get("lastSuccessfulTime")), "saw a run succeed", MINUTE
    )
    k.wait_count("jobs", 0, timeout=60)
    k.wait_count("pods", 0, timeout=60)


def _failing(k: Kube) -> None:
    k.create(cronjob(command=FAIL, failedJobsHistoryLimit=1))
    _first_run(k, "Failed")
    k.wait("cronjobs", "cron", lambda c: not c["status"].get("active"), "has none active", 60)


def _forbid(k: Kube) -> None:
    k.create(cronjob(command=SLEEP, concurrencyPolicy="Forbid"))
    k.until(
        "a Job of the CronJob has a ready pod",
        lambda: any((j.get("status") or {}).get("ready") for j in k.list("jobs")),
        MINUTE,
    )
    k.wait("cronjobs", "cron", lambda c: len(c["status"].get("active") or []) == 1, "has one active", 60)


def _static(**spec: Any) -> Any:
    def act(k: Kube) -> None:
        k.create(cronjob(**spec))
        k.wait("cronjobs", "cron", lambda c: c is not None, "exists")

    return act


def _delete(k: Kube) -> None:
    k.create(cronjob())
    _first_run(k)
    k.delete("cronjobs", "cron", "Background")
    k.wait_gone("cronjobs", "cron")
    k.wait_count("jobs", 0, timeout=60)
    k.wait_count("pods", 0, timeout=90)


SCENARIOS: list[Scenario] = [
    Scenario("cronjob/one-run", "cronjob", _one_run(), RESOURCES),
    Scenario("cronjob/one-run-time-zone", "cronjob", _one_run(timeZone="Etc/UTC"), RESOURCES),
    Scenario("cronjob/history-limit-0", "cronjob", _history_zero, RESOURCES),
    Scenario("cronjob/failing-run", "cronjob", _failing, RESOURCES),
    Scenario("cronjob/concurrency-forbid", "cronjob", _forbid, RESOURCES),
    Scenario("cronjob/suspended", "cronjob", _static(suspend=True), RESOURCES),
    Scenario("cronjob/yearly", "cronjob", _static(schedule="0 0 1 1 *"), RESOURCES),
    Scenario("cronjob/delete-background", "cronjob", _delete, RESOURCES),
]
