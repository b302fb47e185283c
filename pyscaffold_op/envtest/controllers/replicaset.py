"""The ReplicaSet (and ReplicationController) controller: keeps `spec.replicas` Pods of the template
running, adopts the matching orphan Pods and releases its own that no longer match (ClaimPods),
reports how many are ready, available and terminating, and records `SuccessfulCreate`/
`SuccessfulDelete` Events as kube-controller-manager's replicaset-controller (and
replication-controller) do."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from pyscaffold_op.envtest.controllers import pods as P
from pyscaffold_op.envtest.controllers.base import SimulatedController, controller_ref, new_owner_ref
from pyscaffold_op.envtest.controllers.events import NORMAL
from pyscaffold_op.envtest.status import StatusError
from pyscaffold_op.envtest.types import Key, Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Event


class ReplicaSetController(SimulatedController):
    primary = ("apps", "v1", "replicasets")
    owns = ("", "pods")
    kind = "ReplicaSet"
    component = "replicaset-controller"
    terminating_replicas = True  # status.terminatingReplicas (DeploymentReplicaSetTerminatingReplicas)

    def selector(self, rs: Obj) -> Callable[[Obj], bool]:
        return P.selector_matcher((rs.get("spec") or {}).get("selector"))

    def keys_for(self, event: Event) -> Iterable[Key]:
        yield from super().keys_for(event)
        if event.gr == ("", "pods") and event.type != "DELETED" and controller_ref(event.obj) is None:
            # an orphan: the ReplicaSets that select it may adopt it (getPodReplicaSets)
            ns = event.obj["metadata"].get("namespace", "")
            for rs in self.list(self.primary, ns):
                if self.selector(rs)(event.obj):
                    yield (ns, rs["metadata"]["name"])

    def claim_pods(self, rs: Obj) -> list[Obj]:
        """ClaimPods over the namespace's active Pods: its own that still match, the matching orphans
        (adopted: the controller reference added), and its own that no longer match released (the
        reference removed) while it is not being deleted."""
        uid = rs["metadata"]["uid"]
        match = self.selector(rs)
        deleting = bool(rs["metadata"].get("deletionTimestamp"))
        claimed = []
        for pod in self.list(P.PODS, rs["metadata"].get("namespace") or None):
            if not P.is_active(pod):
                continue
            ref = controller_ref(pod)
            if ref is not None:
                if ref.get("uid") != uid:
                    continue
                if match(pod):
                    claimed.append(pod)
                elif not deleting:
                    self._set_owner_refs(
                        pod, [r for r in pod["metadata"]["ownerReferences"] if r.get("uid") != uid]
                    )
                continue
            if deleting or not match(pod):
                continue
            adopted = self._set_owner_refs(
                pod, [*(pod["metadata"].get("ownerReferences") or []), new_owner_ref(rs)]
            )
            if adopted is not None:
                claimed.append(adopted)
        return claimed

    def _set_owner_refs(self, pod: Obj, refs: list[Any]) -> Obj | None:
        meta = {**pod["metadata"], "ownerReferences": refs}
        if not refs:
            meta.pop("ownerReferences")
        try:
            return self.update(P.PODS, {**pod, "metadata": meta})
        except StatusError:
            return None

    def reconcile(self, namespace: str, name: str) -> None:
        rs = self.get(self.primary, namespace, name)
        if rs is None:
            return
        spec = rs.get("spec") or {}
        owned = self.owned(P.PODS, rs)
        pods = self.claim_pods(rs)
        terminating = [p for p in owned if p["metadata"].get("deletionTimestamp") and not P.is_terminal(p)]
        want = int(spec.get("replicas", 1) or 0)
        if not rs["metadata"].get("deletionTimestamp"):
            if len(pods) < want:
                ref = new_owner_ref(rs)
                for _ in range(want - len(pods)):
                    pod = P.from_template(spec.get("template"), ref, generate_name=f"{name}-")
                    created = self.create(P.PODS, namespace, pod)
                    self.record(rs, NORMAL, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}")
                    pods.append(created)
            elif len(pods) > want:
                doomed = P.scale_down_order(pods)[: len(pods) - want]
                for pod in doomed:
                    self.delete(P.PODS, pod)
                    self.record(rs, NORMAL, "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}")
                gone = {p["metadata"]["uid"] for p in doomed}
                pods = [p for p in pods if p["metadata"]["uid"] not in gone]
        self.write_status(self.primary, rs, self.status(rs, pods, terminating))

    def status(self, rs: Obj, pods: list[Obj], terminating: list[Obj]) -> Obj:
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
        if self.terminating_replicas:
            status["terminatingReplicas"] = len(terminating)
        status["observedGeneration"] = rs["metadata"].get("generation", 1)
        return status


class ReplicationControllerController(ReplicaSetController):
    """ReplicationControllers: a ReplicaSet whose selector is a plain label map (and whose status
    has no terminatingReplicas)."""

    primary = ("", "v1", "replicationcontrollers")
    kind = "ReplicationController"
    component = "replication-controller"
    terminating_replicas = False

    def selector(self, rs: Obj) -> Callable[[Obj], bool]:
        selector = (rs.get("spec") or {}).get("selector")
        return P.selector_matcher({"matchLabels": selector} if isinstance(selector, dict) else None)
