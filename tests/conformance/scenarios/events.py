"""Event validation (`pkg/apis/core/validation/events.go`): what an events.k8s.io/v1 recorder must write
(controller-runtime's `GetEventRecorder`, pyop's `mgr.get_event_recorder`), the series patch it sends
for a repeat, and what the classic core/v1 path checks."""

from __future__ import annotations

from typing import Any

from tests.conformance.harness import Scenario
from tests.conformance.scenarios.steps import patch, post, setup

V1 = "/apis/events.k8s.io/v1/namespaces/{ns}/events"
CORE = "/api/v1/namespaces/{ns}/events"
TIME = "2026-01-02T03:04:05.123456Z"
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "namespace": "{ns}",
    "name": "p",
    "uid": "0b8e8c5e-1f5c-4c1b-9a0e-1c2d3e4f5a6b",
}


def _event(name: str, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name},
        "eventTime": TIME,
        "reportingController": "widget-controller",
        "reportingInstance": "widget-controller-node-1",
        "action": "Reconcile",
        "reason": "Synced",
        "regarding": POD,
        "note": "ok",
        "type": "Normal",
    }
    body.update(fields)
    return {k: v for k, v in body.items() if v is not None}


def _view(body: Any) -> Any:
    keep = (
        "reportingController",
        "reportingInstance",
        "action",
        "reason",
        "note",
        "type",
        "series",
        "regarding",
    )
    return {"kind": body.get("kind"), **{k: body.get(k) for k in keep}}


def _core(name: str, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": POD,
        "reason": "Synced",
        "message": "ok",
        "type": "Normal",
    }
    body.update(fields)
    return {k: v for k, v in body.items() if v is not None}


SCENARIOS: list[Scenario] = [
    Scenario("events/v1-valid", "events", [post(V1, _event("e1"), view=_view)]),
    Scenario(
        "events/v1-everything-wrong",
        "events",
        [
            post(
                V1,
                _event(
                    "e1",
                    reportingController="Bad Name!",
                    reportingInstance="i" * 130,
                    action="",
                    reason=None,
                    note="n" * 1100,
                    type="Odd",
                ),
                messages=True,
            )
        ],
    ),
    Scenario(
        "events/v1-required",
        "events",
        [post(V1, _event("e1", reportingController="", reportingInstance="", action=None), messages=True)],
    ),
    Scenario(
        "events/v1-long-fields",
        "events",
        [
            post(
                V1,
                _event("e1", action="a" * 129, reason="r" * 129, reportingController="c" * 64),
                messages=True,
            )
        ],
    ),
    Scenario("events/v1-no-event-time", "events", [post(V1, _event("e1", eventTime=None), messages=True)]),
    Scenario(
        "events/v1-deprecated-fields-set",
        "events",
        [
            post(
                V1,
                _event(
                    "e1",
                    deprecatedCount=3,
                    deprecatedFirstTimestamp="2026-01-02T03:04:05Z",
                    deprecatedLastTimestamp="2026-01-02T03:04:05Z",
                    deprecatedSource={"component": "x", "host": "y"},
                ),
                messages=True,
            )
        ],
    ),
    Scenario(
        "events/v1-series-invalid",
        "events",
        [post(V1, _event("e1", series={"count": 1}), messages=True)],
    ),
    Scenario(
        "events/v1-cluster-scoped-regarding-elsewhere",
        "events",
        [post(V1, _event("e1", regarding={"apiVersion": "v1", "kind": "Node", "name": "n"}), messages=True)],
    ),
    Scenario(
        "events/v1-regarding-other-namespace",
        "events",
        [post(V1, _event("e1", regarding={**POD, "namespace": "elsewhere"}), view=_view)],
    ),
    Scenario(
        "events/v1-series-patch",
        "events",
        [
            setup(post(V1, _event("e1"))),
            patch(
                f"{V1}/e1",
                {"series": {"count": 2, "lastObservedTime": "2026-01-02T03:05:05.000001Z"}},
                kind="strategic",
                view=_view,
            ),
            patch(f"{V1}/e1", {"series": {"count": 1}}, kind="strategic", messages=True),
        ],
    ),
    Scenario(
        "events/v1-immutable",
        "events",
        [
            setup(post(V1, _event("e1"))),
            patch(f"{V1}/e1", {"reason": "Other", "action": "Delete", "note": "changed"}, messages=True),
        ],
    ),
    Scenario(
        "events/core-with-event-time",
        "events",
        [post(CORE, _core("e1", eventTime=TIME, reportingComponent="", action="a" * 129), messages=True)],
    ),
    Scenario(
        "events/core-classic-namespace-mismatch",
        "events",
        [post(CORE, _core("e1", involvedObject={**POD, "namespace": "elsewhere"}), messages=True)],
    ),
    Scenario(
        "events/core-classic-valid", "events", [post(CORE, _core("e1"), view=lambda b: b.get("reason"))]
    ),
]
