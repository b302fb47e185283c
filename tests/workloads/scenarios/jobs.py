"""Jobs: success, failure and backoffLimit, parallelism and completions, Indexed, deadlines, suspend,
TTL after finishing, deletion's propagation, pod failure and success policies."""

from __future__ import annotations

from typing import Any

from tests.workloads.harness import Scenario
from tests.workloads.kube import DONE, FAIL, SLEEP, Kube, container, obj

RESOURCES = ("jobs", "pods", "events")


def job(name: str = "job", command: list[str] = DONE, restart: str = "Never", **spec: Any) -> dict[str, Any]:
    template = {"spec": {"restartPolicy": restart, "containers": [container("main", "busybox", command)]}}
    return obj("batch/v1", "Job", name, {"template": template, **spec})


def condition(kind: str) -> Any:
    def check(j: dict[str, Any]) -> bool:
        return any(
            c.get("type") == kind and c.get("status") == "True"
            for c in (j.get("status") or {}).get("conditions") or []
        )

    return check


def finished(j: dict[str, Any]) -> bool:
    return condition("Complete")(j) or condition("Failed")(j)


def _run(until: str = "Complete", timeout: float = 120, **kw: Any) -> Any:
    def act(k: Kube) -> None:
        k.create(job(**kw))
        k.wait("jobs", "job", condition(until), f"is {until}", timeout)

    return act


def _active(count: int, **kw: Any) -> Any:
    def act(k: Kube) -> None:
        k.create(job(command=SLEEP, **kw))
        k.wait(
            "jobs",
            "job",
            lambda j: j["status"].get("active") == count and j["status"].get("ready") == count,
            f"has {count} ready",
        )

    return act


def _suspended(resume: bool) -> Any:
    def act(k: Kube) -> None:
        k.create(job(suspend=True, completions=2, parallelism=2))
        k.wait("jobs", "job", condition("Suspended"), "is Suspended")
        if resume:
            k.patch("jobs", "job", {"spec": {"suspend": False}})
            k.wait("jobs", "job", condition("Complete"), "is Complete", 120)

    return act


def _suspend_running(k: Kube) -> None:
    k.create(job(command=SLEEP, parallelism=2, completions=2))
    k.wait("jobs", "job", lambda j: j["status"].get("active") == 2, "has 2 active")
    k.patch("jobs", "job", {"spec": {"suspend": True}})
    k.wait("jobs", "job", condition("Suspended"), "is Suspended")
    k.wait_count("pods", 0, "job-name=job", timeout=90)


def _ttl(seconds: int) -> Any:
    def act(k: Kube) -> None:
        k.create(job(ttlSecondsAfterFinished=seconds))
        k.wait_gone("jobs", "job", timeout=120)
        k.wait_count("pods", 0, "job-name=job", timeout=90)

    return act


def _delete(propagation: str | None) -> Any:
    def act(k: Kube) -> None:
        k.create(job())
        k.wait("jobs", "job", condition("Complete"), "is Complete")
        k.delete("jobs", "job", propagation)
        k.wait_gone("jobs", "job")
        if propagation in ("Background", "Foreground"):
            k.wait_count("pods", 0, "job-name=job", timeout=90)
        else:
            k.until(
                "the pod is an orphan",
                lambda: all(not p["metadata"].get("ownerReferences") for p in k.list("pods", "job-name=job")),
                60,
            )

    return act


def _deadline(k: Kube) -> None:
    k.create(job(command=SLEEP, activeDeadlineSeconds=2))
    k.wait("jobs", "job", condition("Failed"), "is Failed", 120)
    k.wait_count("pods", 0, "job-name=job", timeout=90)


def _pod_failure_policy(action: str) -> Any:
    def act(k: Kube) -> None:
        rules = [
            {"action": action, "onExitCodes": {"containerName": "main", "operator": "In", "values": [3]}}
        ]
        k.create(job(command=FAIL, backoffLimit=1, podFailurePolicy={"rules": rules}))
        k.wait("jobs", "job", finished if action == "FailJob" else condition("Failed"), "has finished", 150)

    return act


def _success_policy(k: Kube) -> None:
    policy = {"rules": [{"succeededIndexes": "0"}]}
    k.create(
        job(
            command=["sh", "-c", "echo ok"],
            completionMode="Indexed",
            completions=3,
            parallelism=1,
            successPolicy=policy,
        )
    )
    k.wait("jobs", "job", condition("Complete"), "is Complete", 120)


SCENARIOS: list[Scenario] = [
    Scenario("job/succeed", "job", _run(), RESOURCES),
    Scenario("job/succeed-on-failure-policy", "job", _run(restart="OnFailure"), RESOURCES),
    Scenario("job/succeed-false-then-none", "job", _run(command=["true"]), RESOURCES),
    Scenario("job/completions-0", "job", _run(completions=0), RESOURCES),
    Scenario("job/completions-3-parallel-1", "job", _run(completions=3, parallelism=1), RESOURCES),
    Scenario("job/completions-3-parallel-3", "job", _run(completions=3, parallelism=3), RESOURCES),
    Scenario("job/completions-4-parallel-2", "job", _run(completions=4, parallelism=2), RESOURCES),
    Scenario("job/work-queue-parallel-2", "job", _run(parallelism=2), RESOURCES),
    Scenario("job/indexed-3", "job", _run(completions=3, parallelism=1, completionMode="Indexed"), RESOURCES),
    Scenario(
        "job/indexed-3-parallel-3",
        "job",
        _run(completions=3, parallelism=3, completionMode="Indexed"),
        RESOURCES,
    ),
    Scenario("job/fail-backoff-0", "job", _run("Failed", command=FAIL, backoffLimit=0), RESOURCES),
    Scenario("job/fail-backoff-1", "job", _run("Failed", command=FAIL, backoffLimit=1), RESOURCES),
    Scenario("job/fail-false-backoff-0", "job", _run("Failed", command=["false"], backoffLimit=0), RESOURCES),
    Scenario(
        "job/fail-on-failure-backoff-1",
        "job",
        _run("Failed", command=FAIL, restart="OnFailure", backoffLimit=1),
        RESOURCES,
    ),
    Scenario(
        "job/fail-indexed-backoff-per-index",
        "job",
        _run(
            "Failed",
            command=FAIL,
            completionMode="Indexed",
            completions=2,
            parallelism=2,
            backoffLimitPerIndex=0,
        ),
        RESOURCES,
    ),
    Scenario("job/active-deadline", "job", _deadline, RESOURCES),
    Scenario("job/active-2", "job", _active(2, parallelism=2, completions=4), RESOURCES),
    Scenario(
        "job/active-indexed-2",
        "job",
        _active(2, parallelism=2, completions=2, completionMode="Indexed"),
        RESOURCES,
    ),
    Scenario("job/suspended", "job", _suspended(False), RESOURCES),
    Scenario("job/suspended-then-resumed", "job", _suspended(True), RESOURCES),
    Scenario("job/suspend-running", "job", _suspend_running, RESOURCES),
    Scenario("job/ttl-0", "job", _ttl(0), RESOURCES),
    Scenario("job/ttl-3", "job", _ttl(3), RESOURCES),
    Scenario("job/delete-default-orphans", "job", _delete(None), RESOURCES),
    Scenario("job/delete-background", "job", _delete("Background"), RESOURCES),
    Scenario("job/delete-foreground", "job", _delete("Foreground"), RESOURCES),
    Scenario("job/pod-failure-policy-fail-job", "job", _pod_failure_policy("FailJob"), RESOURCES),
    Scenario("job/pod-failure-policy-count", "job", _pod_failure_policy("Count"), RESOURCES),
    Scenario("job/success-policy", "job", _success_policy, RESOURCES),
]
