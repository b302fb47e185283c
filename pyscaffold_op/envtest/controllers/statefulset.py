"""The StatefulSet controller: Pods `<name>-0..N-1` with stable names, created in order (each once
its predecessors are Running and Ready, unless podManagementPolicy is Parallel), removed from the
highest ordinal down, PVCs from volumeClaimTemplates, rolling updates from the highest ordinal by
controller-revision-hash, and ControllerRevisions for the templates."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from pyscaffold_op.envtest.controllers import pods as P
from pyscaffold_op.envtest.controllers.base import SimulatedController, new_owner_ref
from pyscaffold_op.envtest.controllers.deploymentutil import template_hash
from pyscaffold_op.envtest.controllers.events import NORMAL
from pyscaffold_op.envtest.types import Obj

if TYPE_CHECKING:
    pass

REVISIONS = ("apps", "v1", "controllerrevisions")
PVCS = ("", "v1", "persistentvolumeclaims")
REVISION_LABEL = "controller-revision-hash"  # a Pod's: the name of its ControllerRevision
HASH_LABEL = "controller.kubernetes.io/hash"  # a ControllerRevision's: its hash


def ordinal(sts_name: str, pod: Obj) -> int:
    suffix = pod["metadata"]["name"][len(sts_name) + 1 :]
    return int(suffix) if suffix.isdigit() else -1


class StatefulSetController(SimulatedController):
    primary = ("apps", "v1", "statefulsets")
    owns = ("", "pods")
    kind = "StatefulSet"
    component = "statefulset-controller"

    def reconcile(self, namespace: str, name: str) -> None:
        sts = self.live(namespace, name)
        if sts is None:
            return
        spec = sts.get("spec") or {}
        replicas = int(spec.get("replicas", 1) or 0)
        parallel = spec.get("podManagementPolicy") == "Parallel"
        status: Obj = dict(sts.get("status") or {})
        update_revision = self._revision(sts)
        current_revision = status.get("currentRevision") or update_revision
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        # by index: replica i is Pod <name>-<start + i>
        pods = {ordinal(name, p) - start: p for p in self.owned(P.PODS, sts)}
        # failed or succeeded pods are replaced
        for i, existing in list(pods.items()):
            if P.is_terminal(existing) and not existing["metadata"].get("deletionTimestamp"):
                self._delete_pod(sts, existing)
                del pods[i]
        blocked = False
        for i in range(replicas):
            p = pods.get(i)
            if p is None:
                if blocked:
                    break
                revision = current_revision if self._partitioned(sts, i) else update_revision
                pods[i] = self._create_pod(sts, start + i, revision)
                if not parallel:
                    blocked = True
                continue
            if not parallel and (not P.is_ready(p) or p["metadata"].get("deletionTimestamp")):
                blocked = True
        condemned = sorted((i for i in pods if i >= replicas or i < 0), reverse=True)
        if condemned and not blocked:
            for i in condemned if parallel else condemned[:1]:
                if not pods[i]["metadata"].get("deletionTimestamp"):
                    self._delete_pod(sts, pods[i])
                if not parallel:
                    break
        elif (
            not condemned
            and not blocked
            and (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"
        ):
            # one pod at a time, from the highest ordinal, once all are Running and Ready
            for i in range(replicas - 1, -1, -1):
                p = pods.get(i)
                if p is None or self._partitioned(sts, i):
                    continue
                if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) != update_revision:
                    if not p["metadata"].get("deletionTimestamp"):
                        self._delete_pod(sts, p)
                    break
        self._status(sts, update_revision, current_revision)

    def _partitioned(self, sts: Obj, i: int) -> bool:
        ru = ((sts.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate") or {}
        return i < int(ru.get("partition", 0) or 0)

    def _revision(self, sts: Obj) -> str:
        """The update revision's name, creating its ControllerRevision when the template is new."""
        spec = sts.get("spec") or {}
        name = sts["metadata"]["name"]
        ns = sts["metadata"].get("namespace", "")
        h = template_hash(spec.get("template"))
        rev_name = f"{name}-{h}"
        if self.get(REVISIONS, ns, rev_name) is None:
            existing = self.owned(REVISIONS, sts)
            number = max((int(r.get("revision", 0)) for r in existing), default=0) + 1
            self.create(
                REVISIONS,
                ns,
                {
                    "metadata": {
                        "name": rev_name,
                        "labels": {
                            **(((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}),
                            HASH_LABEL: h,
                        },
                        "ownerReferences": [new_owner_ref(sts)],
                    },
                    "data": {
                        "spec": {
                            "template": {**copy.deepcopy(spec.get("template") or {}), "$patch": "replace"}
                        }
                    },
                    "revision": number,
                },
            )
        return rev_name

    def _create_pod(self, sts: Obj, i: int, revision: str) -> Obj:
        spec = sts.get("spec") or {}
        name = sts["metadata"]["name"]
        ns = sts["metadata"].get("namespace", "")
        template: Obj = copy.deepcopy(spec.get("template") or {})
        rev = self.get(REVISIONS, ns, revision)
        if rev is not None:  # the partition keeps older ordinals at the current revision's template
            template = copy.deepcopy((rev.get("data") or {}).get("spec", {}).get("template") or template)
            template.pop("$patch", None)
        pod = P.from_template(template, new_owner_ref(sts), name=f"{name}-{i}")
        pod["metadata"]["generateName"] = f"{name}-"  # GetPodFromTemplate's prefix, kept beside the name
        labels = pod["metadata"].setdefault("labels", {})
        labels.update(
            {
                REVISION_LABEL: revision,
                "statefulset.kubernetes.io/pod-name": f"{name}-{i}",
                "apps.kubernetes.io/pod-index": str(i),
            }
        )
        pod["spec"]["hostname"] = f"{name}-{i}"
        if spec.get("serviceName"):
            pod["spec"]["subdomain"] = spec["serviceName"]
        volumes = pod["spec"].setdefault("volumes", [])
        for claim in spec.get("volumeClaimTemplates") or []:
            cname = (claim.get("metadata") or {}).get("name", "")
            pvc_name = f"{cname}-{name}-{i}"
            if self.get(PVCS, ns, pvc_name) is None:
                pvc_labels = {
                    **((claim.get("metadata") or {}).get("labels") or {}),
                    **((spec.get("selector") or {}).get("matchLabels") or {}),
                }
                self.create(
                    PVCS,
                    ns,
                    {
                        "metadata": {"name": pvc_name, "labels": pvc_labels},
                        "spec": copy.deepcopy(claim.get("spec") or {}),
                    },
                )
                self.record(
                    sts,
                    NORMAL,
                    "SuccessfulCreate",
                    f"Create Claim {pvc_name} Pod {name}-{i} in StatefulSet {name} success",
                )
            volumes[:] = [v for v in volumes if v.get("name") != cname]
            volumes.append({"name": cname, "persistentVolumeClaim": {"claimName": pvc_name}})
        if not volumes:
            del pod["spec"]["volumes"]
        created = self.create(P.PODS, ns, pod)
        self.record(
            sts, NORMAL, "SuccessfulCreate", f"Create Pod {name}-{i} in StatefulSet {name} successful"
        )
        return created

    def _delete_pod(self, sts: Obj, pod: Obj) -> None:
        self.delete(P.PODS, pod)
        self.record(
            sts,
            NORMAL,
            "SuccessfulDelete",
            f"Delete Pod {pod['metadata']['name']} in StatefulSet {sts['metadata']['name']} successful",
        )

    def _status(self, sts: Obj, update_revision: str, current_revision: str) -> None:
        spec = sts.get("spec") or {}
        replicas = int(spec.get("replicas", 1) or 0)
        pods = self.owned(P.PODS, sts)
        live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]

        def at(rev: str) -> int:
            return sum(1 for p in live if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) == rev)

        ready = sum(1 for p in live if P.is_ready(p) and not P.is_terminal(p))
        updated = at(update_revision)
        if updated == replicas and ready == replicas and len(live) == replicas:
            current_revision = update_revision  # the rollout is over
        status: Obj = {
            "observedGeneration": sts["metadata"].get("generation", 1),
            "replicas": len(pods),
            "readyReplicas": ready,
            "currentReplicas": at(current_revision),
            "updatedReplicas": updated,
            "availableReplicas": ready,
            "currentRevision": current_revision,
            "updateRevision": update_revision,
            "collisionCount": 0,
        }
        for k in ("readyReplicas", "currentReplicas", "updatedReplicas"):
            if not status[k]:
                del status[k]
        self.write_status(self.primary, sts, status)
