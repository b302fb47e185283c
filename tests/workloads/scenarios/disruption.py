"""PodDisruptionBudgets (the disruption controller's status), the eviction API, cordon and
`kubectl drain`. Cordoning and draining touch the node every scenario shares: those run alone,
after the others, and leave the node schedulable again."""

from __future__ import annotations

import json
from typing import Any

from tests.workloads.harness import Scenario
from tests.workloads.kube import Kube, obj, pod_template
from tests.workloads.scenarios.deployments import wait_rolled

RESOURCES = ("poddisruptionbudgets", "pods", "events")
NODE = "envtest-node"


def web(k: Kube, replicas: int = 2) -> None:
    labels = {"app": "web"}
    k.create(
        obj(
            "apps/v1",
            "Deployment",
            "web",
            {"replicas": replicas, "selector": {"matchLabels": labels}, "template": pod_template(labels)},
        )
    )
    wait_rolled(k)


def pdb(k: Kube, **spec: Any) -> None:
    k.create(
        obj("policy/v1", "PodDisruptionBudget", "web", {"selector": {"matchLabels": {"app": "web"}}, **spec})
    )


def observed(expected: int) -> Any:
    def check(p: dict[str, Any]) -> bool:
        status = p.get("status") or {}
        return (
            status.get("observedGeneration") == p["metadata"].get("generation")
            and status.get("expectedPods") == expected
        )

    return check


def _budget(replicas: int, **spec: Any) -> Any:
    def act(k: Kube) -> None:
        web(k, replicas)
        pdb(k, **spec)
        k.wait("poddisruptionbudgets", "web", observed(replicas), f"counts {replicas} pods", 90)

    return act


def _evict(allowed: bool) -> Any:
    def act(k: Kube) -> None:
        web(k, 2)
        pdb(k, **({"maxUnavailable": 1} if allowed else {"minAvailable": 2}))
        k.wait("poddisruptionbudgets", "web", observed(2), "counts 2 pods", 90)
        victim = sorted(p["metadata"]["name"] for p in k.list("pods", "app=web"))[0]
        eviction = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": victim, "namespace": k.ns},
        }
        resp = k.target.send(
            "POST",
            k.path("pods", victim, "eviction"),
            json.dumps(eviction).encode(),
            {"Content-Type": "application/json"},
        )
        body = resp.body if isinstance(resp.body, dict) else {}
        k.record(
            "eviction", {"status": resp.status, "reason": body.get("reason"), "message": body.get("message")}
        )
        if allowed:
            k.wait_gone("pods", victim, 90)
        wait_rolled(k)
        k.wait(
            "poddisruptionbudgets",
            "web",
            lambda p: p["status"].get("currentHealthy") == 2,
            "sees 2 healthy",
            90,
        )

    return act


def _uncordon(k: Kube) -> None:
    k.kubectl("uncordon", NODE)


def _cordon(k: Kube) -> None:
    k.kubectl("cordon", NODE, record="kubectl cordon")
    k.create(obj("v1", "Pod", "late", {"containers": [{"name": "c", "image": "nginx"}]}))
    k.until(
        "the late pod is judged",
        lambda: any(
            c.get("type") == "PodScheduled"
            for c in (k.get("pods", "late") or {}).get("status", {}).get("conditions") or []
        ),
        60,
    )
    k.record_object("node spec", "nodes", NODE)
    k.records["node spec"] = (
        {"spec": k.records["node spec"].get("spec")}
        if isinstance(k.records["node spec"], dict)
        else k.records["node spec"]
    )


def _drain(budget: dict[str, Any] | None) -> Any:
    def act(k: Kube) -> None:
        web(k, 2)
        if budget is not None:
            pdb(k, **budget)
            k.wait("poddisruptionbudgets", "web", observed(2), "counts 2 pods", 90)
        done = k.kubectl(
            "drain", NODE, "--pod-selector=app=web", "--timeout=15s", "--ignore-daemonsets", timeout=90
        )
        k.record("kubectl drain", done.returncode)
        k.record("drain blocked by the budget", "disruption budget" in done.stderr)
        k.until(
            "the replacements are judged",
            lambda: all(
                any(c.get("type") == "PodScheduled" for c in (p.get("status") or {}).get("conditions") or [])
                for p in k.list("pods", "app=web")
            ),
            60,
        )

    return act


SCENARIOS: list[Scenario] = [
    Scenario("disruption/min-available-all", "disruption", _budget(2, minAvailable=2), RESOURCES),
    Scenario("disruption/min-available-1", "disruption", _budget(3, minAvailable=1), RESOURCES),
    Scenario("disruption/max-unavailable-1", "disruption", _budget(2, maxUnavailable=1), RESOURCES),
    Scenario("disruption/max-unavailable-0", "disruption", _budget(2, maxUnavailable=0), RESOURCES),
    Scenario("disruption/min-available-percent", "disruption", _budget(4, minAvailable="50%"), RESOURCES),
    Scenario("disruption/no-pods", "disruption", _budget(0, minAvailable=1), RESOURCES),
    Scenario("disruption/eviction-blocked", "disruption", _evict(False), RESOURCES),
    Scenario("disruption/eviction-allowed", "disruption", _evict(True), RESOURCES),
    Scenario("disruption/cordon", "disruption", _cordon, ("pods", "events"), cleanup=_uncordon, serial=True),
    Scenario(
        "disruption/drain-blocked-by-budget",
        "disruption",
        _drain({"minAvailable": 2}),
        RESOURCES,
        cleanup=_uncordon,
        serial=True,
    ),
    Scenario(
        "disruption/drain-without-budget",
        "disruption",
        _drain(None),
        RESOURCES,
        cleanup=_uncordon,
        serial=True,
    ),
]
