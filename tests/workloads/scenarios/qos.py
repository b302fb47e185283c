"""Pod QoS classes (`status.qosClass`) as the API server computes them on create: BestEffort,
Burstable and Guaranteed over containers, init containers and pod-level resources."""

from __future__ import annotations

from typing import Any

from tests.workloads.harness import Scenario
from tests.workloads.kube import SLEEP, Kube, container, obj

CPU, MEM = {"cpu": "100m"}, {"memory": "64Mi"}
BOTH = {**CPU, **MEM}


def c(
    name: str = "c",
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    command: list[str] = SLEEP,
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return (
        container(name, "busybox", command, resources=resources)
        if resources
        else container(name, "busybox", command)
    )


# an init container must end for the Pod to run: a kubelet runs its command (the emulator's too), so a
# `sleep 3600` one holds the Pod in Init for an hour (kwok alone completes it whatever it runs)
DONE = ["sh", "-c", "true"]


def _pod(*containers: dict[str, Any], init: list[dict[str, Any]] | None = None, **spec: Any) -> Any:
    def act(k: Kube) -> None:
        body = obj("v1", "Pod", "p", {"containers": list(containers), **spec})
        if init:
            body["spec"]["initContainers"] = init
        k.create(body)
        k.wait("pods", "p", lambda p: p["status"].get("phase") == "Running", "runs")

    return act


CASES: dict[str, Any] = {
    "best-effort": _pod(c()),
    "burstable-requests-only": _pod(c(requests=BOTH)),
    "burstable-requests-below-limits": _pod(c(requests=BOTH, limits={"cpu": "200m", "memory": "128Mi"})),
    "burstable-cpu-limit-only": _pod(c(limits=CPU)),
    "burstable-memory-limit-only": _pod(c(limits=MEM)),
    "guaranteed-limits-only": _pod(c(limits=BOTH)),
    "guaranteed-requests-equal-limits": _pod(c(requests=BOTH, limits=BOTH)),
    "burstable-one-of-two": _pod(c("a", limits=BOTH), c("b")),
    "guaranteed-two": _pod(c("a", limits=BOTH), c("b", requests=BOTH, limits=BOTH)),
    "burstable-init-without-resources": _pod(c(limits=BOTH), init=[c("init", command=DONE)]),
    "guaranteed-init-too": _pod(c(limits=BOTH), init=[c("init", limits=BOTH, command=DONE)]),
    "best-effort-ephemeral-storage": _pod(c(requests={"ephemeral-storage": "1Gi"})),
    "burstable-extended-cpu-units": _pod(c(requests={"cpu": "0.5"}, limits={"cpu": "1"})),
    "guaranteed-pod-level": _pod(c(), resources={"limits": BOTH}),
}

SCENARIOS: list[Scenario] = [Scenario(f"qos/{name}", "qos", act, ("pods",)) for name, act in CASES.items()]
