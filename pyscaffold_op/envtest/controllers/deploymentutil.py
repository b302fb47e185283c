"""The deployment controller's helpers (kube-controller-manager v1.37.2's
`pkg/controller/deployment/util`), over ReplicaSets and Deployments as stored dicts: revisions and the
revision history, the annotations copied to ReplicaSets, fenceposts, proportional scaling, finding the
new and old ReplicaSets, the conditions."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable
from functools import cmp_to_key
from typing import Any

from pyscaffold_op.envtest.types import Obj

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
ROLLBACK_TO = "deprecated.deployment.rollback.to"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# what copyDeploymentAnnotationsToReplicaSet (and a rollback's copy back) leaves alone
ANNOTATIONS_TO_SKIP = frozenset(
    {LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, ROLLBACK_TO}
)
MAX_REVISION_HISTORY_CHARS = 2000  # maxRevHistoryLengthInChars
MAX_INT32 = 2**31 - 1
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


# -- plain reads --------------------------------------------------------------------------------------


def replicas(obj: Obj | None) -> int:
    """spec.replicas (defaulted to 1 by the server; 0 for a missing object)."""
    if obj is None:
        return 0
    return int((obj.get("spec") or {}).get("replicas", 1) or 0)


def status_of(obj: Obj | None, field: str) -> int:
    if obj is None:
        return 0
    return int((obj.get("status") or {}).get(field, 0) or 0)


def annotations_of(obj: Obj) -> dict[str, str]:
    return obj["metadata"].get("annotations") or {}


def revision(obj: Obj) -> int | None:
    """deploymentutil.Revision: 0 without the annotation, None when it is no integer."""
    value = annotations_of(obj).get(REVISION)
    if value is None:
        return 0
    try:
        return int(value)
    except ValueError:
        return None


def max_revision(rss: Iterable[Obj]) -> int:
    return max((r for r in (revision(rs) for rs in rss) if r is not None), default=0)


def last_revision(rss: Iterable[Obj]) -> int:
    """The second highest revision (what a rollback to revision 0 means)."""
    top, second = 0, 0
    for rs in rss:
        v = revision(rs)
        if v is None:
            continue
        if v >= top:
            top, second = v, top
        elif v > second:
            second = v
    return second


def is_rolling(d: Obj) -> bool:
    return ((d.get("spec") or {}).get("strategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"


def has_progress_deadline(d: Obj) -> bool:
    deadline = (d.get("spec") or {}).get("progressDeadlineSeconds")
    return deadline is not None and deadline != MAX_INT32


def has_revision_history_limit(d: Obj) -> bool:
    limit = (d.get("spec") or {}).get("revisionHistoryLimit")
    return limit is not None and limit != MAX_INT32


# -- fenceposts -------------------------------------------------------------------------------------


def scaled_value(value: Any, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, str):
        if not value.endswith("%"):
            return 0
        try:
            fraction = int(value[:-1]) * total / 100
        except ValueError:
            return 0
        return math.ceil(fraction) if round_up else math.floor(fraction)
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def resolve_fenceposts(d: Obj) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) resolved against spec.replicas; both zero would deadlock: 1 unavailable."""
    rolling = ((d.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    want = replicas(d)
    surge = scaled_value(rolling.get("maxSurge", 0), want, True)
    unavailable = scaled_value(rolling.get("maxUnavailable", 0), want, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(d: Obj) -> int:
    return resolve_fenceposts(d)[0] if is_rolling(d) else 0


def max_unavailable(d: Obj) -> int:
    if not is_rolling(d) or replicas(d) == 0:
        return 0
    return min(resolve_fenceposts(d)[1], replicas(d))


# -- finding ReplicaSets ----------------------------------------------------------------------------


def _empty(value: Any) -> bool:
    return value is None or value == {} or value == []


def semantic_equal(a: Any, b: Any) -> bool:
    """apiequality.Semantic.DeepEqual over JSON: unset, nil and empty maps and lists are equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = set(a) | set(b)
        return all(semantic_equal(a.get(k), b.get(k)) for k in keys)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(semantic_equal(x, y) for x, y in zip(a, b, strict=True))
    if _empty(a) and _empty(b):
        return True
    return bool(a == b)


def without_hash(template: Any) -> Any:
    t = copy.deepcopy(template) if isinstance(template, dict) else {}
    labels = (t.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(HASH_LABEL, None)
    return t


def equal_ignore_hash(a: Any, b: Any) -> bool:
    return semantic_equal(without_hash(a), without_hash(b))


def _by_creation(a: Obj, b: Obj) -> int:
    """ReplicaSetsByCreationTimestamp: older first, then by name."""
    ta, tb = a["metadata"].get("creationTimestamp", ""), b["metadata"].get("creationTimestamp", "")
    if ta != tb:
        return -1 if ta < tb else 1
    na, nb = a["metadata"]["name"], b["metadata"]["name"]
    return -1 if na < nb else (1 if na > nb else 0)


def by_creation(rss: Iterable[Obj]) -> list[Obj]:
    return sorted(rss, key=cmp_to_key(_by_creation))


def _bigger_newer(a: Obj, b: Obj) -> int:
    return (replicas(b) - replicas(a)) or _by_creation(b, a)


def _bigger_older(a: Obj, b: Obj) -> int:
    return (replicas(b) - replicas(a)) or _by_creation(a, b)


def _newer(a: Obj, b: Obj) -> int:
    return _by_creation(b, a)


def by_size_newer(rss: Iterable[Obj]) -> list[Obj]:
    """ReplicaSetsBySizeNewer: bigger first, then newer first."""
    return sorted(rss, key=cmp_to_key(_bigger_newer))


def by_size_older(rss: Iterable[Obj]) -> list[Obj]:
    """ReplicaSetsBySizeOlder: bigger first, then older first."""
    return sorted(rss, key=cmp_to_key(_bigger_older))


def by_revision(rss: Iterable[Obj]) -> list[Obj]:
    """ReplicaSetsByRevision: lower revision first; unparseable or equal ones by creation."""

    def cmp(a: Obj, b: Obj) -> int:
        ra, rb = revision(a), revision(b)
        if ra is None or rb is None or ra == rb:
            return _by_creation(a, b)
        return -1 if ra < rb else 1

    return sorted(rss, key=cmp_to_key(cmp))


def find_new(d: Obj, rss: list[Obj]) -> Obj | None:
    """The oldest ReplicaSet whose template is the Deployment's (ignoring the hash label)."""
    template = (d.get("spec") or {}).get("template")
    for rs in by_creation(rss):
        if equal_ignore_hash((rs.get("spec") or {}).get("template"), template):
            return rs
    return None


def find_old(d: Obj, rss: list[Obj]) -> list[Obj]:
    """Every ReplicaSet but the new one (FindOldReplicaSets' second list)."""
    new = find_new(d, rss)
    return [rs for rs in rss if new is None or rs["metadata"]["uid"] != new["metadata"]["uid"]]


def active(rss: Iterable[Obj | None]) -> list[Obj]:
    """controller.FilterActiveReplicaSets: those with replicas to run."""
    return [rs for rs in rss if rs is not None and replicas(rs) > 0]


def find_active_or_latest(new: Obj | None, olds: list[Obj]) -> Obj | None:
    if new is None and not olds:
        return None
    newest_first = sorted(olds, key=cmp_to_key(_newer))
    live = active([*newest_first, new])
    if not live:
        return new if new is not None else newest_first[0]
    return live[0] if len(live) == 1 else None


def is_saturated(d: Obj, rs: Obj | None) -> bool:
    if rs is None:
        return False
    try:
        desired = int(annotations_of(rs).get(DESIRED_REPLICAS, ""))
    except ValueError:
        return False
    want = replicas(d)
    return replicas(rs) == want and desired == want and status_of(rs, "availableReplicas") == want


def new_rs_new_replicas(d: Obj, all_rss: list[Obj], new: Obj) -> int:
    """NewRSNewReplicas: how far the new ReplicaSet may grow now."""
    want = replicas(d)
    if not is_rolling(d):
        return want
    rolling = ((d.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    surge = scaled_value(rolling.get("maxSurge", 0), want, True)
    current = sum(replicas(rs) for rs in all_rss)
    if current >= want + surge:
        return replicas(new)
    return replicas(new) + min(want + surge - current, want - replicas(new))


# -- proportional scaling ---------------------------------------------------------------------------


def _annotation_int(rs: Obj, key: str) -> int | None:
    value = annotations_of(rs).get(key)
    if value is None:
        return None
    try:
        parsed = int(value)
    except ValueError:
        return None
    return parsed if 0 <= parsed <= MAX_INT32 else None


def rs_proportion(rs: Obj, d: Obj, to_add: int, added: int) -> int:
    """GetReplicaSetProportion: this ReplicaSet's share of a scale of the whole Deployment."""
    if replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = _rs_fraction(rs, d)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _rs_fraction(rs: Obj, d: Obj) -> int:
    if replicas(d) == 0:
        return -replicas(rs)
    d_max = replicas(d) + max_surge(d)
    before = _annotation_int(rs, MAX_REPLICAS)
    if not before:
        before = status_of(d, "replicas")
        if before == 0:
            return 0
    size = replicas(rs) * d_max / before
    return int(math.copysign(math.floor(abs(size) + 0.5), size)) - replicas(rs)  # integer.RoundToInt32


# -- annotations ------------------------------------------------------------------------------------


def copy_deployment_annotations(d: Obj, rs: Obj) -> bool:
    """copyDeploymentAnnotationsToReplicaSet: the Deployment's own annotations onto the ReplicaSet."""
    target = rs["metadata"].setdefault("annotations", {})
    changed = False
    for k, v in annotations_of(d).items():
        if k in ANNOTATIONS_TO_SKIP or target.get(k) == v:
            continue
        target[k] = v
        changed = True
    return changed


def set_replicas_annotations(rs: Obj, desired: int, maximum: int) -> bool:
    target = rs["metadata"].setdefault("annotations", {})
    changed = False
    for key, value in ((DESIRED_REPLICAS, str(desired)), (MAX_REPLICAS, str(maximum))):
        if target.get(key) != value:
            target[key] = value
            changed = True
    return changed


def replicas_annotations_need_update(rs: Obj, desired: int, maximum: int) -> bool:
    current = annotations_of(rs)
    return current.get(DESIRED_REPLICAS) != str(desired) or current.get(MAX_REPLICAS) != str(maximum)


def set_new_rs_annotations(d: Obj, rs: Obj, new_revision: str, exists: bool) -> bool:
    """SetNewReplicaSetAnnotations: the Deployment's annotations, the revision (raised to
    `new_revision`, the old one appended to the revision history), and for a ReplicaSet being made
    the desired and max replicas."""
    changed = copy_deployment_annotations(d, rs)
    target = rs["metadata"].setdefault("annotations", {})
    old = target.get(REVISION)
    try:
        old_int = int(old) if old is not None else 0
    except ValueError:
        if old != "":
            return False
        old_int = 0
    new_int = int(new_revision)
    if old_int < new_int:
        target[REVISION] = new_revision
        changed = True
    if old is not None and old_int < new_int:
        history = target.get(REVISION_HISTORY, "")
        olds = history.split(",")
        if not olds[0]:
            target[REVISION_HISTORY] = old
        else:
            total = len(history) + len(old) + 1
            start = 0
            while total > MAX_REVISION_HISTORY_CHARS and start < len(olds):
                total -= len(olds[start]) + 1
                start += 1
            if total <= MAX_REVISION_HISTORY_CHARS:
                target[REVISION_HISTORY] = ",".join([*olds[start:], old])
    if not exists and set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)):
        changed = True
    return changed


def set_deployment_revision(d: Obj, value: str) -> bool:
    target = d["metadata"].setdefault("annotations", {})
    if target.get(REVISION) != value:
        target[REVISION] = value
        return True
    return False


def set_annotations_from(d: Obj, rs: Obj) -> None:
    """SetDeploymentAnnotationsTo: a rollback takes the ReplicaSet's annotations (the skipped ones stay)."""
    kept = {k: v for k, v in annotations_of(d).items() if k in ANNOTATIONS_TO_SKIP}
    kept.update({k: v for k, v in annotations_of(rs).items() if k not in ANNOTATIONS_TO_SKIP})
    d["metadata"]["annotations"] = kept


# -- conditions -------------------------------------------------------------------------------------


def new_condition(type_: str, status: str, reason: str, message: str, now: str) -> Obj:
    return {
        "type": type_,
        "status": status,
        "lastUpdateTime": now,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def get_condition(status: Obj, type_: str) -> Obj | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == type_), None)


def set_condition(status: Obj, cond: Obj) -> None:
    """SetDeploymentCondition: the same status and reason leave it; the same status keeps its
    lastTransitionTime; the new one goes to the end."""
    current = get_condition(status, cond["type"])
    if (
        current is not None
        and current.get("status") == cond["status"]
        and current.get("reason") == cond["reason"]
    ):
        return
    if current is not None and current.get("status") == cond["status"]:
        cond = {**cond, "lastTransitionTime": current.get("lastTransitionTime")}
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != cond["type"]] + [
        cond
    ]


def remove_condition(status: Obj, type_: str) -> None:
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != type_]
    if conditions:
        status["conditions"] = conditions
    else:
        status.pop("conditions", None)
