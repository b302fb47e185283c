"""DaemonSets over fake nodes: one Pod per matching node, nodes added and removed, node selectors and
taints, rolling updates (maxSurge, OnDelete), deletion.

Nodes are cluster-wide: a scenario's own nodes carry a taint naming its namespace, which only its
DaemonSet tolerates, so the Pods of scenarios running at the same time never land on them; they are
deleted once the scenario's objects are compared."""

from __future__ import annotations

from typing import Any

from tests.workloads.harness import Scenario
from tests.workloads.kube import Kube, container, obj, pod_template

RESOURCES = ("daemonsets", "pods", "controllerrevisions", "events")
TAINT_KEY = "pyop.dev/scenario"


def node_name(k: Kube, i: int) -> str:
    return f"{k.ns}-n{i}"


def add_node(k: Kube, i: int, labels: dict[str, str] | None = None) -> None:
    """A node of this scenario, tainted for it (kwok makes it Ready in the cluster)."""
    name = node_name(k, i)
    node = obj("v1", "Node", name, {"taints": [{"key": TAINT_KEY, "value": k.ns, "effect": "NoSchedule"}]})
    node["metadata"]["labels"] = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        **(labels or {}),
    }
    node["metadata"]["annotations"] = {"kwok.x-k8s.io/node": "fake"}
    k.request("POST", "/api/v1/nodes", node)


def remove_nodes(k: Kube) -> None:
    for node in k.list("nodes"):
        if node["metadata"]["name"].startswith(k.ns + "-n"):
            k.request("DELETE", f"/api/v1/nodes/{node['metadata']['name']}")


def daemonset(k: Kube, name: str = "agent", tolerate: bool = True, **spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    pod_spec: dict[str, Any] = {}
    if tolerate:
        pod_spec["tolerations"] = [
            {"key": TAINT_KEY, "operator": "Equal", "value": k.ns, "effect": "NoSchedule"}
        ]
    template = pod_template(
        labels, container("agent", "busybox:1.36", ["sh", "-c", "sleep 3600"]), **pod_spec
    )
    return obj(
        "apps/v1", "DaemonSet", name, {"selector": {"matchLabels": labels}, "template": template, **spec}
    )


def scheduled(n: int, ready: bool = True) -> Any:
    def check(d: dict[str, Any]) -> bool:
        status = d.get("status") or {}
        return (
            status.get("observedGeneration", 0) >= d["metadata"].get("generation", 1)
            and status.get("desiredNumberScheduled") == n
            and status.get("currentNumberScheduled") == n
            and status.get("updatedNumberScheduled", 0) == n
            and (not ready or status.get("numberReady") == n)
        )

    return check


def _nodes(extra: int, expected: int, ready: bool = True, tolerate: bool = True, select: bool = False) -> Any:
    def act(k: Kube) -> None:
        for i in range(extra):
            add_node(k, i, {"role": "agent"} if i == 0 else None)
        ds = daemonset(k, tolerate=tolerate)
        if select:
            ds["spec"]["template"]["spec"]["nodeSelector"] = {"role": "agent"}
        k.create(ds)
        k.wait("daemonsets", "agent", scheduled(expected, ready), f"runs on {expected} nodes", 90)
        k.wait_count("pods", expected, "app=agent")

    return act


def _node_added(k: Kube) -> None:
    k.create(daemonset(k))
    k.wait("daemonsets", "agent", scheduled(1), "runs on the node", 90)
    add_node(k, 0)
    k.wait("daemonsets", "agent", lambda d: d["status"].get("desiredNumberScheduled") == 2, "wants 2", 90)
    k.wait_count("pods", 2, "app=agent")


def _node_removed(k: Kube) -> None:
    add_node(k, 0)
    k.create(daemonset(k))
    k.wait("daemonsets", "agent", lambda d: d["status"].get("desiredNumberScheduled") == 2, "wants 2", 90)
    k.wait_count("pods", 2, "app=agent")
    remove_nodes(k)
    k.wait("daemonsets", "agent", lambda d: d["status"].get("desiredNumberScheduled") == 1, "wants 1", 90)
    k.wait_count("pods", 1, "app=agent", timeout=120)


def _update(strategy: dict[str, Any] | None) -> Any:
    def act(k: Kube) -> None:
        add_node(k, 0)
        ds = daemonset(k) if strategy is None else daemonset(k, updateStrategy=strategy)
        k.create(ds)
        k.wait(
            "daemonsets",
            "agent",
            lambda d: (
                d["status"].get("desiredNumberScheduled") == 2
                and d["status"].get("currentNumberScheduled") == 2
            ),
            "wants and has 2",
            90,
        )
        k.patch(
            "daemonsets",
            "agent",
            {"spec": {"template": {"spec": {"containers": [{"name": "agent", "image": "busybox:1.37"}]}}}},
            "strategic",
        )
        if strategy is not None and strategy.get("type") == "OnDelete":
            k.wait(
                "daemonsets",
                "agent",
                lambda d: d["status"].get("observedGeneration") == 2,
                "observed the update",
            )
        else:
            k.until(
                "every pod runs the new image",
                lambda: (
                    sorted(
                        p["spec"]["containers"][0]["image"]
                        for p in k.list("pods", "app=agent")
                        if not p["metadata"].get("deletionTimestamp")
                    )
                    == ["busybox:1.37", "busybox:1.37"]
                ),
                120,
            )

    return act


def _delete(k: Kube) -> None:
    k.create(daemonset(k))
    k.wait("daemonsets", "agent", scheduled(1), "runs on the node", 90)
    k.delete("daemonsets", "agent")
    k.wait_gone("daemonsets", "agent")
    k.wait_count("pods", 0, "app=agent", timeout=90)


def _scenario(name: str, act: Any) -> Scenario:
    return Scenario(f"daemonset/{name}", "daemonset", act, RESOURCES, cleanup=remove_nodes)


SCENARIOS: list[Scenario] = [
    _scenario("one-node", _nodes(0, 1)),
    _scenario("three-nodes", _nodes(2, 3)),
    _scenario("node-selector", _nodes(2, 1, select=True)),
    _scenario("untolerated-taint", _nodes(1, 1, tolerate=False)),
    _scenario("node-added", _node_added),
    _scenario("node-removed", _node_removed),
    _scenario("rolling-update", _update(None)),
    _scenario(
        "rolling-update-max-surge",
        _update({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}),
    ),
    _scenario("on-delete", _update({"type": "OnDelete"})),
    _scenario("delete-background", _delete),
]
