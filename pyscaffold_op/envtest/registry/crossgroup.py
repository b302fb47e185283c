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
