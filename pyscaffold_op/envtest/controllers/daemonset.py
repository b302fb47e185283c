"""The DaemonSet controller, kube-controller-manager v1.37.2's `pkg/controller/daemon` sync by sync: one
Pod per Node that should run it (NodeShouldRunDaemonPod: the template's nodeName, nodeSelector and
required node affinity, and no NoSchedule/NoExecute taint the Pod does not tolerate; a Node whose
NoExecute taints are tolerated keeps its Pod), each pinned to its Node by required node affinity and
given the real controller's tolerations and `pod-template-generation` and `controller-revision-hash`
labels; ControllerRevisions for the templates (`<name>-<hash>`, the revision numbered, the history
beyond `revisionHistoryLimit` trimmed); failed and succeeded Pods replaced; RollingUpdate by
maxUnavailable or, with maxSurge, a new Pod beside each old one; OnDelete; the status, and the
`SuccessfulCreate`/`SuccessfulDelete`/`FailedDaemonPod`/`SucceededDaemonPod`/`SelectingAll` Events.

Not simulated: the back-off before a failed Pod is replaced, slow-start batches, hash collisions
(`collisionCount` is kept, never raised by the made-up hash), pods adopted by selector."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pyscaffold_op.envtest.controllers import pods as P
from pyscaffold_op.envtest.controllers.base import SimulatedController, controller_ref, new_owner_ref
from pyscaffold_op.envtest.controllers.deploymentutil import template_hash
from pyscaffold_op.envtest.controllers.events import NORMAL, WARNING
from pyscaffold_op.envtest.controllers.scheduler import affinity_matches, tolerates
from pyscaffold_op.envtest.status import StatusError
from pyscaffold_op.envtest.types import Key, Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Event

NODES = ("", "v1", "nodes")
REVISIONS = ("apps", "v1", "controllerrevisions")
REVISION_LABEL = "controller-revision-hash"  # DefaultDaemonSetUniqueLabelKey
GENERATION_LABEL = "pod-template-generation"
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
# AddOrUpdateDaemonPodTolerations, in its order
_TOLERATIONS = [
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
]


def daemon_tolerations(pod_spec: Obj) -> list[Obj]:
    """The template's tolerations with the ones every daemon Pod gets (AddOrUpdateTolerationInPodSpec:
    an equal one is kept where it is, the others appended)."""
    out = [dict(t) for t in pod_spec.get("tolerations") or [] if isinstance(t, dict)]
    wanted = list(_TOLERATIONS)
    if pod_spec.get("hostNetwork"):
        wanted.append(("node.kubernetes.io/network-unavailable", "NoSchedule"))
    for key, effect in wanted:
        toleration = {"key": key, "operator": "Exists", "effect": effect}
        if toleration not in out:
            out.append(toleration)
    return out


def should_run(ds: Obj, node: Obj) -> tuple[bool, bool]:
    """NodeShouldRunDaemonPod: (should run a daemon Pod, should keep one already there)."""
    spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
    if spec.get("nodeName") and spec["nodeName"] != node["metadata"]["name"]:
        return False, False
    if not affinity_matches({"spec": spec}, node):
        return False, False
    tolerations = daemon_tolerations(spec)
    taints = [t for t in (node.get("spec") or {}).get("taints") or [] if isinstance(t, dict)]
    untolerated = [
        t for t in taints if t.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tolerations, t)
    ]
    if not untolerated:
        return True, True
    keeps = not any(t.get("effect") == "NoExecute" for t in untolerated)
    return False, keeps


def _target_node(pod: Obj) -> str | None:
    """util.GetTargetNodeName: the bound node, else the one its required node affinity names."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = (
        ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
    ) or {}
    for term in required.get("nodeSelectorTerms") or []:
        for req in (term or {}).get("matchFields") or []:
            values = req.get("values") or []
            if req.get("key") == "metadata.name" and req.get("operator") == "In" and len(values) == 1:
                return str(values[0])
    return None


def _scaled_up(value: Any, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent, rounded up (DaemonSets' unavailable and surge counts)."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(value or 0)


def _by_creation_and_phase(pods: list[Obj]) -> list[Obj]:
    """podByCreationTimestampAndPhase: scheduled Pods first, then older first, then by name."""
    return sorted(
        pods,
        key=lambda p: (
            not (p.get("spec") or {}).get("nodeName"),
            p["metadata"].get("creationTimestamp", ""),
            p["metadata"]["name"],
        ),
    )


class DaemonSetController(SimulatedController):
    primary = ("apps", "v1", "daemonsets")
    owns = ("", "pods")
    kind = "DaemonSet"
    component = "daemonset-controller"

    def keys_for(self, event: Event) -> Iterable[Key]:
        yield from super().keys_for(event)
        if event.gr == ("", "nodes"):  # a node came, went or changed labels, taints, readiness
            for ds in self.list(self.primary):
                yield (ds["metadata"].get("namespace", ""), ds["metadata"]["name"])

    def reconcile(self, namespace: str, name: str) -> None:
        ds = self.get(self.primary, namespace, name)
        if ds is None or ds["metadata"].get("deletionTimestamp"):
            return
        selector = (ds.get("spec") or {}).get("selector") or {}
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            msg = "This daemon set is selecting all pods. A non-empty selector is required."
            self.record(ds, WARNING, "SelectingAll", msg)
            return
        nodes = self.list(NODES)
        current, old = self._history(ds)
        h = (current["metadata"].get("labels") or {}).get(REVISION_LABEL, "")
        self._manage(ds, nodes, h)
        strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") == "RollingUpdate":
            self._rolling_update(ds, nodes, h)
        self._cleanup_history(ds, old)
        self._status(ds, nodes, h)

    # -- pods by node --------------------------------------------------------------------------------

    def _pods_by_node(self, ds: Obj) -> dict[str, list[Obj]]:
        out: dict[str, list[Obj]] = {}
        for pod in self.owned(P.PODS, ds):
            node = _target_node(pod)
            if node is not None:
                out.setdefault(node, []).append(pod)
        return out

    def _manage(self, ds: Obj, nodes: list[Obj], h: str) -> None:
        by_node = self._pods_by_node(ds)
        surge = self._allows_surge(ds)
        create: list[str] = []
        delete: list[Obj] = []
        for node in nodes:
            node_name = node["metadata"]["name"]
            run, keep = should_run(ds, node)
            pods = by_node.get(node_name)
            if run and not pods:
                create.append(node_name)
                continue
            if not keep:
                delete += [p for p in pods or [] if not p["metadata"].get("deletionTimestamp")]
                continue
            running = []
            for pod in pods or []:
                if pod["metadata"].get("deletionTimestamp"):
                    continue
                phase = (pod.get("status") or {}).get("phase")
                ref = f"{pod['metadata'].get('namespace', '')}/{pod['metadata']['name']}"
                if phase == "Failed":
                    self.record(
                        ds,
                        WARNING,
                        "FailedDaemonPod",
                        f"Found failed daemon pod {ref} on node {node_name}, will try to kill it",
                    )
                    delete.append(pod)
                elif phase == "Succeeded":
                    self.record(
                        ds,
                        NORMAL,
                        "SucceededDaemonPod",
                        f"Found succeeded daemon pod {ref} on node {node_name}, will try to delete it",
                    )
                    delete.append(pod)
                else:
                    running.append(pod)
            if not surge:
                delete += _by_creation_and_phase(running)[1:]
            elif not running and run:
                create.append(node_name)
            elif len(running) > 1:
                delete += self._surplus(ds, running, h)
        known = {n["metadata"]["name"] for n in nodes}
        for node_name, pods in by_node.items():  # Pods for Nodes that are gone (the pod GC's part too)
            if node_name not in known:
                delete += [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        self._sync_nodes(ds, delete, create, h)

    def _surplus(self, ds: Obj, running: list[Obj], h: str) -> list[Obj]:
        """With maxSurge: keep the oldest new Pod, and the oldest old one while it is Ready and the new
        one is not available yet."""
        oldest_new: Obj | None = None
        oldest_old: Obj | None = None
        out = []
        for pod in _by_creation_and_phase(running):
            if (pod["metadata"].get("labels") or {}).get(REVISION_LABEL) == h:
                if oldest_new is None:
                    oldest_new = pod
                    continue
            elif oldest_old is None:
                oldest_old = pod
                continue
            out.append(pod)
        replaced = oldest_new is not None and (
            not P.is_ready(oldest_old or {}) or self._available(oldest_new, ds)
        )
        if oldest_old is not None and replaced:
            out.append(oldest_old)
        return out

    def _sync_nodes(self, ds: Obj, delete: list[Obj], create: list[str], h: str) -> None:
        seen = set()
        for pod in delete:
            if pod["metadata"]["uid"] in seen:
                continue
            seen.add(pod["metadata"]["uid"])
            self.delete(P.PODS, pod)
            self.record(ds, NORMAL, "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}")
        for node_name in create:
            self._create_pod(ds, node_name, h)

    def _create_pod(self, ds: Obj, node: str, h: str) -> None:
        template = copy.deepcopy((ds.get("spec") or {}).get("template") or {})
        pod = P.from_template(template, new_owner_ref(ds), generate_name=f"{ds['metadata']['name']}-")
        labels = pod["metadata"].setdefault("labels", {})
        generation = (ds["metadata"].get("annotations") or {}).get(TEMPLATE_GENERATION)
        if generation is not None:
            labels[GENERATION_LABEL] = str(generation)
        if h:
            labels[REVISION_LABEL] = h
        spec = pod["spec"]
        spec["tolerations"] = daemon_tolerations(spec)
        affinity = spec.setdefault("affinity", {})
        node_affinity = affinity.setdefault("nodeAffinity", {})
        term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
        required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(required, dict):
            required["nodeSelectorTerms"] = [term]
        else:
            node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
        created = self.create(P.PODS, ds["metadata"].get("namespace", ""), pod)
        self.record(ds, NORMAL, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}")

    # -- rolling update --------------------------------------------------------------------------------

    def _allows_surge(self, ds: Obj) -> bool:
        strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
        rolling = strategy.get("rollingUpdate") or {}
        return (
            strategy.get("type", "RollingUpdate") == "RollingUpdate"
            and _scaled_up(rolling.get("maxSurge", 0), 1) > 0
        )

    def _available(self, pod: Obj, ds: Obj | None = None) -> bool:
        min_ready = int(((ds or {}).get("spec") or {}).get("minReadySeconds") or 0)
        at = P.available_at(pod, min_ready)
        return at is not None and at <= self.clock.now()

    def _rolling_update(self, ds: Obj, nodes: list[Obj], h: str) -> None:
        by_node = self._pods_by_node(ds)
        desired = 0
        for node in nodes:
            if should_run(ds, node)[0]:
                desired += 1
                by_node.setdefault(node["metadata"]["name"], [])
        rolling = ((ds.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate") or {}
        max_unavailable = _scaled_up(rolling.get("maxUnavailable", 1), desired)
        max_surge = _scaled_up(rolling.get("maxSurge", 0), desired)
        if desired > 0 and max_unavailable == 0 and max_surge == 0:
            max_unavailable = 1
        nodes_by_name = {n["metadata"]["name"]: n for n in nodes}
        delete: list[Obj] = []
        create: list[str] = []
        if max_surge == 0:
            unavailable = 0
            allowed: list[Obj] = []
            candidates: list[Obj] = []
            for pods in by_node.values():
                found = self._new_and_old(pods, h)
                if found is None:
                    unavailable += 1
                    continue
                new, old = found
                if (new is None) == (old is None):
                    unavailable += 1
                elif new is not None:
                    if not self._available(new, ds):
                        unavailable += 1
                elif old is not None:
                    if not self._available(old, ds):
                        allowed.append(old)
                        unavailable += 1
                    elif unavailable < max_unavailable:
                        candidates.append(old)
            room = min(max(max_unavailable - unavailable, 0), len(candidates))
            delete = allowed + candidates[:room]
        else:
            surge = available = 0
            allowed_nodes: list[str] = []
            candidate_nodes: list[str] = []
            should_not_run: list[Obj] = []
            for node_name, pods in by_node.items():
                found = self._new_and_old(pods, h)
                if found is None:
                    surge += 1
                    continue
                new, old = found
                counted = old if old is not None else new
                if counted is not None and self._available(counted, ds):
                    available += 1
                if old is None:
                    continue
                known = nodes_by_name.get(node_name)
                runs = known is not None and should_run(ds, known)[0]
                if new is None:
                    if not self._available(old, ds):
                        if not runs:
                            delete.append(old)
                        else:
                            allowed_nodes.append(node_name)
                    elif not runs:
                        should_not_run.append(old)
                    elif surge < max_surge:
                        candidate_nodes.append(node_name)
                elif not self._available(new, ds):
                    surge += 1
                else:
                    delete.append(old)
            deletable = min(available - desired, len(should_not_run))
            if deletable > 0:
                delete += should_not_run[:deletable]
            room = min(max(max_surge - surge, 0), len(candidate_nodes))
            create = allowed_nodes + candidate_nodes[:room]
        self._sync_nodes(ds, delete, create, h)

    @staticmethod
    def _new_and_old(pods: list[Obj], h: str) -> tuple[Obj | None, Obj | None] | None:
        """findUpdatedPodsOnNode: the node's one new and one old Pod; None when it has more."""
        new: Obj | None = None
        old: Obj | None = None
        for pod in pods:
            if pod["metadata"].get("deletionTimestamp"):
                continue
            if (pod["metadata"].get("labels") or {}).get(REVISION_LABEL) == h:
                if new is not None:
                    return None
                new = pod
            else:
                if old is not None:
                    return None
                old = pod
        return new, old

    # -- history ---------------------------------------------------------------------------------------

    def _history(self, ds: Obj) -> tuple[Obj, list[Obj]]:
        """constructHistory: the ControllerRevision of the current template (made, or renumbered to
        follow every other one) and the others."""
        ns = ds["metadata"].get("namespace", "")
        spec = ds.get("spec") or {}
        template = spec.get("template") or {}
        data = {"spec": {"template": {**copy.deepcopy(template), "$patch": "replace"}}}
        revisions = [
            r
            for r in self.list(REVISIONS, ns or None)
            if (controller_ref(r) or {}).get("uid") == ds["metadata"]["uid"]
        ]
        current = next((r for r in revisions if r.get("data") == data), None)
        old = [r for r in revisions if current is None or r["metadata"]["uid"] != current["metadata"]["uid"]]
        number = max((int(r.get("revision", 0)) for r in old), default=0) + 1
        if current is None:
            h = template_hash(template, (ds.get("status") or {}).get("collisionCount"))
            meta: Obj = {
                "name": f"{ds['metadata']['name']}-{h}",
                "labels": {**((template.get("metadata") or {}).get("labels") or {}), REVISION_LABEL: h},
                "ownerReferences": [new_owner_ref(ds)],
            }
            if ds["metadata"].get("annotations"):
                meta["annotations"] = dict(ds["metadata"]["annotations"])
            try:
                current = self.create(REVISIONS, ns, {"metadata": meta, "data": data, "revision": number})
            except StatusError as err:
                if err.code != 409:
                    raise
                current = self.get(REVISIONS, ns, meta["name"])
                if current is None:
                    raise
        elif int(current.get("revision", 0)) < number:
            current = self.update(REVISIONS, {**current, "revision": number})
        return current, old

    def _cleanup_history(self, ds: Obj, old: list[Obj]) -> None:
        """cleanupHistory: beyond revisionHistoryLimit (10), the oldest revisions no Pod uses go."""
        limit = int((ds.get("spec") or {}).get("revisionHistoryLimit", 10))
        if len(old) <= limit:
            return
        live = {(p["metadata"].get("labels") or {}).get(REVISION_LABEL) for p in self.owned(P.PODS, ds)}
        unused = [r for r in old if (r["metadata"].get("labels") or {}).get(REVISION_LABEL) not in live]
        unused.sort(key=lambda r: int(r.get("revision", 0)))
        for r in unused[: len(old) - limit]:
            self.delete(REVISIONS, r)

    # -- status ----------------------------------------------------------------------------------------

    def _status(self, ds: Obj, nodes: list[Obj], h: str) -> None:
        by_node = self._pods_by_node(ds)
        desired = current = misscheduled = ready = updated = available = 0
        for node in nodes:
            run, _keep = should_run(ds, node)
            pods = by_node.get(node["metadata"]["name"]) or []
            if not run:
                misscheduled += bool(pods)
                continue
            desired += 1
            if not pods:
                continue
            current += 1
            pod = _by_creation_and_phase(pods)[0]
            if P.is_ready(pod):
                ready += 1
                available += self._available(pod, ds)
            if (pod["metadata"].get("labels") or {}).get(REVISION_LABEL) == h:
                updated += 1
        status: Obj = {
            "currentNumberScheduled": current,
            "numberMisscheduled": misscheduled,
            "desiredNumberScheduled": desired,
            "numberReady": ready,
            "observedGeneration": ds["metadata"].get("generation", 1),
        }
        for key, value in (
            ("updatedNumberScheduled", updated),
            ("numberAvailable", available),
            ("numberUnavailable", desired - available),
        ):
            if value:
                status[key] = value
        old = ds.get("status") or {}
        for key in ("collisionCount", "conditions"):
            if old.get(key) is not None:
                status[key] = old[key]
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        if min_ready and ready != available:
            self.enqueue_after(
                (ds["metadata"].get("namespace", ""), ds["metadata"]["name"]), float(min_ready)
            )
        self.write_status(self.primary, ds, status)
