"""The ReplicaSet (and ReplicationController) controller: keeps `spec.replicas` Pods of the template
running and reports how many are ready and available."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyscaffold_op.envtest.controllers import pods as P
from pyscaffold_op.envtest.controllers.base import SimulatedController, new_owner_ref
from pyscaffold_op.envtest.types import Obj

if TYPE_CHECKING:
    pass


class ReplicaSetController(SimulatedController):
    primary = ("apps", "v1", "replicasets")
    owns = ("", "pods")
    kind = "ReplicaSet"

    def reconcile(self, namespace: str, name: str) -> None:
        rs = self.get(self.primary, namespace, name)
        if rs is None:
            return
        spec = rs.get("spec") or {}
        pods = [p for p in self.owned(P.PODS, rs) if P.is_active(p)]
        want = int(spec.get("replicas", 1) or 0)
        if not rs["metadata"].get("deletionTimestamp"):
            if len(pods) < want:
                ref = new_owner_ref(rs)
                for _ in range(want - len(pods)):
                    pod = P.from_template(spec.get("template"), ref, generate_name=f"{name}-")
                    pods.append(self.create(P.PODS, namespace, pod))
            elif len(pods) > want:
                doomed = P.scale_down_order(pods)[: len(pods) - want]
                for pod in doomed:
                    self.delete(P.PODS, pod)
                gone = {p["metadata"]["uid"] for p in doomed}
                pods = [p for p in pods if p["metadata"]["uid"] not in gone]
        self.write_status(self.primary, rs, self.status(rs, pods))

    def status(self, rs: Obj, pods: list[Obj]) -> Obj:
        spec = rs.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        now = self.clock.now()
        ready = available = labeled = 0
        wake: float | None = None
        for p in pods:
            plabels = p["metadata"].get("labels") or {}
            labeled += all(plabels.get(k) == v for k, v in labels.items())
            if P.is_ready(p):
                ready += 1
                at = P.available_at(p, min_ready)
                if at is not None and at <= now:
                    available += 1
                elif at is not None:
                    left = (at - now).total_seconds()
                    wake = left if wake is None else min(wake, left)
        if wake is not None:
            meta = rs["metadata"]
            self.enqueue_after((meta.get("namespace", ""), meta["name"]), wake)
        status: Obj = {"replicas": len(pods)}
        for k, v in (
            ("fullyLabeledReplicas", labeled),
            ("readyReplicas", ready),
            ("availableReplicas", available),
        ):
            if v:
                status[k] = v
        if self.kind == "ReplicaSet":  # apps/v1 counts Pods still stopping (ReplicationControllers do not)
            status["terminatingReplicas"] = sum(
                1
                for p in self.owned(P.PODS, rs)
                if p["metadata"].get("deletionTimestamp") and not P.is_terminal(p)
            )
        status["observedGeneration"] = rs["metadata"].get("generation", 1)
        return status


class ReplicationControllerController(ReplicaSetController):
    """ReplicationControllers: a ReplicaSet whose selector is a plain label map."""

    primary = ("", "v1", "replicationcontrollers")
    kind = "ReplicationController"
