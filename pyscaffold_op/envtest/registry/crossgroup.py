"""Kinds served under two groups from one storage, as the real server does: events.k8s.io/v1 Events
are core/v1 Events converted field by field (`kubectl get events` sees what a recorder wrote)."""

from __future__ import annotations

from typing import Any

# core/v1 field -> events.k8s.io/v1 field
_EVENT_FIELDS = [
    ("involvedObject", "regarding"),
    ("related", "related"),
    ("message", "note"),
    ("reason", "reason"),
    ("type", "type"),
    ("action", "action"),
    ("eventTime", "eventTime"),
    ("reportingComponent", "reportingController"),
    ("reportingInstance", "reportingInstance"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("series", "series"),
]


def core_event_to_v1(obj: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": obj.get("metadata", {}),
    }
    for core, new in _EVENT_FIELDS:
        if obj.get(core) is not None:
            out[new] = obj[core]
    return out


def v1_event_to_core(obj: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Event", "metadata": obj.get("metadata", {})}
    for core, new in _EVENT_FIELDS:
        if obj.get(new) is not None:
            out[core] = obj[new]
    return out


# autoscaling/v1 HorizontalPodAutoscalers are stored as autoscaling/v2 (the storage version), as the
# real server does: targetCPUUtilizationPercentage is the v2 Resource cpu Utilization metric.
def _cpu_metric(metrics: Any) -> dict[str, Any] | None:
    for m in metrics or ():
        if isinstance(m, dict) and m.get("type") == "Resource":
            res = m.get("resource") or {}
            if res.get("name") == "cpu":
                return res
    return None


def hpa_v1_to_v2(obj: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {**obj, "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler"}
    spec = obj.get("spec")
    if isinstance(spec, dict):
        new = {k: v for k, v in spec.items() if k != "targetCPUUtilizationPercentage"}
        target = spec.get("targetCPUUtilizationPercentage")
        if target is not None:
            new["metrics"] = [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": target},
                    },
                }
            ]
        out["spec"] = new
    status = obj.get("status")
    if isinstance(status, dict):
        new_status = {k: v for k, v in status.items() if k != "currentCPUUtilizationPercentage"}
        current = status.get("currentCPUUtilizationPercentage")
        if current is not None:
            new_status["currentMetrics"] = [
                {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": current}}}
            ]
        out["status"] = new_status
    return out


def hpa_v2_to_v1(obj: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {**obj, "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler"}
    spec = obj.get("spec")
    if isinstance(spec, dict):
        new = {k: v for k, v in spec.items() if k not in ("metrics", "behavior")}
        cpu = _cpu_metric(spec.get("metrics"))
        utilization = ((cpu or {}).get("target") or {}).get("averageUtilization")
        if utilization is not None:
            new["targetCPUUtilizationPercentage"] = utilization
        out["spec"] = new
    status = obj.get("status")
    if isinstance(status, dict):
        new_status: dict[str, Any] = {
            k: v for k, v in status.items() if k in ("observedGeneration", "lastScaleTime", "desiredReplicas")
        }
        new_status["currentReplicas"] = status.get("currentReplicas", 0)  # no omitempty in v1
        new_status.setdefault("desiredReplicas", 0)
        cpu = _cpu_metric(status.get("currentMetrics"))
        current = ((cpu or {}).get("current") or {}).get("averageUtilization")
        if current is not None:
            new_status["currentCPUUtilizationPercentage"] = current
        out["status"] = new_status
    return out
