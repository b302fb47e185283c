"""ReplicaSets and ReplicationControllers: their Pods, scaling, replacement, adoption and release."""

from __future__ import annotations

from typing import Any

from tests.workloads.harness import Scenario
from tests.workloads.kube import SLEEP, Kube, container, obj, pod_template

RESOURCES = ("replicasets", "pods", "events")


def replicaset(name: str = "rs", replicas: int = 2, **spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    return obj(
        "apps/v1",
        "ReplicaSet",
        name,
        {"replicas": replicas, "selector": {"matchLabels": labels}, "template": pod_template(labels), **spec},
    )


def ready(rs: dict[str, Any]) -> bool:
    status, want = rs.get("status") or {}, (rs.get("spec") or {}).get("replicas", 1)
    return (
        status.get("observedGeneration", 0) >= rs["metadata"].get("generation", 1)
        and status.get("replicas", 0) == want
        and status.get("readyReplicas", 0) == want
        and status.get("availableReplicas", 0) == want
    )


def _create(replicas: int, **spec: Any) -> Any:
    def act(k: Kube) -> None:
        k.create(replicaset(replicas=replicas, **spec))
        k.wait("replicasets", "rs", ready, "is ready")

    return act


def _scale(first: int, then: int) -> Any:
    def act(k: Kube) -> None:
        k.create(replicaset(replicas=first))
        k.wait("replicasets", "rs", ready, "is ready")
        k.scale("replicasets", "rs", then)
        k.wait("replicasets", "rs", ready, f"is ready with {then}")
        k.wait_count("pods", then, "app=rs")

    return act


def _replace_deleted_pod(k: Kube) -> None:
    k.create(replicaset(replicas=2))
    k.wait("replicasets", "rs", ready, "is ready")
    first = sorted(p["metadata"]["name"] for p in k.list("pods", "app=rs"))[0]
    k.delete("pods", first)
    k.wait_gone("pods", first)
    k.wait("replicasets", "rs", ready, "is ready again")
    k.wait_count("pods", 2, "app=rs")


def _adopt_orphan(k: Kube) -> None:
    """A Pod that matches the selector and has no controller is adopted (and counts)."""
    k.create(obj("v1", "Pod", "stray", {"containers": [container()]}, labels={"app": "rs"}))
    k.wait("pods", "stray", lambda p: p["status"].get("phase") == "Running", "runs")
    k.create(replicaset(replicas=2))
    k.wait("replicasets", "rs", ready, "is ready")
    k.wait("pods", "stray", lambda p: bool(p["metadata"].get("ownerReferences")), "is adopted")
    k.wait_count("pods", 2, "app=rs")


def _release(k: Kube) -> None:
    """A Pod relabelled out of the selector is released (no owner) and replaced."""
    k.create(replicaset(replicas=1))
    k.wait("replicasets", "rs", ready, "is ready")
    pod = k.list("pods", "app=rs")[0]["metadata"]["name"]
    k.patch("pods", pod, {"metadata": {"labels": {"app": "gone"}}})
    k.wait("pods", pod, lambda p: not p["metadata"].get("ownerReferences"), "is released")
    k.wait("replicasets", "rs", ready, "is ready again")
    k.wait_count("pods", 2)


def _crashing(k: Kube) -> None:
    rs = replicaset(replicas=1)
    rs["spec"]["template"]["spec"]["containers"][0]["command"] = ["sh", "-c", "exit 2"]
    k.create(rs)
    k.until(
        "the pod restarted",
        lambda: any(
            (p.get("status") or {}).get("containerStatuses", [{}])[0].get("restartCount", 0) > 0
            for p in k.list("pods", "app=rs")
        ),
        60,
    )


def _completing(k: Kube) -> None:
    """Pods whose command ends restart forever (restartPolicy Always): never Succeeded."""
    rs = replicaset(replicas=1)
    rs["spec"]["template"]["spec"]["containers"][0]["command"] = ["sh", "-c", "echo hi"]
    k.create(rs)
    k.until(
        "the pod restarted",
        lambda: any(
            (p.get("status") or {}).get("containerStatuses", [{}])[0].get("restartCount", 0) > 0
            for p in k.list("pods", "app=rs")
        ),
        60,
    )


def _long_running(k: Kube) -> None:
    rs = replicaset(replicas=2)
    rs["spec"]["template"]["spec"]["containers"][0]["command"] = SLEEP
    k.create(rs)
    k.wait("replicasets", "rs", ready, "is ready")


def _delete(propagation: str | None) -> Any:
    def act(k: Kube) -> None:
        k.create(replicaset(replicas=2))
        k.wait("replicasets", "rs", ready, "is ready")
        k.delete("replicasets", "rs", propagation)
        k.wait_gone("replicasets", "rs")
        if propagation != "Orphan":
            k.wait_count("pods", 0, "app=rs", timeout=90)
        else:
            k.until(
                "the pods are orphans",
                lambda: all(not p["metadata"].get("ownerReferences") for p in k.list("pods", "app=rs")),
            )

    return act


def replication_controller(replicas: int) -> dict[str, Any]:
    labels = {"app": "rc"}
    return obj(
        "v1",
        "ReplicationController",
        "rc",
        {"replicas": replicas, "selector": labels, "template": pod_template(labels)},
    )


def _rc(replicas: int, then: int | None = None) -> Any:
    def act(k: Kube) -> None:
        k.create(replication_controller(replicas))
        k.wait("replicationcontrollers", "rc", ready, "is ready")
        if then is not None:
            k.patch("replicationcontrollers", "rc", {"spec": {"replicas": then}})
            k.wait("replicationcontrollers", "rc", ready, f"is ready with {then}")
            k.wait_count("pods", then, "app=rc")

    return act


RC = ("replicationcontrollers", "pods", "events")

SCENARIOS: list[Scenario] = [
    *[Scenario(f"replicaset/create-{n}", "replicaset", _create(n), RESOURCES) for n in (0, 1, 3)],
    Scenario("replicaset/create-min-ready", "replicaset", _create(2, minReadySeconds=1), RESOURCES),
    *[
        Scenario(f"replicaset/scale-{a}-to-{b}", "replicaset", _scale(a, b), RESOURCES)
        for a, b in ((1, 3), (3, 1), (2, 0))
    ],
    Scenario("replicaset/replace-deleted-pod", "replicaset", _replace_deleted_pod, RESOURCES),
    Scenario("replicaset/adopt-orphan-pod", "replicaset", _adopt_orphan, RESOURCES),
    Scenario("replicaset/release-relabelled-pod", "replicaset", _release, RESOURCES),
    Scenario("replicaset/crashing-pod", "replicaset", _crashing, RESOURCES),
    Scenario("replicaset/completing-pod-restarts", "replicaset", _completing, RESOURCES),
    Scenario("replicaset/long-running", "replicaset", _long_running, RESOURCES),
    Scenario("replicaset/delete-background", "replicaset", _delete(None), RESOURCES),
    Scenario("replicaset/delete-foreground", "replicaset", _delete("Foreground"), RESOURCES),
    Scenario("replicaset/delete-orphan", "replicaset", _delete("Orphan"), RESOURCES),
    Scenario("replicationcontroller/create", "replicationcontroller", _rc(2), RC),
    Scenario("replicationcontroller/scale", "replicationcontroller", _rc(1, 3), RC),
]
