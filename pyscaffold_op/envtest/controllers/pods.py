"""Pod helpers the workload controllers share: readiness, availability, templates, selectors."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from pyscaffold_op.apimachinery import labels
from pyscaffold_op.envtest.controllers.timestamps import parse_time
from pyscaffold_op.envtest.types import Obj

PODS = ("", "v1", "pods")


def selector_matcher(selector: Any) -> Callable[[Obj], bool]:
    """A predicate from a LabelSelector; an empty or missing one matches nothing (workloads never
    select everything)."""
    if not isinstance(selector, dict) or not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    ):
        return lambda _o: False
    try:
        parsed = labels.from_label_selector(selector)
    except labels.SelectorError:
        return lambda _o: False  # validation refuses such selectors; never select by a broken one
    return lambda obj: parsed.matches(obj.get("metadata", {}).get("labels") or {})


def is_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def is_active(pod: Obj) -> bool:
    """Counted by the workload controllers: neither terminal nor being deleted."""
    return not is_terminal(pod) and not pod["metadata"].get("deletionTimestamp")


def ready_condition(pod: Obj) -> Obj | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c
    return None


def is_ready(pod: Obj) -> bool:
    c = ready_condition(pod)
    return c is not None and c.get("status") == "True"


_EPOCH = datetime.fromisoformat("1970-01-01T00:00:00+00:00")


def available_at(pod: Obj, min_ready_seconds: int) -> datetime | None:
    """When a Ready pod counts as available (Ready for minReadySeconds); None if it is not Ready."""
    c = ready_condition(pod)
    if c is None or c.get("status") != "True":
        return None
    since = parse_time(c.get("lastTransitionTime"))
    if since is None or not min_ready_seconds:
        return _EPOCH
    return since + timedelta(seconds=min_ready_seconds)


def from_template(template: Any, owner_ref: Obj, *, name: str = "", generate_name: str = "") -> Obj:
    """A Pod from a PodTemplateSpec, controlled by `owner_ref`."""
    tmpl = copy.deepcopy(template) if isinstance(template, dict) else {}
    tmeta = tmpl.get("metadata") or {}
    meta: Obj = {"ownerReferences": [owner_ref]}
    if name:
        meta["name"] = name
    if generate_name or not name:  # a StatefulSet's Pods have both (controller.GetPodFromTemplate)
        meta["generateName"] = generate_name
    for k in ("labels", "annotations", "finalizers"):
        if tmeta.get(k):
            meta[k] = tmeta[k]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": tmpl.get("spec") or {}}


def scale_down_order(pods: list[Obj]) -> list[Obj]:
    """Which pods a ReplicaSet deletes first (controller.ActivePods, simplified): unscheduled before
    scheduled, Pending before Running, not Ready before Ready, more restarts first, newer first."""
    phase_rank = {"Pending": 0, "Unknown": 1, "Running": 2}

    def restarts(p: Obj) -> int:
        return sum(
            int(cs.get("restartCount") or 0) for cs in (p.get("status") or {}).get("containerStatuses") or []
        )

    newest_first = sorted(pods, key=lambda p: p["metadata"].get("creationTimestamp", ""), reverse=True)
    return sorted(
        newest_first,
        key=lambda p: (
            bool((p.get("spec") or {}).get("nodeName")),
            phase_rank.get((p.get("status") or {}).get("phase", ""), 0),
            is_ready(p),
            -restarts(p),
        ),
    )
