"""Deployments and their ReplicaSets: create, scale, rolling update, Recreate, revision history,
`kubectl rollout undo`, pause and resume."""

from __future__ import annotations

from typing import Any

from tests.workloads.harness import Scenario
from tests.workloads.kube import Kube, container, obj, pod_template

RESOURCES = ("deployments", "replicasets", "pods", "events")


def deployment(
    name: str = "web", replicas: int = 2, image: str = "nginx:1.25", strategy: Any = None, **spec: Any
) -> dict[str, Any]:
    labels = {"app": name}
    body: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": labels},
        "template": pod_template(labels, container("web", image)),
        **spec,
    }
    if strategy is not None:
        body["strategy"] = strategy
    return obj("apps/v1", "Deployment", name, body)


def rolled_out(d: dict[str, Any]) -> bool:
    """`kubectl rollout status`'s test: the newest generation observed, every replica updated and
    available, no old replica left."""
    spec, status = d.get("spec") or {}, d.get("status") or {}
    want = spec.get("replicas", 1)
    return (
        status.get("observedGeneration", 0) >= d["metadata"].get("generation", 1)
        and status.get("updatedReplicas", 0) == want
        and status.get("replicas", 0) == want
        and status.get("availableReplicas", 0) == want
    )


def wait_rolled(k: Kube, name: str = "web", timeout: float = 90) -> None:
    k.wait("deployments", name, rolled_out, "is rolled out", timeout)


def set_image(k: Kube, image: str, name: str = "web") -> None:
    k.patch(
        "deployments",
        name,
        {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": image}]}}}},
        "strategic",
    )


def _create(replicas: int, **spec: Any) -> Any:
    def act(k: Kube) -> None:
        k.create(deployment(replicas=replicas, **spec))
        wait_rolled(k)

    return act


def _scale(first: int, then: int, via_subresource: bool) -> Any:
    def act(k: Kube) -> None:
        k.create(deployment(replicas=first))
        wait_rolled(k)
        if via_subresource:
            k.scale("deployments", "web", then)
        else:
            k.patch("deployments", "web", {"spec": {"replicas": then}})
        wait_rolled(k)
        k.wait_count("pods", then, "app=web")

    return act


def _update(strategy: Any, replicas: int = 3, updates: tuple[str, ...] = ("nginx:1.26",), **spec: Any) -> Any:
    def act(k: Kube) -> None:
        k.create(deployment(replicas=replicas, strategy=strategy, **spec))
        wait_rolled(k)
        for image in updates:
            set_image(k, image)
            wait_rolled(k)
        k.wait_count("pods", replicas, "app=web")

    return act


def _history(limit: int, updates: int) -> Any:
    def act(k: Kube) -> None:
        k.create(deployment(replicas=1, revisionHistoryLimit=limit))
        wait_rolled(k)
        for i in range(updates):
            set_image(k, f"nginx:1.{26 + i}")
            wait_rolled(k)
        k.until(
            f"at most {limit + 1} ReplicaSets are left",
            lambda: len(k.list("replicasets", "app=web")) <= limit + 1,
            60,
        )

    return act


def _undo(to_revision: int | None, updates: int = 2) -> Any:
    def act(k: Kube) -> None:
        k.create(deployment(replicas=2))
        wait_rolled(k)
        for i in range(updates):
            set_image(k, f"nginx:1.{26 + i}")
            wait_rolled(k)
        args = ["rollout", "undo", "deployment/web"] + (
            [f"--to-revision={to_revision}"] if to_revision else []
        )
        k.kubectl(*args, record="kubectl rollout undo")
        wait_rolled(k)
        k.wait_count("pods", 2, "app=web")

    return act


def _back_to_old_template(k: Kube) -> None:
    """The issue's case: the template goes back to revision 1's by hand, then `rollout undo`."""
    k.create(deployment(replicas=2, image="nginx:1.25"))
    wait_rolled(k)
    set_image(k, "busybox")
    wait_rolled(k)
    set_image(k, "nginx:1.25")
    wait_rolled(k)
    k.kubectl("rollout", "undo", "deployment/web", record="kubectl rollout undo")
    wait_rolled(k)
    k.wait_count("pods", 2, "app=web")


def _pause(update_while_paused: bool, resume: bool) -> Any:
    def act(k: Kube) -> None:
        k.create(deployment(replicas=2))
        wait_rolled(k)
        k.kubectl("rollout", "pause", "deployment/web", record="kubectl rollout pause")
        k.wait(
            "deployments",
            "web",
            lambda d: any(
                c.get("reason") == "DeploymentPaused" for c in (d.get("status") or {}).get("conditions") or []
            ),
            "reports it is paused",
        )
        if update_while_paused:
            set_image(k, "nginx:1.26")
            k.wait(
                "deployments",
                "web",
                lambda d: d["status"].get("observedGeneration") == d["metadata"]["generation"],
                "observed the update",
            )
        if resume:
            k.kubectl("rollout", "resume", "deployment/web", record="kubectl rollout resume")
            wait_rolled(k)
        k.wait_count("pods", 2, "app=web")

    return act


def _restart(k: Kube) -> None:
    k.create(deployment(replicas=2))
    wait_rolled(k)
    k.kubectl("rollout", "restart", "deployment/web", record="kubectl rollout restart")
    wait_rolled(k)
    k.wait_count("pods", 2, "app=web")


def _crashing(k: Kube) -> None:
    d = deployment(replicas=2)
    d["spec"]["template"]["spec"]["containers"][0]["command"] = ["sh", "-c", "exit 1"]
    d["spec"]["progressDeadlineSeconds"] = 600
    k.create(d)
    k.wait_count("pods", 2, "app=web")
    k.until(
        "both pods restarted",
        lambda: all(
            (p.get("status") or {}).get("containerStatuses", [{}])[0].get("restartCount", 0) > 0
            for p in k.list("pods", "app=web")
        ),
        60,
    )


def _delete(propagation: str | None) -> Any:
    def act(k: Kube) -> None:
        k.create(deployment(replicas=2))
        wait_rolled(k)
        k.delete("deployments", "web", propagation)
        k.wait_gone("deployments", "web")
        if propagation == "Orphan":
            k.wait_count("replicasets", 1, "app=web")
        else:
            k.wait_count("pods", 0, "app=web", timeout=90)

    return act


def _label_change(k: Kube) -> None:
    """Labels and annotations of the Deployment itself start no rollout."""
    k.create(deployment(replicas=2))
    wait_rolled(k)
    k.patch("deployments", "web", {"metadata": {"labels": {"tier": "front"}, "annotations": {"note": "x"}}})
    wait_rolled(k)


def _min_ready(k: Kube) -> None:
    k.create(deployment(replicas=2, minReadySeconds=2))
    wait_rolled(k)
    set_image(k, "nginx:1.26")
    wait_rolled(k)


SCENARIOS: list[Scenario] = [
    *[Scenario(f"deployment/create-{n}", "deployment", _create(n), RESOURCES) for n in (0, 1, 2, 3, 5)],
    Scenario(
        "deployment/create-recreate", "deployment", _create(2, strategy={"type": "Recreate"}), RESOURCES
    ),
    Scenario("deployment/create-min-ready", "deployment", _create(2, minReadySeconds=1), RESOURCES),
    Scenario("deployment/create-paused", "deployment", _create(0, paused=True), RESOURCES),
    *[
        Scenario(
            f"deployment/scale-{a}-to-{b}{'-subresource' if sub else ''}",
            "deployment",
            _scale(a, b, sub),
            RESOURCES,
        )
        for a, b, sub in (
            (1, 3, False),
            (3, 1, False),
            (2, 0, False),
            (0, 2, False),
            (2, 4, True),
            (4, 2, True),
        )
    ],
    Scenario("deployment/update-rolling-default", "deployment", _update(None), RESOURCES),
    Scenario(
        "deployment/update-rolling-surge-0",
        "deployment",
        _update({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}),
        RESOURCES,
    ),
    Scenario(
        "deployment/update-rolling-unavailable-0",
        "deployment",
        _update({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}),
        RESOURCES,
    ),
    Scenario(
        "deployment/update-rolling-percent",
        "deployment",
        _update({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%", "maxUnavailable": "50%"}}, 4),
        RESOURCES,
    ),
    Scenario("deployment/update-recreate", "deployment", _update({"type": "Recreate"}), RESOURCES),
    Scenario(
        "deployment/update-twice", "deployment", _update(None, 2, ("nginx:1.26", "nginx:1.27")), RESOURCES
    ),
    Scenario("deployment/update-min-ready", "deployment", _min_ready, RESOURCES),
    Scenario("deployment/update-labels-only", "deployment", _label_change, RESOURCES),
    *[
        Scenario(f"deployment/history-limit-{limit}-after-{n}", "deployment", _history(limit, n), RESOURCES)
        for limit, n in ((0, 2), (1, 3), (2, 2), (10, 3))
    ],
    Scenario("deployment/rollout-undo", "deployment", _undo(None), RESOURCES),
    Scenario("deployment/rollout-undo-to-revision-1", "deployment", _undo(1), RESOURCES),
    Scenario("deployment/rollout-undo-after-one-update", "deployment", _undo(None, 1), RESOURCES),
    Scenario("deployment/rollout-undo-template-back-to-old", "deployment", _back_to_old_template, RESOURCES),
    Scenario("deployment/rollout-restart", "deployment", _restart, RESOURCES),
    Scenario("deployment/pause", "deployment", _pause(False, False), RESOURCES),
    Scenario("deployment/pause-update", "deployment", _pause(True, False), RESOURCES),
    Scenario("deployment/pause-update-resume", "deployment", _pause(True, True), RESOURCES),
    Scenario("deployment/crashing-pods", "deployment", _crashing, RESOURCES),
    Scenario("deployment/delete-background", "deployment", _delete(None), RESOURCES),
    Scenario("deployment/delete-foreground", "deployment", _delete("Foreground"), RESOURCES),
    Scenario("deployment/delete-orphan", "deployment", _delete("Orphan"), RESOURCES),
]
