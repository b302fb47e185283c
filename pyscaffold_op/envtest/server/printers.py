"""The built-in kinds' Table columns and cells, as kube-apiserver v1.37.2 prints them.

The column definitions (names, types, formats, priorities and descriptions) are the real server's,
captured into `_printer_columns.json` by `pyscaffold_op/dev/printer_columns.py`; the cells port
k8s.io/kubernetes `pkg/printers/internalversion/printers.go`. The server always prints wide (the
priority 1 columns are in every row: `kubectl get -o wide` only shows them). A kind with no printer
gets the default table convertor's `Name` and `Created At` (the creationTimestamp itself, a `date`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

Obj = dict[str, Any]
Row = list[Any]

_DEFAULT_COLUMNS = "rbac.authorization.k8s.io/roles"  # a kind printed by the default convertor


@cache
def _captured() -> dict[str, list[dict[str, Any]]]:
    doc = json.loads((Path(__file__).with_name("_printer_columns.json")).read_text())
    descs = doc["descriptions"]
    return {
        key: [
            {"name": n, "type": t, "format": f, "description": descs[d], "priority": p}
            for n, t, f, p, d in cols
        ]
        for key, cols in doc["columns"].items()
    }


def columns(group: str, plural: str) -> list[dict[str, Any]]:
    cols = _captured()
    return cols.get(f"{group}/{plural}") or cols[_DEFAULT_COLUMNS]


# -- helpers (apimachinery's) -----------------------------------------------------------------------


def human_duration(seconds: float) -> str:
    """apimachinery's duration.HumanDuration."""
    if seconds < -1:
        return "<invalid>"
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
    if h < 24 * 365 * 8:
        dy = h // 24 % 365
        return f"{h // (24 * 365)}y{dy}d" if dy else f"{h // (24 * 365)}y"
    return f"{h // (24 * 365)}y"


def _parse(ts: str) -> datetime | None:
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None


def since(ts: Any) -> str:
    """translateTimestampSince: `<unknown>` for a zero time."""
    then = _parse(ts) if isinstance(ts, str) and ts else None
    if then is None:
        return "<unknown>"
    return human_duration((datetime.now(UTC) - then).total_seconds())


def _between(start: str, end: str) -> str:
    a, b = _parse(start), _parse(end)
    if a is None or b is None:
        return ""
    return human_duration((b - a).total_seconds())


def _d(obj: Any, *path: str) -> Any:
    for p in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(p)
    return obj


def _m(obj: Any, *path: str) -> dict[str, Any]:
    v = _d(obj, *path)
    return v if isinstance(v, dict) else {}


def _l(obj: Any, *path: str) -> list[Any]:
    v = _d(obj, *path)
    return v if isinstance(v, list) else []


def _i(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _s(v: Any) -> str:
    return v if isinstance(v, str) else "" if v is None else str(v)


def _age(o: Obj) -> str:
    return since(_d(o, "metadata", "creationTimestamp"))


def _name(o: Obj) -> str:
    return _s(_d(o, "metadata", "name"))


def format_labels(labels: Any) -> str:
    """labels.FormatLabels: sorted `k=v`, `<none>` when empty."""
    if not isinstance(labels, dict) or not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def selector_string(sel: Any) -> str:
    """metav1.LabelSelectorAsSelector(sel).String(): requirements sorted by key, values sorted."""
    if not isinstance(sel, dict):
        return ""
    reqs: list[tuple[str, str]] = []
    for k, v in _m(sel, "matchLabels").items():
        reqs.append((k, f"{k}={v}"))
    for e in _l(sel, "matchExpressions"):
        if not isinstance(e, dict):
            continue
        k, op = _s(e.get("key")), e.get("operator")
        vals = ",".join(sorted(_s(v) for v in e.get("values") or []))
        if op == "In":
            reqs.append((k, f"{k} in ({vals})"))
        elif op == "NotIn":
            reqs.append((k, f"{k} notin ({vals})"))
        elif op == "Exists":
            reqs.append((k, k))
        elif op == "DoesNotExist":
            reqs.append((k, f"!{k}"))
    return ",".join(text for _k, text in sorted(reqs, key=lambda r: r[0]))


def format_selector(sel: Any) -> str:
    """metav1.FormatLabelSelector: `<none>` for a nil or empty selector."""
    return selector_string(sel) or "<none>"


def _containers(spec: Any) -> tuple[str, str]:
    cs = [c for c in _l(spec, "containers") if isinstance(c, dict)]
    return ",".join(_s(c.get("name")) for c in cs), ",".join(_s(c.get("image")) for c in cs)


def _more(items: list[str], count: int, most: int = 3) -> str:
    """listWithMoreString."""
    ret = ",".join(items[:most])
    if count > most:
        return f"{ret} + {count - most} more..."
    return ret or "<unset>"


def _cond_true(o: Obj, typ: str) -> bool:
    for c in _l(o, "status", "conditions"):
        if isinstance(c, dict) and c.get("type") == typ:
            return c.get("status") == "True"
    return False


# -- the printers -----------------------------------------------------------------------------------


def _pod(p: Obj) -> Row:
    spec, status = _m(p, "spec"), _m(p, "status")
    phase = _s(status.get("phase"))
    reason = _s(status.get("reason")) or phase
    for c in _l(status, "conditions"):
        if isinstance(c, dict) and c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    inits = {_s(c.get("name")): c for c in _l(spec, "initContainers") if isinstance(c, dict)}
    total = len(_l(spec, "containers")) + sum(1 for c in inits.values() if c.get("restartPolicy") == "Always")
    ready = restarts = sidecar_restarts = 0
    initializing = False
    n_init = len(_l(spec, "initContainers"))
    for i, cs in enumerate(_l(status, "initContainerStatuses")):
        if not isinstance(cs, dict):
            continue
        restarts += _i(cs.get("restartCount"))
        sidecar = _m(inits.get(_s(cs.get("name")))).get("restartPolicy") == "Always"
        if sidecar:
            sidecar_restarts += _i(cs.get("restartCount"))
        state = _m(cs, "state")
        term, waiting = _m(state, "terminated"), _m(state, "waiting")
        if term and _i(term.get("exitCode")) == 0 and "terminated" in state:
            continue
        if sidecar and cs.get("started") is True:
            ready += 1 if cs.get("ready") else 0
            continue
        if "terminated" in state:
            if term.get("reason"):
                reason = "Init:" + _s(term["reason"])
            elif _i(term.get("signal")):
                reason = f"Init:Signal:{term['signal']}"
            else:
                reason = f"Init:ExitCode:{_i(term.get('exitCode'))}"
        elif waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            reason = "Init:" + _s(waiting["reason"])
        else:
            reason = f"Init:{i}/{n_init}"
        initializing = True
        break
    if not initializing or _cond_true(p, "Initialized"):
        restarts = sidecar_restarts
        has_running, error_reason = False, ""
        for cs in reversed(_l(status, "containerStatuses")):
            if not isinstance(cs, dict):
                continue
            restarts += _i(cs.get("restartCount"))
            state = _m(cs, "state")
            term, waiting = _m(state, "terminated"), _m(state, "waiting")
            if waiting.get("reason"):
                reason = _s(waiting["reason"])
            elif "terminated" in state:
                if term.get("reason"):
                    reason = _s(term["reason"])
                elif _i(term.get("signal")):
                    reason = f"Signal:{term['signal']}"
                else:
                    reason = f"ExitCode:{_i(term.get('exitCode'))}"
                if _i(term.get("exitCode")):
                    error_reason = reason
            elif cs.get("ready") and "running" in state:
                has_running = True
                ready += 1
        if reason == "Completed":
            if has_running and _cond_true(p, "Ready"):
                reason = "Running"
            elif error_reason:
                reason = error_reason
            elif has_running:
                reason = "NotReady"
    if _d(p, "metadata", "deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            reason = "Terminating"
    ips = _l(status, "podIPs")
    pod_ip = _s(_m(ips[0]).get("ip")) if ips and isinstance(ips[0], dict) else ""
    gates = _l(spec, "readinessGates")
    gates_cell = "<none>"
    if gates:
        conds = {c.get("type"): c.get("status") for c in _l(status, "conditions") if isinstance(c, dict)}
        ok = sum(1 for g in gates if isinstance(g, dict) and conds.get(g.get("conditionType")) == "True")
        gates_cell = f"{ok}/{len(gates)}"
    return [
        _name(p),
        f"{ready}/{total}",
        reason,
        str(restarts),  # "N (Xm ago)" needs lastTerminationState times: kept to the count
        _age(p),
        pod_ip or "<none>",
        _s(spec.get("nodeName")) or "<none>",
        _s(status.get("nominatedNodeName")) or "<none>",
        gates_cell,
    ]


def pod_conditions(p: Obj) -> list[dict[str, str]] | None:
    phase = _d(p, "status", "phase")
    if phase == "Succeeded":
        msg = "The pod has completed successfully."
    elif phase == "Failed":
        msg = "The pod failed."
    else:
        return None
    return [{"type": "Completed", "status": "True", "reason": phase, "message": msg}]


def _service(o: Obj) -> Row:
    spec = _m(o, "spec")
    typ = _s(spec.get("type"))
    ips = _l(spec, "clusterIPs")
    external = [_s(x) for x in _l(spec, "externalIPs")]
    if typ in ("ClusterIP", "NodePort"):
        ext = ",".join(external) or "<none>"
    elif typ == "LoadBalancer":
        lb = _lb(_l(o, "status", "loadBalancer", "ingress"))
        ext = ",".join(([*lb.split(",")] if lb else []) + external) if external else lb or "<pending>"
    elif typ == "ExternalName":
        ext = _s(spec.get("externalName"))
    else:
        ext = "<unknown>"
    ports = []
    for p in _l(spec, "ports"):
        if isinstance(p, dict):
            np = _i(p.get("nodePort"))
            proto = _s(p.get("protocol"))
            ports.append(f"{p.get('port')}:{np}/{proto}" if np > 0 else f"{p.get('port')}/{proto}")
    return [
        _name(o),
        typ,
        _s(ips[0]) if ips else "<none>",
        ext,
        ",".join(ports) or "<none>",
        _age(o),
        format_labels(spec.get("selector")),
    ]


def _lb(ingress: list[Any]) -> str:
    found = set()
    for i in ingress:
        if isinstance(i, dict):
            if i.get("ip"):
                found.add(_s(i["ip"]))
            elif i.get("hostname"):
                found.add(_s(i["hostname"]))
    return ",".join(sorted(found))


def _componentstatus(o: Obj) -> Row:
    status, message, error = "Unknown", "", ""
    for c in _l(o, "conditions"):
        if isinstance(c, dict) and c.get("type") == "Healthy":
            status = "Healthy" if c.get("status") == "True" else "Unhealthy"
            message, error = _s(c.get("message")), _s(c.get("error"))
            break
    return [_name(o), status, message, error]


def _event(e: Obj) -> Row:
    core = "involvedObject" in e or "source" in e or "count" in e or "firstTimestamp" in e
    if core or "regarding" not in e:
        first_ts, last_ts = e.get("firstTimestamp"), e.get("lastTimestamp")
        ref, count, message = _m(e, "involvedObject"), e.get("count"), e.get("message")
        source = _m(e, "source")
    else:  # events.k8s.io/v1, printed through the core Event
        first_ts, last_ts = e.get("deprecatedFirstTimestamp"), e.get("deprecatedLastTimestamp")
        ref, count, message = _m(e, "regarding"), e.get("deprecatedCount"), e.get("note")
        source = _m(e, "deprecatedSource")
    first = since(first_ts) if first_ts else since(e.get("eventTime"))
    last = since(last_ts) if last_ts else first
    series = e.get("series")
    n = _i(count)
    if isinstance(series, dict):
        last = since(series.get("lastObservedTime"))
        n = _i(series.get("count"))
    elif n == 0:
        n = 1
    kind = _s(ref.get("kind")).lower()
    target = f"{kind}/{ref['name']}" if ref.get("name") else kind
    component = _s(source.get("component")) or _s(e.get("reportingController") or e.get("reportingComponent"))
    instance = _s(source.get("host")) or _s(e.get("reportingInstance"))
    return [
        last,
        _s(e.get("type")),
        _s(e.get("reason")),
        target,
        _s(ref.get("fieldPath")),
        f"{component}, {instance}" if instance else component,
        _s(message).strip(),
        first,
        n,
        _name(e),
    ]


def _node(o: Obj) -> Row:
    status = []
    for c in _l(o, "status", "conditions"):
        if isinstance(c, dict) and c.get("type") == "Ready":
            status = ["Ready" if c.get("status") == "True" else "NotReady"]
    status = status or ["Unknown"]
    if _d(o, "spec", "unschedulable"):
        status.append("SchedulingDisabled")
    roles = set()
    for k, v in _m(o, "metadata", "labels").items():
        if k.startswith("node-role.kubernetes.io/") and k != "node-role.kubernetes.io/":
            roles.add(k.removeprefix("node-role.kubernetes.io/"))
        elif k == "kubernetes.io/role" and v:
            roles.add(_s(v))
    info = _m(o, "status", "nodeInfo")
    kernel = _s(info.get("kernelVersion")) or "<unknown>"
    if info.get("architecture"):
        kernel += f" ({info['architecture']})"

    def address(typ: str) -> str:
        for a in _l(o, "status", "addresses"):
            if isinstance(a, dict) and a.get("type") == typ:
                return _s(a.get("address"))
        return "<none>"

    return [
        _name(o),
        ",".join(status),
        ",".join(sorted(roles)) or "<none>",
        _age(o),
        _s(info.get("kubeletVersion")),
        address("InternalIP"),
        address("ExternalIP"),
        _s(info.get("osImage")) or "<unknown>",
        kernel,
        _s(info.get("containerRuntimeVersion")) or "<unknown>",
    ]


_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def _access_modes(modes: list[Any]) -> str:
    return ",".join(short for long, short in _MODES if long in modes)


def _pv(o: Obj) -> Row:
    spec = _m(o, "spec")
    ref = _m(spec, "claimRef")
    claim = f"{_s(ref.get('namespace'))}/{_s(ref.get('name'))}" if spec.get("claimRef") is not None else ""
    phase = "Terminating" if _d(o, "metadata", "deletionTimestamp") else _s(_d(o, "status", "phase"))
    cls = _m(o, "metadata", "annotations").get("volume.beta.kubernetes.io/storage-class")
    return [
        _name(o),
        _s(_m(spec, "capacity").get("storage")) or "0",
        _access_modes(_l(spec, "accessModes")),
        _s(spec.get("persistentVolumeReclaimPolicy")),
        phase,
        claim,
        _s(cls) if cls is not None else _s(spec.get("storageClassName")),
        _s(spec.get("volumeAttributesClassName"))
        if spec.get("volumeAttributesClassName") is not None
        else "<unset>",
        _s(_d(o, "status", "reason")),
        _age(o),
        _s(spec.get("volumeMode")) if spec.get("volumeMode") is not None else "<unset>",
    ]


def _pvc(o: Obj) -> Row:
    spec = _m(o, "spec")
    phase = "Terminating" if _d(o, "metadata", "deletionTimestamp") else _s(_d(o, "status", "phase"))
    capacity = modes = ""
    if spec.get("volumeName"):
        modes = _access_modes(_l(o, "status", "accessModes"))
        capacity = _s(_m(o, "status", "capacity").get("storage")) or "0"
    cls = _m(o, "metadata", "annotations").get("volume.beta.kubernetes.io/storage-class")
    return [
        _name(o),
        phase,
        _s(spec.get("volumeName")),
        capacity,
        modes,
        _s(cls) if cls is not None else _s(spec.get("storageClassName")),
        _s(spec.get("volumeAttributesClassName"))
        if spec.get("volumeAttributesClassName") is not None
        else "<unset>",
        _age(o),
        _s(spec.get("volumeMode")) if spec.get("volumeMode") is not None else "<unset>",
    ]


def _endpoints(o: Obj) -> Row:
    subsets = _l(o, "subsets")
    if not subsets:
        return [_name(o), "<none>", _age(o)]
    found: list[str] = []
    count = 0
    for ss in subsets:
        if not isinstance(ss, dict):
            continue
        addrs = [_s(a.get("ip")) for a in _l(ss, "addresses") if isinstance(a, dict)]
        ports = [p for p in _l(ss, "ports") if isinstance(p, dict)]
        if not ports:
            count += len(addrs)
            found.extend(addrs)
            continue
        for p in ports:
            count += len(addrs)
            for ip in addrs:
                found.append(f"[{ip}]:{p.get('port')}" if ":" in ip else f"{ip}:{p.get('port')}")
    ret = ",".join(found[:3])
    return [_name(o), f"{ret} + {count - 3} more..." if len(found) > 3 else ret, _age(o)]


def _resourcequota(o: Obj) -> Row:
    hard, used = _m(o, "status", "hard"), _m(o, "status", "used")
    req: list[str] = []
    lim: list[str] = []
    for r in sorted(hard):
        text = f"{r}: {_s(used.get(r)) or '0'}/{_s(hard[r])}"
        (lim if r.split(".")[0] == "limits" and "." in r else req).append(text)
    return [_name(o), ", ".join(req), ", ".join(lim), _age(o)]


def _replicas(o: Obj, key: str = "replicas") -> int:
    return _i(_d(o, "spec", key))


def _template_cells(o: Obj, *path: str) -> list[str]:
    return list(_containers(_d(o, *path)))


def _rc(o: Obj) -> Row:
    st = _m(o, "status")
    return [
        _name(o),
        _replicas(o),
        _i(st.get("replicas")),
        _i(st.get("readyReplicas")),
        _age(o),
        *_template_cells(o, "spec", "template", "spec"),
        format_labels(_d(o, "spec", "selector")),
    ]


def _podtemplate(o: Obj) -> Row:
    return [
        _name(o),
        *_template_cells(o, "template", "spec"),
        format_labels(_d(o, "template", "metadata", "labels")),
    ]


def _deployment(o: Obj) -> Row:
    st = _m(o, "status")
    return [
        _name(o),
        f"{_i(st.get('readyReplicas'))}/{_replicas(o)}",
        _i(st.get("updatedReplicas")),
        _i(st.get("availableReplicas")),
        _age(o),
        *_template_cells(o, "spec", "template", "spec"),
        selector_string(_d(o, "spec", "selector")),
    ]


def _statefulset(o: Obj) -> Row:
    return [
        _name(o),
        f"{_i(_d(o, 'status', 'readyReplicas'))}/{_replicas(o)}",
        _age(o),
        *_template_cells(o, "spec", "template", "spec"),
    ]


def _replicaset(o: Obj) -> Row:
    st = _m(o, "status")
    return [
        _name(o),
        _replicas(o),
        _i(st.get("replicas")),
        _i(st.get("readyReplicas")),
        _age(o),
        *_template_cells(o, "spec", "template", "spec"),
        format_selector(_d(o, "spec", "selector")),
    ]


def _daemonset(o: Obj) -> Row:
    st = _m(o, "status")
    return [
        _name(o),
        _i(st.get("desiredNumberScheduled")),
        _i(st.get("currentNumberScheduled")),
        _i(st.get("numberReady")),
        _i(st.get("updatedNumberScheduled")),
        _i(st.get("numberAvailable")),
        format_labels(_d(o, "spec", "template", "spec", "nodeSelector")),
        _age(o),
        *_template_cells(o, "spec", "template", "spec"),
        format_selector(_d(o, "spec", "selector")),
    ]


def _controllerrevision(o: Obj) -> Row:
    name = "<none>"
    for ref in _l(o, "metadata", "ownerReferences"):
        if isinstance(ref, dict) and ref.get("controller") is True:
            api_version = _s(ref.get("apiVersion"))
            group = api_version.split("/")[0] if "/" in api_version else ""
            kind = _s(ref.get("kind"))
            gk = f"{kind}.{group}" if group else kind
            name = f"{gk.lower()}/{_s(ref.get('name'))}" if kind or group else _s(ref.get("name"))
            break
    return [_name(o), name, _i(o.get("revision")), _age(o)]


def _job(o: Obj) -> Row:
    spec, st = _m(o, "spec"), _m(o, "status")
    succeeded = _i(st.get("succeeded"))
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{_i(spec.get('completions'))}"
    elif _i(spec.get("parallelism")) > 1:
        completions = f"{succeeded}/1 of {_i(spec.get('parallelism'))}"
    else:
        completions = f"{succeeded}/1"
    took = ""
    if st.get("startTime"):
        took = (
            since(st["startTime"])
            if not st.get("completionTime")
            else _between(st["startTime"], st["completionTime"])
        )
    status = "Running"
    if _cond_true(o, "Complete"):
        status = "Complete"
    elif _cond_true(o, "Failed"):
        status = "Failed"
    elif _d(o, "metadata", "deletionTimestamp"):
        status = "Terminating"
    elif _cond_true(o, "Suspended"):
        status = "Suspended"
    elif _cond_true(o, "FailureTarget"):
        status = "FailureTarget"
    elif _cond_true(o, "SuccessCriteriaMet"):
        status = "SuccessCriteriaMet"
    return [
        _name(o),
        status,
        completions,
        took,
        _age(o),
        *_template_cells(o, "spec", "template", "spec"),
        format_selector(spec.get("selector")),
    ]


def _cronjob(o: Obj) -> Row:
    spec, st = _m(o, "spec"), _m(o, "status")
    last = since(st["lastScheduleTime"]) if st.get("lastScheduleTime") else "<none>"
    suspend = spec.get("suspend")
    return [
        _name(o),
        _s(spec.get("schedule")),
        _s(spec.get("timeZone")) if spec.get("timeZone") is not None else "<none>",
        ("True" if suspend else "False") if isinstance(suspend, bool) else "<unset>",  # printBoolPtr
        len(_l(st, "active")),
        last,
        _age(o),
        *_template_cells(o, "spec", "jobTemplate", "spec", "template", "spec"),
        format_selector(_d(o, "spec", "jobTemplate", "spec", "selector")),
    ]


def _crd(o: Obj) -> Row:
    spec = _m(o, "spec")
    versions = ",".join(_s(v.get("name")) for v in _l(spec, "versions") if isinstance(v, dict))
    return [
        _name(o),
        _s(spec.get("scope")),
        versions,
        _s(_d(o, "metadata", "creationTimestamp")),
        _s(spec.get("group")),
        _s(_d(spec, "names", "kind")),
        ",".join(_s(n) for n in _l(spec, "names", "shortNames")),
        _cond_true(o, "Established"),
    ]


def _binding(o: Obj) -> Row:
    users, groups, sas = [], [], []
    for s in _l(o, "subjects"):
        if not isinstance(s, dict):
            continue
        if s.get("kind") == "ServiceAccount":
            sas.append(f"{_s(s.get('namespace'))}/{_s(s.get('name'))}")
        elif s.get("kind") == "User":
            users.append(_s(s.get("name")))
        elif s.get("kind") == "Group":
            groups.append(_s(s.get("name")))
    ref = _m(o, "roleRef")
    return [
        _name(o),
        f"{_s(ref.get('kind'))}/{_s(ref.get('name'))}",
        _age(o),
        ", ".join(users),
        ", ".join(groups),
        ", ".join(sas),
    ]


def _ingress(o: Obj) -> Row:
    spec = _m(o, "spec")
    rules = [r for r in _l(spec, "rules") if isinstance(r, dict)]
    hosts: list[str] = []
    more = False
    for r in rules:
        if len(hosts) == 3:
            more = True
        if not more and r.get("host"):
            hosts.append(_s(r["host"]))
    hosts_cell = "*" if not hosts else ",".join(hosts) + (f" + {len(rules) - 3} more..." if more else "")
    return [
        _name(o),
        _s(spec.get("ingressClassName")) if spec.get("ingressClassName") is not None else "<none>",
        hosts_cell,
        _lb(_l(o, "status", "loadBalancer", "ingress")),
        "80, 443" if _l(spec, "tls") else "80",
        _age(o),
    ]


def _ingressclass(o: Obj) -> Row:
    name = _name(o)
    if _m(o, "metadata", "annotations").get("ingressclass.kubernetes.io/is-default-class") == "true":
        name += " (default)"
    params = _d(o, "spec", "parameters")
    cell = "<none>"
    if isinstance(params, dict):
        cell = _s(params.get("kind"))
        if params.get("apiGroup") is not None:
            cell += "." + _s(params.get("apiGroup"))
        cell += "/" + _s(params.get("name"))
    return [name, _s(_d(o, "spec", "controller")), cell, _age(o)]


def _pdb(o: Obj) -> Row:
    spec = _m(o, "spec")
    return [
        _name(o),
        _s(spec["minAvailable"]) if spec.get("minAvailable") is not None else "N/A",
        _s(spec["maxUnavailable"]) if spec.get("maxUnavailable") is not None else "N/A",
        _i(_d(o, "status", "disruptionsAllowed")),
        _age(o),
    ]


def _hpa(o: Obj) -> Row:
    spec, st = _m(o, "spec"), _m(o, "status")
    ref = _m(spec, "scaleTargetRef")
    if "targetCPUUtilizationPercentage" in spec:  # autoscaling/v1: one CPU utilisation target
        target = spec.get("targetCPUUtilizationPercentage")
        current = st.get("currentCPUUtilizationPercentage")
        cur = f"{current}%" if isinstance(current, int) else "<unknown>"
        metrics = f"cpu: {cur}/{target if isinstance(target, int) else 80}%"
    else:
        metrics = _hpa_metrics(_l(spec, "metrics"), _l(st, "currentMetrics"))
    return [
        _name(o),
        f"{_s(ref.get('kind'))}/{_s(ref.get('name'))}",
        metrics,
        str(spec["minReplicas"]) if spec.get("minReplicas") is not None else "<unset>",
        _i(spec.get("maxReplicas")),
        _i(st.get("currentReplicas")),
        _age(o),
    ]


def _hpa_metrics(specs: list[Any], statuses: list[Any]) -> str:
    if not specs:
        return "<none>"
    out: list[str] = []
    for i, sp in enumerate(specs):
        if not isinstance(sp, dict):
            continue
        typ = _s(sp.get("type"))
        key = {
            "External": "external",
            "Pods": "pods",
            "Object": "object",
            "Resource": "resource",
            "ContainerResource": "containerResource",
        }.get(typ)
        if key is None:
            out.append("<unknown type>")
            continue
        src = _m(sp, key)
        tgt = _m(src, "target")
        cur_src = _m(statuses[i], key) if i < len(statuses) and isinstance(statuses[i], dict) else {}
        cur = _m(cur_src, "current")
        has_cur = bool(cur_src)
        if typ in ("Resource", "ContainerResource"):
            res = _s(src.get("name"))
            if tgt.get("averageValue") is not None:
                c = _s(cur.get("averageValue")) if has_cur else "<unknown>"
                out.append(f"{res}: {c}/{_s(tgt['averageValue'])}")
            else:
                util = cur.get("averageUtilization")
                c = f"{util}%" if has_cur and util is not None else "<unknown>"
                t = f"{tgt['averageUtilization']}%" if tgt.get("averageUtilization") is not None else "<auto>"
                out.append(f"{res}: {c}/{t}")
        elif typ == "Pods":
            c = _s(cur.get("averageValue")) if has_cur else "<unknown>"
            out.append(f"{c}/{_s(tgt.get('averageValue'))}")
        elif tgt.get("averageValue") is not None:
            c = (
                _s(cur.get("averageValue"))
                if has_cur and cur.get("averageValue") is not None
                else "<unknown>"
            )
            out.append(f"{c}/{_s(tgt['averageValue'])} (avg)")
        else:
            c = _s(cur.get("value")) if has_cur else "<unknown>"
            out.append(f"{c}/{_s(tgt.get('value'))}")
    if len(out) > 2:
        return ", ".join(out[:2]) + f" + {len(out) - 2} more..."
    return ", ".join(out)


def _endpointslice(o: Obj) -> Row:
    ports = []
    for p in _l(o, "ports"):
        if isinstance(p, dict):
            ports.append(str(p["port"]) if p.get("port") is not None else _s(p.get("name")) or "*")
    addrs = [_s(a) for e in _l(o, "endpoints") if isinstance(e, dict) for a in _l(e, "addresses")]
    return [_name(o), _s(o.get("addressType")), _more(ports, len(ports)), _more(addrs, len(addrs)), _age(o)]


def _storageclass(o: Obj, default: str = "") -> Row:
    name = _name(o)
    if default and name == default:
        name += " (default)"
    allow = o.get("allowVolumeExpansion")
    return [
        name,
        _s(o.get("provisioner")),
        _s(o.get("reclaimPolicy")) or "Delete",
        _s(o.get("volumeBindingMode")) or "Immediate",
        allow if isinstance(allow, bool) else False,
        _age(o),
    ]


def _default_storageclass(items: list[Obj]) -> str:
    best: Obj | None = None
    for o in items:
        ann = _m(o, "metadata", "annotations")
        if "true" not in (
            ann.get("storageclass.kubernetes.io/is-default-class"),
            ann.get("storageclass.beta.kubernetes.io/is-default-class"),
        ):
            continue
        if best is None:
            best = o
            continue
        a, b = _s(_d(o, "metadata", "creationTimestamp")), _s(_d(best, "metadata", "creationTimestamp"))
        if a > b or (a == b and _name(o) < _name(best)):
            best = o
    return _name(best) if best is not None else ""


def _csidriver(o: Obj) -> Row:
    spec = _m(o, "spec")

    def flag(key: str, default: bool) -> bool:
        v = spec.get(key)
        return v if isinstance(v, bool) else default

    tokens = spec.get("tokenRequests")
    tokens_cell = (
        ",".join(_s(t.get("audience")) for t in tokens if isinstance(t, dict))
        if isinstance(tokens, list)
        else "<unset>"
    )
    return [
        _name(o),
        flag("attachRequired", True),
        flag("podInfoOnMount", False),
        flag("storageCapacity", False),
        tokens_cell,
        flag("requiresRepublish", False),
        ",".join(_s(m) for m in _l(spec, "volumeLifecycleModes")) or "<none>",
        _age(o),
    ]


def _volumeattachment(o: Obj) -> Row:
    spec = _m(o, "spec")
    pv = _s(_d(spec, "source", "persistentVolumeName"))
    attached = _d(o, "status", "attached")
    return [
        _name(o),
        _s(spec.get("attacher")),
        pv,
        _s(spec.get("nodeName")),
        attached if isinstance(attached, bool) else False,
        _age(o),
    ]


def _param_ref(o: Obj) -> str:
    pr = _d(o, "spec", "paramRef")
    if not isinstance(pr, dict):
        return "<unset>"
    if pr.get("name"):
        return f"{pr['namespace']}/{pr['name']}" if pr.get("namespace") else f"*/{pr['name']}"
    if pr.get("selector") is not None:
        return selector_string(pr["selector"])
    return "<unset>"


def _param_kind(o: Obj) -> str:
    pk = _d(o, "spec", "paramKind")
    if not isinstance(pk, dict):
        return "<unset>"
    return f"{_s(pk.get('apiVersion'))}/{_s(pk.get('kind'))}"


def _flowschema(o: Obj) -> Row:
    spec = _m(o, "spec")
    dangling = "?"
    for c in _l(o, "status", "conditions"):
        if isinstance(c, dict) and c.get("type") == "Dangling":
            dangling = _s(c.get("status"))
            break
    method = _d(spec, "distinguisherMethod", "type")
    return [
        _name(o),
        _s(_d(spec, "priorityLevelConfiguration", "name")),
        _i(spec.get("matchingPrecedence")),
        _s(method) if method is not None else "<none>",
        _age(o),
        dangling,
    ]


def _prioritylevel(o: Obj) -> Row:
    spec = _m(o, "spec")
    ncs: Any = "<none>"
    queues: Any = "<none>"
    hand: Any = "<none>"
    qll: Any = "<none>"
    limited = spec.get("limited")
    if isinstance(limited, dict):
        ncs = _i(limited.get("nominalConcurrencyShares"))
        q = _d(limited, "limitResponse", "queuing")
        if isinstance(q, dict):
            queues, hand, qll = _i(q.get("queues")), _i(q.get("handSize")), _i(q.get("queueLengthLimit"))
    return [_name(o), _s(spec.get("type")), ncs, queues, hand, qll, _age(o)]


def _ipaddress(o: Obj) -> Row:
    ref = _d(o, "spec", "parentRef")
    cell = "<none>"
    if isinstance(ref, dict):
        gr = _s(ref.get("resource")) + ("." + _s(ref["group"]) if ref.get("group") else "")
        cell = (
            gr.lower() + (f"/{ref['namespace']}" if ref.get("namespace") else "") + "/" + _s(ref.get("name"))
        )
    return [_name(o), cell]


def _resourceclaim(o: Obj) -> Row:
    states = []
    deleted = bool(_d(o, "metadata", "deletionTimestamp"))
    if deleted:
        states.append("deleted")
    if _d(o, "status", "allocation") is None:
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if _l(o, "status", "reservedFor"):
            states.append("reserved")
    return [_name(o), ",".join(states), _age(o)]


def _csr(o: Obj) -> Row:
    spec = _m(o, "spec")
    types = {c.get("type") for c in _l(o, "status", "conditions") if isinstance(c, dict)}
    status = "Denied" if "Denied" in types else "Approved" if "Approved" in types else "Pending"
    if "Failed" in types:
        status += ",Failed"
    if _d(o, "status", "certificate"):
        status += ",Issued"
    exp = spec.get("expirationSeconds")
    return [
        _name(o),
        _age(o),
        _s(spec.get("signerName")) or "<none>",
        _s(spec.get("username")),
        human_duration(exp) if isinstance(exp, int) else "<none>",
        status,
    ]


def _podcertificaterequest(o: Obj) -> Row:
    spec = _m(o, "spec")
    state = "Pending"
    for c in _l(o, "status", "conditions"):
        if isinstance(c, dict) and c.get("type") in ("Issued", "Denied", "Failed"):
            state = _s(c["type"])
    return [
        _name(o),
        _s(spec.get("podName")),
        _s(spec.get("serviceAccountName")),
        _s(spec.get("nodeName")),
        _s(spec.get("signerName")),
        state,
        format_labels(spec.get("unverifiedUserAnnotations")),
    ]


def _apiservice(o: Obj) -> Row:
    svc = _d(o, "spec", "service")
    service = f"{_s(svc.get('namespace'))}/{_s(svc.get('name'))}" if isinstance(svc, dict) else "Local"
    available = "Unknown"
    for c in _l(o, "status", "conditions"):
        if isinstance(c, dict) and c.get("type") == "Available":
            available = _s(c.get("status"))
            if c.get("status") != "True":
                available = f"{available} ({_s(c.get('reason'))})"
    return [_name(o), service, available, _age(o)]


def _simple(*cells: Callable[[Obj], Any]) -> Callable[[Obj], Row]:
    return lambda o: [_name(o), *(c(o) for c in cells)]


PRINTERS: dict[tuple[str, str], Callable[[Obj], Row]] = {
    ("", "pods"): _pod,
    ("", "services"): _service,
    ("", "componentstatuses"): _componentstatus,
    ("", "configmaps"): _simple(lambda o: len(_m(o, "data")) + len(_m(o, "binaryData")), _age),
    ("", "secrets"): _simple(lambda o: _s(o.get("type")), lambda o: len(_m(o, "data")), _age),
    ("", "events"): _event,
    ("events.k8s.io", "events"): _event,
    ("", "namespaces"): _simple(lambda o: _s(_d(o, "status", "phase")), _age),
    ("", "serviceaccounts"): _simple(_age),
    ("", "endpoints"): _endpoints,
    ("", "persistentvolumeclaims"): _pvc,
    ("", "persistentvolumes"): _pv,
    ("", "nodes"): _node,
    ("", "resourcequotas"): _resourcequota,
    ("", "replicationcontrollers"): _rc,
    ("", "podtemplates"): _podtemplate,
    ("apps", "deployments"): _deployment,
    ("apps", "statefulsets"): _statefulset,
    ("apps", "replicasets"): _replicaset,
    ("apps", "daemonsets"): _daemonset,
    ("apps", "controllerrevisions"): _controllerrevision,
    ("batch", "jobs"): _job,
    ("batch", "cronjobs"): _cronjob,
    ("coordination.k8s.io", "leases"): _simple(lambda o: _s(_d(o, "spec", "holderIdentity")), _age),
    ("apiextensions.k8s.io", "customresourcedefinitions"): _crd,
    ("rbac.authorization.k8s.io", "rolebindings"): _binding,
    ("rbac.authorization.k8s.io", "clusterrolebindings"): _binding,
    ("networking.k8s.io", "ingresses"): _ingress,
    ("networking.k8s.io", "ingressclasses"): _ingressclass,
    ("networking.k8s.io", "networkpolicies"): _simple(
        lambda o: format_selector(_m(o, "spec", "podSelector")), _age
    ),
    ("networking.k8s.io", "ipaddresses"): _ipaddress,
    ("networking.k8s.io", "servicecidrs"): _simple(
        lambda o: ",".join(_s(c) for c in _l(o, "spec", "cidrs")), _age
    ),
    ("policy", "poddisruptionbudgets"): _pdb,
    ("autoscaling", "horizontalpodautoscalers"): _hpa,
    ("discovery.k8s.io", "endpointslices"): _endpointslice,
    ("storage.k8s.io", "storageclasses"): _storageclass,
    ("storage.k8s.io", "csidrivers"): _csidriver,
    ("storage.k8s.io", "csinodes"): _simple(lambda o: len(_l(o, "spec", "drivers")), _age),
    ("storage.k8s.io", "volumeattachments"): _volumeattachment,
    ("storage.k8s.io", "volumeattributesclasses"): _simple(lambda o: _s(o.get("driverName")), _age),
    ("node.k8s.io", "runtimeclasses"): _simple(lambda o: _s(o.get("handler")), _age),
    ("flowcontrol.apiserver.k8s.io", "flowschemas"): _flowschema,
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): _prioritylevel,
    ("resource.k8s.io", "deviceclasses"): _simple(_age),
    ("resource.k8s.io", "resourceclaims"): _resourceclaim,
    ("resource.k8s.io", "resourceclaimtemplates"): _simple(_age),
    ("resource.k8s.io", "resourceslices"): _simple(
        lambda o: _s(_d(o, "spec", "nodeName")),
        lambda o: _s(_d(o, "spec", "driver")),
        lambda o: _s(_d(o, "spec", "pool", "name")),
        _age,
    ),
    ("certificates.k8s.io", "clustertrustbundles"): _simple(
        lambda o: _s(_d(o, "spec", "signerName")) or "<none>"
    ),
    ("certificates.k8s.io", "podcertificaterequests"): _podcertificaterequest,
    ("certificates.k8s.io", "certificatesigningrequests"): _csr,
    ("apiregistration.k8s.io", "apiservices"): _apiservice,
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): _simple(
        lambda o: len(_l(o, "webhooks")), _age
    ),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): _simple(
        lambda o: len(_l(o, "webhooks")), _age
    ),
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"): _simple(
        lambda o: len(_l(o, "spec", "validations")), _param_kind, _age
    ),
    ("admissionregistration.k8s.io", "mutatingadmissionpolicies"): _simple(
        lambda o: len(_l(o, "spec", "mutations")), _param_kind, _age
    ),
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): _simple(
        lambda o: _s(_d(o, "spec", "policyName")), _param_ref, _age
    ),
    ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"): _simple(
        lambda o: _s(_d(o, "spec", "policyName")), _param_ref, _age
    ),
    ("scheduling.k8s.io", "priorityclasses"): _simple(
        lambda o: _i(o.get("value")),
        lambda o: o.get("globalDefault") is True,
        _age,
        lambda o: _s(o.get("preemptionPolicy")),
    ),
}


def builtin_rows(group: str, plural: str, items: list[Obj]) -> tuple[list[dict[str, Any]], list[Row]]:
    cols = columns(group, plural)
    printer = PRINTERS.get((group, plural))
    if (group, plural) == ("storage.k8s.io", "storageclasses"):
        default = _default_storageclass(items)
        return cols, [_storageclass(o, default) for o in items]
    if printer is None:
        if len(cols) == 2 and cols[1]["name"] == "Created At":  # the default table convertor
            return cols, [[_name(o), _s(_d(o, "metadata", "creationTimestamp"))] for o in items]
        # a printer not ported: the name, then what a column's name finds at the object's top level
        return cols, [[_name(o)] + [_age(o) if c["name"] == "Age" else "" for c in cols[1:]] for o in items]
    return cols, [printer(o) for o in items]
