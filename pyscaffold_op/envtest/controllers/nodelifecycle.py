"""The node lifecycle controller's NoSchedule tainting pass (TaintNodesByCondition, kube-controller-manager
v1.37.2's doNoScheduleTaintingPass): a cordoned Node (`spec.unschedulable`, `kubectl cordon`/`drain`)
gets `node.kubernetes.io/unschedulable:NoSchedule`, a Node whose Ready condition is False or Unknown
gets `not-ready`/`unreachable`, memory/disk/PID pressure and an unavailable network theirs; each is
removed when its cause goes. Taints added carry `timeAdded`, as SwapNodeControllerTaint stamps them.

Not simulated: node health monitoring (a Node whose kubelet stops posting status is not marked
Unknown), NoExecute taints and the evictions that follow them."""

from __future__ import annotations

import copy

from pyscaffold_op.envtest.controllers.base import SimulatedController
from pyscaffold_op.envtest.controllers.timestamps import rfc3339

UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
_CONDITION_TAINTS = {
    ("Ready", "False"): "node.kubernetes.io/not-ready",
    ("Ready", "Unknown"): "node.kubernetes.io/unreachable",
    ("MemoryPressure", "True"): "node.kubernetes.io/memory-pressure",
    ("DiskPressure", "True"): "node.kubernetes.io/disk-pressure",
    ("NetworkUnavailable", "True"): "node.kubernetes.io/network-unavailable",
    ("PIDPressure", "True"): "node.kubernetes.io/pid-pressure",
}
_OWNED = {UNSCHEDULABLE, *_CONDITION_TAINTS.values()}


class NodeLifecycleController(SimulatedController):
    primary = ("", "v1", "nodes")
    manager = "kube-controller-manager"

    def reconcile(self, namespace: str, name: str) -> None:
        del namespace
        node = self.get(self.primary, "", name)
        if node is None:
            return
        want = [
            key
            for c in (node.get("status") or {}).get("conditions") or []
            if (key := _CONDITION_TAINTS.get((c.get("type"), c.get("status")))) is not None
        ]
        if (node.get("spec") or {}).get("unschedulable"):
            want.append(UNSCHEDULABLE)
        taints = list((node.get("spec") or {}).get("taints") or [])
        have = {t.get("key") for t in taints if t.get("effect") == "NoSchedule" and t.get("key") in _OWNED}
        if have == set(want):
            return
        kept = [
            t
            for t in taints
            if not (t.get("effect") == "NoSchedule" and t.get("key") in set(have) - set(want))
        ]
        now = rfc3339(self.clock.now())
        kept += [{"key": k, "effect": "NoSchedule", "timeAdded": now} for k in want if k not in have]
        spec = copy.deepcopy(node.get("spec") or {})
        if kept:
            spec["taints"] = kept
        else:
            spec.pop("taints", None)
        self.update(self.primary, {**node, "spec": spec})
