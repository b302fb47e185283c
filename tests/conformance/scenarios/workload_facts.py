"""What kube-apiserver itself computes about workloads, which the emulator's simulated cluster builds
on (issue 36): a Pod's QoS class, the eviction subresource's PodDisruptionBudget checks, the text
of an unsupported field selector."""

from __future__ import annotations

from typing import Any

from tests.conformance.harness import Scenario, Step
from tests.conformance.scenarios.steps import at, post

PODS = "/api/v1/namespaces/{ns}/pods"


def _pod(name: str, *resources: dict[str, Any], init: dict[str, Any] | None = None) -> dict[str, Any]:
    containers = [{"name": f"c{i}", "image": "nginx", "resources": r} for i, r in enumerate(resources)]
    spec: dict[str, Any] = {"containers": containers}
    if init is not None:
        spec["initContainers"] = [{"name": "init", "image": "busybox", "resources": init}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def qos_classes() -> list[Scenario]:
    """status.qosClass as the pod strategy computes it on create (qos.ComputePodQOS)."""
    cpu = {"cpu": "100m"}
    both = {"cpu": "1", "memory": "1Gi"}
    cases: dict[str, dict[str, Any]] = {
        "none": _pod("p", {}),
        "limits-only-guaranteed": _pod("p", {"limits": both}),
        "requests-equal-limits": _pod("p", {"requests": both, "limits": both}),
        "same-value-other-spelling": _pod(
            "p", {"requests": {"cpu": "1000m", "memory": "1024Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
        ),
        "requests-below-limits": _pod("p", {"requests": cpu, "limits": both}),
        "cpu-only-limit": _pod("p", {"limits": cpu}),
        "requests-only": _pod("p", {"requests": both}),
        "ephemeral-storage-only": _pod("p", {"requests": {"ephemeral-storage": "1Gi"}}),
        "zero-limits": _pod("p", {"limits": {"cpu": "0", "memory": "0"}}),
        "guaranteed-and-besteffort": _pod("p", {"limits": both}, {}),
        "two-guaranteed": _pod("p", {"limits": both}, {"requests": both, "limits": both}),
        "init-container-burstable": _pod("p", {"limits": both}, init={"requests": cpu}),
        "pod-level-resources": {
            **_pod("p", {}),
            "spec": {**_pod("p", {})["spec"], "resources": {"limits": both}},
        },
    }
    return [
        Scenario(f"workload/qos/{name}", "workload", [post(PODS, body, view=at("status", "qosClass"))])
        for name, body in cases.items()
    ]


def status_keeps_qos() -> list[Scenario]:
    """The QoS class is immutable: a status write that leaves it out keeps it."""
    return [
        Scenario(
            "workload/qos/status-write-keeps-it",
            "workload",
            [
                post(
                    PODS, _pod("p", {"limits": {"cpu": "1", "memory": "1Gi"}}), view=at("status", "qosClass")
                ),
                Step(
                    "PUT",
                    PODS + "/p/status",
                    lambda ctx: {**ctx[0], "status": {"phase": "Pending"}},
                    view=at("status"),
                ),
            ],
        )
    ]


SCENARIOS: list[Scenario] = [*qos_classes(), *status_keeps_qos()]
