"""Events the controllers and the scheduler record: their reasons, messages and reporters."""

from __future__ import annotations

from typing import Any

from tests.workloads.harness import Scenario
from tests.workloads.kube import SLEEP, Kube, container, obj, pod_template
from tests.workloads.scenarios.deployments import deployment, set_image, wait_rolled
from tests.workloads.scenarios.jobs import condition, job
from tests.workloads.scenarios.replicasets import ready, replicaset
from tests.workloads.scenarios.statefulsets import settled, statefulset

EVENTS = ("events",)


def _deployment(k: Kube) -> None:
    k.create(deployment(replicas=2))
    wait_rolled(k)
    k.scale("deployments", "web", 3)
    wait_rolled(k)
    set_image(k, "nginx:1.26")
    wait_rolled(k)
    k.scale("deployments", "web", 1)
    wait_rolled(k)


def _replicaset(k: Kube) -> None:
    k.create(replicaset(replicas=2))
    k.wait("replicasets", "rs", ready, "is ready")
    k.scale("replicasets", "rs", 1)
    k.wait_count("pods", 1, "app=rs")


def _scheduled(k: Kube) -> None:
    k.create(obj("v1", "Pod", "p", {"containers": [container()]}))
    k.wait("pods", "p", lambda p: p["status"].get("phase") == "Running", "runs")


def _job(**spec: Any) -> Any:
    def act(k: Kube) -> None:
        k.create(job(**spec))
        k.wait(
            "jobs", "job", lambda j: condition("Complete")(j) or condition("Failed")(j), "has finished", 120
        )

    return act


def _statefulset(k: Kube) -> None:
    k.create(statefulset(replicas=2))
    k.wait("statefulsets", "db", settled, "is settled", 120)
    k.scale("statefulsets", "db", 1)
    k.wait_count("pods", 1, "app=db", timeout=90)


def _unschedulable(**spec: Any) -> Any:
    extra = spec.pop("c", {})  # once, not per run: the emulator's run and the cluster's get the same Pod

    def act(k: Kube) -> None:
        k.create(
            obj(
                "v1",
                "Pod",
                "p",
                {"containers": [container("c", "busybox", SLEEP, **extra)], **spec},
            )
        )
        k.until(
            "the scheduler gave up on the pod",
            lambda: (
                any(e.get("reason") == "FailedScheduling" for e in k.list("events"))
                or (k.get("pods", "p") or {}).get("status", {}).get("phase") == "Running"
            ),
            60,
        )

    return act


def _deployment_deleted(k: Kube) -> None:
    labels = {"app": "web"}
    k.create(
        obj(
            "apps/v1",
            "Deployment",
            "web",
            {"replicas": 1, "selector": {"matchLabels": labels}, "template": pod_template(labels)},
        )
    )
    wait_rolled(k)
    k.delete("deployments", "web")
    k.wait_count("pods", 0, "app=web", timeout=90)


def _preset_node(k: Kube) -> None:
    """A Pod that names its node is not the scheduler's: no Scheduled event."""
    k.create(obj("v1", "Pod", "p", {"nodeName": "envtest-node", "containers": [container()]}))
    k.wait("pods", "p", lambda p: p["status"].get("phase") == "Running", "runs")


SCENARIOS: list[Scenario] = [
    Scenario("events/deployment-scale-and-update", "events", _deployment, EVENTS),
    Scenario("events/replicaset-create-delete", "events", _replicaset, EVENTS),
    Scenario("events/pod-scheduled", "events", _scheduled, EVENTS),
    Scenario("events/job-completed", "events", _job(), EVENTS),
    Scenario("events/job-failed", "events", _job(command=["sh", "-c", "exit 4"], backoffLimit=0), EVENTS),
    Scenario("events/statefulset", "events", _statefulset, EVENTS),
    Scenario("events/deployment-deleted", "events", _deployment_deleted, EVENTS),
    Scenario(
        "events/failed-scheduling-node-selector",
        "events",
        _unschedulable(nodeSelector={"disk": "ssd"}),
        ("events", "pods"),
    ),
    Scenario(
        "events/failed-scheduling-too-big",
        "events",
        _unschedulable(c={"resources": {"requests": {"cpu": "100"}}}),
        ("events", "pods"),
    ),
    Scenario("events/node-name-preset", "events", _preset_node, ("events", "pods")),
]
