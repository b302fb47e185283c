"""The disruption controller (kube-controller-manager v1.37.2's `pkg/controller/disruption`): fills each
PodDisruptionBudget's status, which the eviction subresource then judges evictions by.

For the Pods its selector picks (an empty selector picks every Pod of the namespace): `expectedPods`
(the Pod count for an integer `minAvailable`, else the scale of the Pods' controllers: Deployment,
ReplicaSet, ReplicationController, StatefulSet, or a custom resource's scale subresource),
`desiredHealthy`, `currentHealthy` (Ready, not being deleted, not evicted in the last 2 minutes),
`disruptionsAllowed`, `disruptedPods` (evictions not yet seen through, forgotten after 2 minutes),
`observedGeneration` and the `DisruptionAllowed` condition (`SufficientPods`/`InsufficientPods`; a
controller that cannot be found is `SyncFailed` with the error). Events: `NoPods`, `UnmanagedPods`,
`CalculateExpectedPodCountFailed`, recorded as the real one's source `controllermanager`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from pyscaffold_op.apimachinery import labels
from pyscaffold_op.envtest.controllers import pods as P
from pyscaffold_op.envtest.controllers.base import SimulatedController, controller_ref
from pyscaffold_op.envtest.controllers.events import NORMAL, WARNING
from pyscaffold_op.envtest.controllers.timestamps import parse_time, rfc3339
from pyscaffold_op.envtest.types import Key, Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Event

PDBS = ("policy", "v1", "poddisruptionbudgets")
DELETION_TIMEOUT = timedelta(minutes=2)
_SCALED = {
    ("apps", "ReplicaSet"): ("apps", "v1", "replicasets"),
    ("apps", "StatefulSet"): ("apps", "v1", "statefulsets"),
    ("apps", "Deployment"): ("apps", "v1", "deployments"),
    ("", "ReplicationController"): ("", "v1", "replicationcontrollers"),
}


class _NoController(Exception):
    pass


def _scaled(value: Any, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent, rounded up."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value)


class DisruptionController(SimulatedController):
    primary = PDBS
    component = "controllermanager"

    def keys_for(self, event: Event) -> Iterable[Key]:
        if event.gr == PDBS[::2]:
            yield (event.obj["metadata"].get("namespace", ""), event.obj["metadata"]["name"])
            return
        if event.gr == ("", "pods"):
            ns = event.obj["metadata"].get("namespace", "")
            for pdb in self.list(PDBS, ns):
                selector = (pdb.get("spec") or {}).get("selector")
                if any(labels.selects(selector, o) for o in (event.obj, event.prev) if o is not None):
                    yield (ns, pdb["metadata"]["name"])
        elif any(event.gr == (g, r) for g, _v, r in _SCALED.values()):
            ns = event.obj["metadata"].get("namespace", "")  # a scale changed: every budget may move
            for pdb in self.list(PDBS, ns):
                yield (ns, pdb["metadata"]["name"])

    def reconcile(self, namespace: str, name: str) -> None:
        pdb = self.get(PDBS, namespace, name)
        if pdb is None:
            return
        spec = pdb.get("spec") or {}
        pods = [p for p in self.list(P.PODS, namespace) if labels.selects(spec.get("selector"), p)]
        if not pods:
            self.record(pdb, NORMAL, "NoPods", "No matching pods found")
        try:
            expected, desired, unmanaged = self._expected(spec, pods)
        except _NoController as err:
            self.record(
                pdb,
                WARNING,
                "CalculateExpectedPodCountFailed",
                f"Failed to calculate the number of expected pods: {err}",
            )
            self._fail_safe(pdb, str(err))
            return
        if unmanaged:
            self.record(
                pdb,
                WARNING,
                "UnmanagedPods",
                "Pods selected by this PodDisruptionBudget (selector: "
                f"{_selector_string(spec.get('selector'))}) were found to be unmanaged. As a result, the "
                "status of the PDB cannot be calculated correctly, which may result in undefined behavior. "
                'To account for these pods please set ".spec.minAvailable" field of the PDB to an integer '
                "value.",
            )
        now = self.clock.now()
        disrupted, recheck = self._disrupted(pdb, pods, now)
        healthy = 0
        for p in pods:
            if p["metadata"].get("deletionTimestamp") or p["metadata"]["name"] in disrupted:
                continue
            healthy += P.is_ready(p)
        self._update_status(pdb, healthy, desired, expected, disrupted)
        if recheck is not None:
            self.enqueue_after((namespace, name), max((recheck - now).total_seconds(), 0.0))

    def _expected(self, spec: Obj, pods: list[Obj]) -> tuple[int, int, list[str]]:
        if spec.get("maxUnavailable") is not None:
            expected, unmanaged = self._expected_scale(pods)
            return expected, max(expected - _scaled(spec["maxUnavailable"], expected), 0), unmanaged
        minimum = spec.get("minAvailable")
        if isinstance(minimum, int):
            return len(pods), minimum, []
        if isinstance(minimum, str):
            expected, unmanaged = self._expected_scale(pods)
            return expected, _scaled(minimum, expected), unmanaged
        return 0, 0, []

    def _expected_scale(self, pods: list[Obj]) -> tuple[int, list[str]]:
        """getExpectedScale: the sum of the scales of the Pods' controllers (each counted once)."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            ref = controller_ref(pod)
            if ref is None:
                unmanaged.append(pod["metadata"]["name"])
                continue
            if ref.get("uid") in scales:
                continue
            uid, scale = self._controller_scale(ref, pod)
            scales[uid] = scale
        return sum(scales.values()), unmanaged

    def _controller_scale(self, ref: Obj, pod: Obj) -> tuple[str, int]:
        ns = pod["metadata"].get("namespace", "")
        group = str(ref.get("apiVersion", "")).rpartition("/")[0]
        kind = str(ref.get("kind", ""))
        gvr = _SCALED.get((group, kind))
        if gvr is not None:
            owner = self.get(gvr, ns, str(ref.get("name", "")))
            if owner is not None and owner["metadata"]["uid"] == ref.get("uid"):
                if kind == "ReplicaSet":  # a Deployment's ReplicaSet counts through its Deployment
                    parent = controller_ref(owner)
                    if parent is not None and parent.get("kind") == "Deployment":
                        d = self.get(_SCALED[("apps", "Deployment")], ns, str(parent.get("name", "")))
                        if d is not None and d["metadata"]["uid"] == parent.get("uid"):
                            return d["metadata"]["uid"], int((d.get("spec") or {}).get("replicas", 1))
                        raise _NoController(f'found no controllers for pod "{pod["metadata"]["name"]}"')
                return owner["metadata"]["uid"], int((owner.get("spec") or {}).get("replicas", 1))
            raise _NoController(f'found no controllers for pod "{pod["metadata"]["name"]}"')
        api_version = str(ref.get("apiVersion", ""))
        version = api_version.rpartition("/")[2]
        info = next(
            (i for i in self.store.registry.all() if (i.group, i.version, i.kind) == (group, version, kind)),
            None,
        )
        if info is None:
            raise _NoController(f'no matches for kind "{kind}" in version "{api_version}"')
        resource = f"{info.plural}.{info.group}" if info.group else info.plural
        if info.scale is None:
            raise _NoController(f"{resource} does not implement the scale subresource")
        owner = self.store.find(info.bucket, ns, str(ref.get("name", "")))
        if owner is None or owner["metadata"]["uid"] != ref.get("uid"):
            raise _NoController(f'found no controllers for pod "{pod["metadata"]["name"]}"')
        value: Any = owner
        for part in str(info.scale.get("specReplicasPath", ".spec.replicas")).lstrip(".").split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return owner["metadata"]["uid"], int(value or 0)

    def _disrupted(self, pdb: Obj, pods: list[Obj], now: Any) -> tuple[dict[str, str], Any]:
        """buildDisruptedPodMap: evictions younger than 2 minutes of Pods still there, not being deleted."""
        recorded = (pdb.get("status") or {}).get("disruptedPods") or {}
        out: dict[str, str] = {}
        recheck = None
        for pod in pods:
            if pod["metadata"].get("deletionTimestamp"):
                continue
            name = pod["metadata"]["name"]
            at = parse_time(recorded.get(name))
            if at is None:
                continue
            expected = at + DELETION_TIMEOUT
            if expected < now:
                ns = pdb["metadata"].get("namespace", "")
                self.record(
                    pod,
                    WARNING,
                    "NotDeleted",
                    f"Pod was expected by PDB {ns}/{ns} to be deleted but it wasn't",
                )
            else:
                out[name] = recorded[name]
                recheck = expected if recheck is None or expected < recheck else recheck
        return out, recheck

    def _update_status(
        self, pdb: Obj, healthy: int, desired: int, expected: int, disrupted: dict[str, str]
    ) -> None:
        allowed = healthy - desired
        if expected <= 0 or allowed <= 0:
            allowed = 0
        old = pdb.get("status") or {}
        generation = pdb["metadata"].get("generation", 1)
        status: Obj = {
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "expectedPods": expected,
            "disruptionsAllowed": allowed,
            "observedGeneration": generation,
        }
        if disrupted:
            status["disruptedPods"] = disrupted
        status["conditions"] = _set_condition(
            old.get("conditions") or [],
            {
                "type": "DisruptionAllowed",
                "status": "True" if allowed > 0 else "False",
                "observedGeneration": generation,
                "reason": "SufficientPods" if allowed > 0 else "InsufficientPods",
                "message": "",
            },
            rfc3339(self.clock.now()),
        )
        if status != old:
            self.write_status(PDBS, pdb, status)

    def _fail_safe(self, pdb: Obj, message: str) -> None:
        old = dict(pdb.get("status") or {})
        status = {**old, "disruptionsAllowed": 0}
        status["conditions"] = _set_condition(
            old.get("conditions") or [],
            {
                "type": "DisruptionAllowed",
                "status": "False",
                "observedGeneration": int(old.get("observedGeneration", 0)),
                "reason": "SyncFailed",
                "message": message,
            },
            rfc3339(self.clock.now()),
        )
        if status != old:
            self.write_status(PDBS, pdb, status)


def _set_condition(conditions: list[Obj], new: Obj, now: str) -> list[Obj]:
    """meta.SetStatusCondition: a status change moves lastTransitionTime, the rest is updated in place."""
    out = [dict(c) for c in conditions]
    for c in out:
        if c.get("type") == new["type"]:
            if c.get("status") != new["status"]:
                c["lastTransitionTime"] = now
            c.update({k: v for k, v in new.items() if k != "type"})
            return out
    return [*out, {**new, "lastTransitionTime": now}]


def _selector_string(selector: Any) -> str:
    """How Go prints a *metav1.LabelSelector with %v (the generated String())."""
    if not isinstance(selector, dict):
        return "nil"
    labels_ = "".join(f"{k}: {v}," for k, v in sorted((selector.get("matchLabels") or {}).items()))
    exprs = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(e.get('values') or [])}],}},"
        for e in selector.get("matchExpressions") or []
        if isinstance(e, dict)
    )
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{labels_}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}"
    )
