"""The Deployment controller: one ReplicaSet per pod template (named by its pod-template-hash),
rolled by the strategy (RollingUpdate within maxSurge/maxUnavailable, or Recreate), with the status
and the Available/Progressing conditions `kubectl rollout status` reads."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pyscaffold_op.envtest.controllers import pods as P
from pyscaffold_op.envtest.controllers.base import (
    SimulatedController,
    new_owner_ref,
    owner_keys,
    set_condition,
)
from pyscaffold_op.envtest.controllers.timestamps import parse_time, rfc3339
from pyscaffold_op.envtest.types import Key, Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Event

RS = ("apps", "v1", "replicasets")
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # rand.SafeEncodeString's alphabet


def template_hash(template: Any, collision_count: int | None = None) -> str:
    """FNV-32a over the template, encoded like ComputeHash (the value differs from the real one's,
    which hashes Go's printed struct, but has its form: digits mapped to a vowel-free alphabet)."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count:
        data += str(collision_count).encode()
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in str(h))


def _without_hash(template: Any) -> Any:
    t = copy.deepcopy(template) if isinstance(template, dict) else {}
    labels = (t.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(HASH_LABEL, None)
    return t


def _int_or_percent(value: Any, total: int, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        try:
            frac = int(value[:-1]) * total / 100
        except ValueError:
            return 0
        return math.ceil(frac) if round_up else math.floor(frac)
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def fenceposts(d: Obj) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) resolved against spec.replicas; both zero would deadlock: 1 unavailable."""
    spec = d.get("spec") or {}
    replicas = int(spec.get("replicas", 1) or 0)
    ru = (spec.get("strategy") or {}).get("rollingUpdate") or {}
    surge = _int_or_percent(ru.get("maxSurge", "25%"), replicas, True)
    unavailable = _int_or_percent(ru.get("maxUnavailable", "25%"), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _replicas(rs: Obj) -> int:
    return int((rs.get("spec") or {}).get("replicas", 0) or 0)


def _st(rs: Obj, field: str) -> int:
    return int((rs.get("status") or {}).get(field, 0) or 0)


def _revision(rs: Obj) -> int:
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


class DeploymentController(SimulatedController):
    primary = ("apps", "v1", "deployments")
    owns = ("apps", "replicasets")
    kind = "Deployment"

    def keys_for(self, event: Event) -> Iterable[Key]:
        yield from super().keys_for(event)
        if event.gr == ("", "pods") and event.type == "DELETED":
            # Recreate waits for the old pods to be gone: their ReplicaSet's owner looks again
            for ns, rs_name in owner_keys(event, "ReplicaSet"):
                rs = self.get(RS, ns, rs_name)
                if rs is not None:
                    yield from owner_keys_of(rs, "Deployment")

    def reconcile(self, namespace: str, name: str) -> None:
        d = self.live(namespace, name)
        if d is None:
            return
        spec = d.get("spec") or {}
        rss = self.owned(RS, d)
        template = spec.get("template") or {}
        new = next(
            (rs for rs in rss if _without_hash((rs.get("spec") or {}).get("template")) == template), None
        )
        olds = sorted(
            (rs for rs in rss if rs is not new), key=lambda rs: rs["metadata"].get("creationTimestamp", "")
        )
        created = False
        if not spec.get("paused"):
            recreate = (spec.get("strategy") or {}).get("type") == "Recreate"
            if recreate:
                new, created = self._recreate(d, new, olds)
            else:
                new, created = self._rolling(d, new, olds)
            rss = self.owned(RS, d)
            new = next(
                (rs for rs in rss if new is not None and rs["metadata"]["uid"] == new["metadata"]["uid"]),
                None,
            )
            olds = [rs for rs in rss if rs is not new]
            self._cleanup(d, new, olds)
        self._sync_status(d, new, olds, created)

    # -- rollout -----------------------------------------------------------------------------------

    def _create_rs(self, d: Obj, olds: list[Obj], replicas: int) -> Obj:
        spec = d.get("spec") or {}
        h = template_hash(spec.get("template"), (d.get("status") or {}).get("collisionCount"))
        template = copy.deepcopy(spec.get("template") or {})
        tmeta = template.setdefault("metadata", {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), HASH_LABEL: h}
        selector = copy.deepcopy(spec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: h}
        surge, _ = fenceposts(d)
        revision = max((_revision(rs) for rs in olds), default=0) + 1
        rs_spec: Obj = {"replicas": replicas, "selector": selector, "template": template}
        if spec.get("minReadySeconds"):
            rs_spec["minReadySeconds"] = spec["minReadySeconds"]
        want = int(spec.get("replicas", 1) or 0)
        rs = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{d['metadata']['name']}-{h}",
                "labels": tmeta["labels"],
                "annotations": {
                    "deployment.kubernetes.io/desired-replicas": str(want),
                    "deployment.kubernetes.io/max-replicas": str(want + surge),
                    REVISION: str(revision),
                },
                "ownerReferences": [new_owner_ref(d)],
            },
            "spec": rs_spec,
        }
        created = self.create(RS, d["metadata"].get("namespace", ""), rs)
        self._set_revision(d, str(revision))
        return created

    def _set_revision(self, d: Obj, revision: str) -> None:
        annotations = d["metadata"].get("annotations") or {}
        if annotations.get(REVISION) != revision:
            current = self.get(self.primary, d["metadata"].get("namespace", ""), d["metadata"]["name"])
            if current is not None:
                meta = {**current["metadata"], "annotations": {**annotations, REVISION: revision}}
                self.update(self.primary, {**current, "metadata": meta})

    def _scale(self, rs: Obj, replicas: int, d: Obj) -> None:
        rs = self.get(RS, rs["metadata"].get("namespace", ""), rs["metadata"]["name"]) or rs  # the latest
        if _replicas(rs) == replicas:
            return
        surge, _ = fenceposts(d)
        want = int((d.get("spec") or {}).get("replicas", 1) or 0)
        annotations = {
            **(rs["metadata"].get("annotations") or {}),
            "deployment.kubernetes.io/desired-replicas": str(want),
            "deployment.kubernetes.io/max-replicas": str(want + surge),
        }
        self.update(
            RS,
            {
                **rs,
                "metadata": {**rs["metadata"], "annotations": annotations},
                "spec": {**rs["spec"], "replicas": replicas},
            },
        )

    def _rolling(self, d: Obj, new: Obj | None, olds: list[Obj]) -> tuple[Obj | None, bool]:
        want = int((d.get("spec") or {}).get("replicas", 1) or 0)
        surge, unavailable = fenceposts(d)
        created = False
        current = sum(_replicas(rs) for rs in olds) + (_replicas(new) if new else 0)
        if new is None:
            up = max(min(want + surge - current, want), 0)
            new, created = self._create_rs(d, olds, up), True
            return new, created
        if _replicas(new) > want:
            self._scale(new, want, d)
            return new, created
        if _replicas(new) < want and current < want + surge:
            self._scale(new, _replicas(new) + min(want + surge - current, want - _replicas(new)), d)
            return new, created
        # scale old ReplicaSets down as far as availability allows; availability counts no more than
        # a ReplicaSet's spec (its status may still show pods it is about to remove)
        min_available = want - unavailable
        new_unavailable = _replicas(new) - min(_st(new, "availableReplicas"), _replicas(new))
        budget = current - min_available - new_unavailable
        size = {rs["metadata"]["uid"]: _replicas(rs) for rs in olds}  # what this pass has set
        for rs in olds:  # unhealthy replicas first
            if budget <= 0:
                break
            unhealthy = _replicas(rs) - min(_st(rs, "availableReplicas"), _replicas(rs))
            if unhealthy > 0:
                down = min(budget, unhealthy)
                size[rs["metadata"]["uid"]] -= down
                self._scale(rs, size[rs["metadata"]["uid"]], d)
                budget -= down
        available = sum(min(_st(rs, "availableReplicas"), size[rs["metadata"]["uid"]]) for rs in olds)
        total_down = available + min(_st(new, "availableReplicas"), _replicas(new)) - min_available
        for rs in olds:
            uid = rs["metadata"]["uid"]
            if total_down <= 0:
                break
            if size[uid] == 0:
                continue
            down = min(size[uid], total_down)
            size[uid] -= down
            self._scale(rs, size[uid], d)
            total_down -= down
        return new, created

    def _recreate(self, d: Obj, new: Obj | None, olds: list[Obj]) -> tuple[Obj | None, bool]:
        want = int((d.get("spec") or {}).get("replicas", 1) or 0)
        for rs in olds:
            self._scale(rs, 0, d)
        if any(self.owned(P.PODS, rs) for rs in olds):  # wait until every old pod is gone
            return new, False
        if new is None:
            return self._create_rs(d, olds, want), True
        self._scale(new, want, d)
        return new, False

    def _cleanup(self, d: Obj, new: Obj | None, olds: list[Obj]) -> None:
        """Delete the oldest idle ReplicaSets beyond spec.revisionHistoryLimit."""
        limit = int((d.get("spec") or {}).get("revisionHistoryLimit", 10))
        idle = [rs for rs in olds if _replicas(rs) == 0 and _st(rs, "replicas") == 0]
        idle.sort(key=_revision)
        for rs in idle[: max(len(idle) - limit, 0)]:
            self.delete(RS, rs, propagation="Background")

    # -- status ------------------------------------------------------------------------------------

    def _sync_status(self, d: Obj, new: Obj | None, olds: list[Obj], created: bool) -> None:
        spec = d.get("spec") or {}
        want = int(spec.get("replicas", 1) or 0)
        _surge, unavailable = fenceposts(d)
        all_rs = [rs for rs in [new, *olds] if rs is not None]
        old_status = d.get("status") or {}
        counts = {
            "replicas": sum(_st(rs, "replicas") for rs in all_rs),
            "updatedReplicas": _st(new, "replicas") if new else 0,
            "readyReplicas": sum(_st(rs, "readyReplicas") for rs in all_rs),
            "availableReplicas": sum(_st(rs, "availableReplicas") for rs in all_rs),
        }
        counts["unavailableReplicas"] = max(want - counts["availableReplicas"], 0)
        status: Obj = {"observedGeneration": d["metadata"].get("generation", 1)}
        status.update({k: v for k, v in counts.items() if v})
        status["terminatingReplicas"] = sum(_st(rs, "terminatingReplicas") for rs in all_rs)
        if old_status.get("collisionCount"):
            status["collisionCount"] = old_status["collisionCount"]
        now = rfc3339(self.clock.now())
        conds: list[Obj] = list(old_status.get("conditions") or [])

        def cond(typ: str, st: str, reason: str, message: str) -> Obj:
            return {
                "type": typ,
                "status": st,
                "lastUpdateTime": now,
                "lastTransitionTime": now,
                "reason": reason,
                "message": message,
            }

        if counts["availableReplicas"] >= want - unavailable:
            conds = set_condition(
                conds,
                cond("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability."),
            )
        else:
            conds = set_condition(
                conds,
                cond(
                    "Available",
                    "False",
                    "MinimumReplicasUnavailable",
                    "Deployment does not have minimum availability.",
                ),
            )
        rs_name = new["metadata"]["name"] if new else ""
        progressing = next((c for c in conds if c.get("type") == "Progressing"), None)
        if spec.get("paused"):
            conds = set_condition(
                conds, cond("Progressing", "Unknown", "DeploymentPaused", "Deployment is paused")
            )
        elif created:
            conds = set_condition(
                conds,
                cond("Progressing", "True", "NewReplicaSetCreated", f'Created new replica set "{rs_name}"'),
            )
        elif new is not None and progressing is None:
            conds = set_condition(
                conds, cond("Progressing", "True", "FoundNewReplicaSet", f'Found new replica set "{rs_name}"')
            )
        elif new is not None:
            complete = (
                counts["updatedReplicas"] == want
                and counts["replicas"] == want
                and counts["availableReplicas"] == want
            )
            old_counts = {k: int(old_status.get(k, 0) or 0) for k in counts}
            moved = (
                counts["updatedReplicas"] > old_counts["updatedReplicas"]
                or counts["replicas"] - counts["updatedReplicas"]
                < old_counts["replicas"] - old_counts["updatedReplicas"]
                or counts["readyReplicas"] > old_counts["readyReplicas"]
                or counts["availableReplicas"] > old_counts["availableReplicas"]
            )
            deadline = spec.get("progressDeadlineSeconds", 600)
            if complete:
                conds = set_condition(
                    conds,
                    cond(
                        "Progressing",
                        "True",
                        "NewReplicaSetAvailable",
                        f'ReplicaSet "{rs_name}" has successfully progressed.',
                    ),
                )
            elif moved:
                conds = set_condition(
                    conds,
                    cond(
                        "Progressing", "True", "ReplicaSetUpdated", f'ReplicaSet "{rs_name}" is progressing.'
                    ),
                    force=True,
                )
            elif (
                progressing is not None and progressing.get("status") == "True" and isinstance(deadline, int)
            ):
                since = parse_time(progressing.get("lastUpdateTime"))
                if since is not None:
                    left = (since - self.clock.now()).total_seconds() + deadline
                    if left <= 0:
                        conds = set_condition(
                            conds,
                            cond(
                                "Progressing",
                                "False",
                                "ProgressDeadlineExceeded",
                                f'ReplicaSet "{rs_name}" has timed out progressing.',
                            ),
                        )
                    else:
                        self.enqueue_after((d["metadata"].get("namespace", ""), d["metadata"]["name"]), left)
        status["conditions"] = sorted(conds, key=lambda c: c.get("type") != "Available")
        self.write_status(self.primary, d, status)


def owner_keys_of(obj: Obj, kind: str) -> Iterable[Key]:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == kind:
            yield (obj["metadata"].get("namespace", ""), str(ref.get("name", "")))
