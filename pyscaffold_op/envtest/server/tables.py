"""`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`: the server-side printing kubectl get uses."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from pyscaffold_op.envtest.registry.resources import ServedResource

_NAME_COL = {
    "name": "Name",
    "type": "string",
    "format": "name",
    "priority": 0,
    "description": "Name must be unique within a namespace. Is required when creating resources, "
    "although some resources may allow a client to request the generation of an "
    "appropriate name automatically. Name is primarily intended for creation "
    "idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
}
_AGE_COL = {
    "name": "Age",
    "type": "string",
    "format": "",
    "priority": 0,
    "description": "CreationTimestamp is a timestamp representing the server time when this object "
    "was created.",
}


def human_duration(seconds: float) -> str:
    """apimachinery's duration.HumanDuration."""
    s = int(max(seconds, 0))
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = m // 60
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    if h < 24 * 8:
        return f"{h // 24}d{h % 24}h" if h % 24 else f"{h // 24}d"
    if h < 24 * 365 * 2:
        return f"{h // 24}d"
    return f"{h // (24 * 365)}y"


def age(ts: str | None) -> str:
    if not ts:
        return "<unknown>"
    try:
        then = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return "<invalid>"
    return human_duration((datetime.now(UTC) - then).total_seconds())


_SEG = re.compile(
    r"\.([A-Za-z0-9_\-]+)|\[(\d+|\*)\]|\[\?\(@\.([A-Za-z0-9_.\-]+)\s*==\s*[\"']([^\"']*)[\"']\)\]"
)


def jsonpath(obj: Any, path: str) -> list[Any]:
    """The subset of kubectl JSONPath printer columns use: `.a.b`, `[0]`, `[*]`, `[?(@.type=="Ready")]`."""
    path = path.strip().removeprefix("{").removesuffix("}")
    if path.startswith("$"):
        path = path[1:]
    if not path.startswith((".", "[")):
        path = "." + path
    cur = [obj]
    pos = 0
    while pos < len(path):
        m = _SEG.match(path, pos)
        if not m:
            return []
        pos = m.end()
        field, index, fkey, fval = m.groups()
        nxt: list[Any] = []
        for c in cur:
            if field is not None and isinstance(c, dict) and field in c:
                nxt.append(c[field])
            elif index is not None and isinstance(c, list):
                if index == "*":
                    nxt.extend(c)
                elif int(index) < len(c):
                    nxt.append(c[int(index)])
            elif fkey is not None and isinstance(c, list):
                for item in c:
                    v = jsonpath(item, "." + fkey)
                    if v and str(v[0]) == fval:
                        nxt.append(item)
        cur = nxt
    return cur


def _cell(values: list[Any], typ: str) -> Any:
    if not values:
        return None
    v = values[0] if len(values) == 1 else ",".join(str(x) for x in values)
    if typ == "date" and isinstance(v, str):
        return age(v)
    if isinstance(v, dict | list):
        import json

        return json.dumps(v)
    return v


def _pod_row(pod: dict[str, Any], wide: bool) -> list[Any]:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    cstats = status.get("containerStatuses") or []
    ready = sum(1 for c in cstats if c.get("ready"))
    restarts = sum(int(c.get("restartCount", 0)) for c in cstats)
    reason = status.get("reason") or status.get("phase") or "Unknown"
    for c in cstats:
        state = c.get("state") or {}
        if state.get("waiting", {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif state.get("terminated"):
            t = state["terminated"]
            reason = t.get("reason") or (f"ExitCode:{t.get('exitCode')}")
    if pod["metadata"].get("deletionTimestamp"):
        reason = "Terminating"
    row = [
        pod["metadata"]["name"],
        f"{ready}/{len(spec.get('containers') or [])}",
        reason,
        restarts,
        age(pod["metadata"].get("creationTimestamp")),
    ]
    row += [
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        "<none>",
    ]
    return row


def _col(name: str, typ: str = "string", priority: int = 0, fmt: str = "") -> dict[str, Any]:
    return {"name": name, "type": typ, "format": fmt, "description": name, "priority": priority}


def columns_and_rows(
    info: ServedResource, items: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    key = (info.group, info.plural)
    if info.custom:
        cols = info.printer_columns
        if cols is None:
            cols = [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]
        defs = [_NAME_COL] + [
            {
                "name": c["name"],
                "type": c.get("type", "string"),
                "format": c.get("format", ""),
                "description": c.get("description", ""),
                "priority": c.get("priority", 0),
            }
            for c in cols
        ]
        rows = [
            [o["metadata"]["name"]]
            + [_cell(jsonpath(o, c["jsonPath"]), c.get("type", "string")) for c in cols]
            for o in items
        ]
        return defs, rows
    if key == ("", "pods"):
        defs = [
            _NAME_COL,
            _col("Ready"),
            _col("Status"),
            _col("Restarts", "string"),
            _AGE_COL,
            _col("IP", priority=1),
            _col("Node", priority=1),
            _col("Nominated Node", priority=1),
            _col("Readiness Gates", priority=1),
        ]
        return defs, [_pod_row(p, True) for p in items]
    if key == ("apps", "deployments"):
        defs = [
            _NAME_COL,
            _col("Ready"),
            _col("Up-to-date", "integer"),
            _col("Available", "integer"),
            _AGE_COL,
        ]
        rows = []
        for d in items:
            st = d.get("status") or {}
            rows.append(
                [
                    d["metadata"]["name"],
                    f"{st.get('readyReplicas', 0)}/{(d.get('spec') or {}).get('replicas', 0)}",
                    st.get("updatedReplicas", 0),
                    st.get("availableReplicas", 0),
                    age(d["metadata"].get("creationTimestamp")),
                ]
            )
        return defs, rows
    if key == ("", "namespaces"):
        defs = [_NAME_COL, _col("Status"), _AGE_COL]
        return defs, [
            [
                n["metadata"]["name"],
                (n.get("status") or {}).get("phase", ""),
                age(n["metadata"].get("creationTimestamp")),
            ]
            for n in items
        ]
    if key == ("", "configmaps"):
        defs = [_NAME_COL, _col("Data", "integer"), _AGE_COL]
        return defs, [
            [
                c["metadata"]["name"],
                len(c.get("data") or {}) + len(c.get("binaryData") or {}),
                age(c["metadata"].get("creationTimestamp")),
            ]
            for c in items
        ]
    simple = _SIMPLE.get(key)
    if simple is not None:
        defs = [_NAME_COL] + [_col(name, typ) for name, typ, _f in simple] + [_AGE_COL]
        return defs, [
            [o["metadata"]["name"]]
            + [f(o) for _n, _t, f in simple]
            + [age(o["metadata"].get("creationTimestamp"))]
            for o in items
        ]
    if key == ("", "events") or key == ("events.k8s.io", "events"):
        defs = [_col("Last Seen"), _col("Type"), _col("Reason"), _col("Object"), _col("Message")]
        return defs, [_event_row(e) for e in items]
    defs = [_NAME_COL, _AGE_COL]
    return defs, [[o["metadata"]["name"], age(o["metadata"].get("creationTimestamp"))] for o in items]


def _g(obj: dict[str, Any], path: str, default: Any = "") -> Any:
    found = jsonpath(obj, path)
    return found[0] if found else default


def _event_row(e: dict[str, Any]) -> list[Any]:
    ref = e.get("involvedObject") or e.get("regarding") or {}
    when = (
        e.get("lastTimestamp")
        or e.get("deprecatedLastTimestamp")
        or e.get("eventTime")
        or (e["metadata"].get("creationTimestamp"))
    )
    return [
        age(when),
        e.get("type", ""),
        e.get("reason", ""),
        f"{str(ref.get('kind', '')).lower()}/{ref.get('name', '')}",
        e.get("message") or e.get("note") or "",
    ]


def _job_status(j: dict[str, Any]) -> str:
    for c in (j.get("status") or {}).get("conditions") or []:
        if c.get("status") == "True" and c.get("type") in ("Complete", "Failed", "Suspended"):
            return c["type"]
    return "Running"


_SIMPLE: dict[tuple[str, str], list[tuple[str, str, Any]]] = {
    ("", "services"): [
        ("Type", "string", lambda o: _g(o, ".spec.type")),
        ("Cluster-IP", "string", lambda o: _g(o, ".spec.clusterIP", "<none>")),
        ("External-IP", "string", lambda o: "<none>"),
        (
            "Port(s)",
            "string",
            lambda o: (
                ",".join(
                    f"{p.get('port')}/{p.get('protocol', 'TCP')}"
                    for p in _g(o, ".spec.ports", []) or []
                    if isinstance(p, dict)
                )
                or "<none>"
            ),
        ),
    ],
    ("", "secrets"): [
        ("Type", "string", lambda o: o.get("type", "")),
        ("Data", "integer", lambda o: len(o.get("data") or {})),
    ],
    ("", "serviceaccounts"): [("Secrets", "integer", lambda o: len(o.get("secrets") or []))],
    ("", "nodes"): [
        (
            "Status",
            "string",
            lambda o: (
                "Ready"
                if any(
                    c.get("type") == "Ready" and c.get("status") == "True"
                    for c in (o.get("status") or {}).get("conditions") or []
                )
                else "NotReady"
            ),
        ),
        ("Roles", "string", lambda o: "<none>"),
        ("Version", "string", lambda o: _g(o, ".status.nodeInfo.kubeletVersion")),
    ],
    ("apps", "statefulsets"): [
        ("Ready", "string", lambda o: f"{_g(o, '.status.readyReplicas', 0)}/{_g(o, '.spec.replicas', 0)}")
    ],
    ("apps", "replicasets"): [
        ("Desired", "integer", lambda o: _g(o, ".spec.replicas", 0)),
        ("Current", "integer", lambda o: _g(o, ".status.replicas", 0)),
        ("Ready", "integer", lambda o: _g(o, ".status.readyReplicas", 0)),
    ],
    ("batch", "jobs"): [
        ("Status", "string", _job_status),
        (
            "Completions",
            "string",
            lambda o: f"{_g(o, '.status.succeeded', 0)}/{_g(o, '.spec.completions', 1)}",
        ),
    ],
    ("batch", "cronjobs"): [
        ("Schedule", "string", lambda o: _g(o, ".spec.schedule")),
        ("Suspend", "boolean", lambda o: _g(o, ".spec.suspend", False)),
        ("Active", "integer", lambda o: len(_g(o, ".status.active", []) or [])),
    ],
    ("coordination.k8s.io", "leases"): [("Holder", "string", lambda o: _g(o, ".spec.holderIdentity"))],
    ("apiextensions.k8s.io", "customresourcedefinitions"): [],
}


def partial_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]}


def to_table(
    info: ServedResource,
    items: list[dict[str, Any]],
    include_object: str,
    list_meta: dict[str, Any],
    with_columns: bool = True,
) -> dict[str, Any]:
    defs, rows = columns_and_rows(info, items)
    out_rows = []
    for obj, cells in zip(items, rows, strict=True):
        row: dict[str, Any] = {"cells": cells}
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = partial_metadata(obj)
        out_rows.append(row)
    table: dict[str, Any] = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta}
    if with_columns:
        table["columnDefinitions"] = defs
    else:
        table["columnDefinitions"] = None
    table["rows"] = out_rows
    return table
