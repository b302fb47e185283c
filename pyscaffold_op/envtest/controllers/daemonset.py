"""The DaemonSet controller: one Pod per Node that matches the nodeSelector (pinned by node affinity,
with the tolerations the real controller adds), rolling updates by maxUnavailable."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import TYPE_CHECKING

from pyscaffold_op.envtest.controllers import pods as P
from pyscaffold_op.envtest.controllers.base import SimulatedController, new_owner_ref
from pyscaffold_op.envtest.controllers.deploymentutil import scaled_value, template_hash
from pyscaffold_op.envtest.controllers.events import NORMAL, WARNING
from pyscaffold_op.envtest.controllers.kubelet import required_node
from pyscaffold_op.envtest.types import Key, Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Event

NODES = ("", "v1", "nodes")
REVISION_LABEL = "controller-revision-hash"
_TOLERATIONS = [
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
]


def _node_of(pod: Obj) -> str | None:
    return (pod.get("spec") or {}).get("nodeName") or required_node(pod)


class DaemonSetController(SimulatedController):
    primary = ("apps", "v1", "daemonsets")
    owns = ("", "pods")
    kind = "DaemonSet"
    component = "daemonset-controller"

    def keys_for(self, event: Event) -> Iterable[Key]:
        yield from super().keys_for(event)
        if event.gr == ("", "nodes") and event.type != "MODIFIED":
            for ds in self.list(self.primary):
                yield (ds["metadata"].get("namespace", ""), ds["metadata"]["name"])

    def reconcile(self, namespace: str, name: str) -> None:
        ds = self.live(namespace, name)
        if ds is None:
            return
        spec = ds.get("spec") or {}
        template = spec.get("template") or {}
        selector = (template.get("spec") or {}).get("nodeSelector") or {}
        nodes = [
            n["metadata"]["name"]
            for n in self.list(NODES)
            if all((n["metadata"].get("labels") or {}).get(k) == v for k, v in selector.items())
        ]
        revision = template_hash(template)
        by_node: dict[str, list[Obj]] = {}
        pods = self.owned(P.PODS, ds)
        for p in pods:
            by_node.setdefault(_node_of(p) or "", []).append(p)
        for node, node_pods in by_node.items():
            if node not in nodes:  # misscheduled: the node left or no longer matches
                for p in node_pods:
                    if P.is_active(p):
                        self._delete_pod(ds, p)
        for node in nodes:
            active = [p for p in by_node.get(node, []) if P.is_active(p)]
            for p in by_node.get(node, []):
                if P.is_terminal(p) and not p["metadata"].get("deletionTimestamp"):
                    ref = f"{p['metadata'].get('namespace', '')}/{p['metadata']['name']}"
                    if (p.get("status") or {}).get("phase") == "Failed":
                        msg = f"Found failed daemon pod {ref} on node {node}, will try to kill it"
                        self.record(ds, WARNING, "FailedDaemonPod", msg)
                    else:
                        msg = f"Found succeeded daemon pod {ref} on node {node}, will try to delete it"
                        self.record(ds, NORMAL, "SucceededDaemonPod", msg)
                    self._delete_pod(ds, p)
            if not active and not any(p["metadata"].get("deletionTimestamp") for p in by_node.get(node, [])):
                self._create_pod(ds, node, revision)
            for extra in active[1:]:
                self._delete_pod(ds, extra)
        # rolling update: replace old pods while at most maxUnavailable are unavailable
        strategy = spec.get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") == "RollingUpdate":
            max_unavailable = max(
                scaled_value(
                    (strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1), len(nodes), False
                ),
                1,
            )
            pods = [p for p in self.owned(P.PODS, ds) if _node_of(p) in nodes]
            unavailable = sum(
                1
                for n in nodes
                if not any(P.is_active(p) and P.is_ready(p) for p in pods if _node_of(p) == n)
            )
            for p in pods:
                if unavailable >= max_unavailable:
                    break
                if P.is_active(p) and (p["metadata"].get("labels") or {}).get(REVISION_LABEL) != revision:
                    self._delete_pod(ds, p)
                    unavailable += 1
        self._status(ds, nodes, revision)

    def _create_pod(self, ds: Obj, node: str, revision: str) -> None:
        template = copy.deepcopy((ds.get("spec") or {}).get("template") or {})
        pod = P.from_template(template, new_owner_ref(ds), generate_name=f"{ds['metadata']['name']}-")
        pod["metadata"].setdefault("labels", {}).update(
            {REVISION_LABEL: revision, "pod-template-generation": str(ds["metadata"].get("generation", 1))}
        )
        spec = pod["spec"]
        spec["affinity"] = {
            **(spec.get("affinity") or {}),
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                }
            },
        }
        tolerations = list(spec.get("tolerations") or [])
        for key, effect in _TOLERATIONS:
            if not any(t.get("key") == key for t in tolerations):
                tolerations.append({"key": key, "operator": "Exists", "effect": effect})
        spec["tolerations"] = tolerations
        created = self.create(P.PODS, ds["metadata"].get("namespace", ""), pod)
        self.record(ds, NORMAL, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}")

    def _delete_pod(self, ds: Obj, pod: Obj) -> None:
        self.delete(P.PODS, pod)
        self.record(ds, NORMAL, "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}")

    def _status(self, ds: Obj, nodes: list[str], revision: str) -> None:
        pods = [p for p in self.owned(P.PODS, ds) if P.is_active(p)]
        scheduled = {_node_of(p) for p in pods if (p.get("spec") or {}).get("nodeName")}
        on_nodes = [p for p in pods if _node_of(p) in nodes]
        ready = {_node_of(p) for p in on_nodes if P.is_ready(p)}
        updated = {
            _node_of(p)
            for p in on_nodes
            if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) == revision
        }
        status: Obj = {
            "currentNumberScheduled": len(scheduled & set(nodes)),
            "numberMisscheduled": len(scheduled - set(nodes)),
            "desiredNumberScheduled": len(nodes),
            "numberReady": len(ready),
            "observedGeneration": ds["metadata"].get("generation", 1),
            "updatedNumberScheduled": len(updated),
            "numberAvailable": len(ready),
            "numberUnavailable": len(nodes) - len(ready),
        }
        for k in ("updatedNumberScheduled", "numberAvailable", "numberUnavailable"):
            if not status[k]:
                del status[k]
        self.write_status(self.primary, ds, status)
