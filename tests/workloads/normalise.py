"""The converged objects of one server, normalised so two servers' can be compared.

What two servers legitimately differ in is replaced by markers: uids, resourceVersions, times, IP
addresses, and the names and hashes a server generates (a ReplicaSet's pod-template-hash becomes
`<hash:REV>` after its revision, a Pod's `<generateName><gen>`, a ControllerRevision's hash
`<rev:N>`, a CronJob's Job suffix `<sched:N>`), wherever they appear (names, labels, references, Event
messages). What a kubelet writes and kwok only models (docs/envtest.md, "Cluster mode") is viewed
through what both reproduce from the container's command: phase, conditions' statuses, container
states, exit codes, whether it restarted.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
UID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
IPV4 = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b")
CIDR = re.compile(r"^(?:\d{1,3}\.){3}\d{1,3}/\d+$")
GENERATED_SUFFIX = re.compile(r"^[bcdfghjklmnpqrstvwxz2456789]{5}$")
# in Events, names of objects gone by the time the scenario lists (a scaled-down ReplicaSet's Pods, a
# ReplicaSet past the history limit): apimachinery's SafeEncodeString alphabet, a generated 5-character
# tail and a pod-template-hash (9 or 10 characters with a digit) that no listed object could explain
_SAFE = "bcdfghjklmnpqrstvwxz2456789"
GONE_HASH = re.compile(rf"-(?=[{_SAFE}]*[2456789])[{_SAFE}]{{9,10}}(?=-|\b)")
GONE_GENERATED = re.compile(rf"-[{_SAFE}]{{5}}\b")
VOLATILE_META = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "selfLink")
# what a kubelet (or kwok) writes of a node: figures of a machine that is not compared
NODE_VOLATILE = (
    "nodeInfo",
    "daemonEndpoints",
    "images",
    "volumesInUse",
    "volumesAttached",
    "runtimeHandlers",
)
# events written by the kubelet: kwok is no kubelet, so these are not the cluster's to judge
KUBELET = ("kubelet",)


def snapshot(
    objects: dict[str, list[dict[str, Any]]], namers: dict[str, list[dict[str, Any]]] | None = None
) -> dict[str, Any]:
    """`plural -> items` as listed, viewed and normalised into what is compared; `namers` are more
    objects whose generated names and hashes are to be recognised (ReplicaSets when only Pods are
    compared)."""
    names = _substitutions({**(namers or {}), **objects})
    out: dict[str, Any] = {}
    for plural, items in objects.items():
        view = VIEWS.get(plural, _object)
        viewed = [v for v in (view(copy.deepcopy(i)) for i in items) if v is not None]
        cleaned = [_clean(_rename(v, names)) for v in viewed]
        if plural == "events":  # the same event may be counted up or written twice: compare each once
            cleaned = [_gone_names(e) for e in cleaned]
            unique = {json.dumps(e, sort_keys=True): e for e in cleaned}
            cleaned = list(unique.values())
        out[plural] = sorted(cleaned, key=lambda v: json.dumps(v, sort_keys=True))
    return out


# -- names a server generates -------------------------------------------------------------------------


def _substitutions(objects: dict[str, list[dict[str, Any]]]) -> list[tuple[str, str]]:
    """(generated text, marker) pairs, longest first, from every object listed."""
    subs: dict[str, str] = {}
    everything = [o for items in objects.values() for o in items]
    for o in everything:
        meta = o.get("metadata") or {}
        labels = meta.get("labels") or {}
        annotations = meta.get("annotations") or {}
        kind = o.get("kind", "")
        name = meta.get("name", "")
        if kind == "ReplicaSet" and labels.get("pod-template-hash"):
            rev = annotations.get("deployment.kubernetes.io/revision", "?")
            subs[labels["pod-template-hash"]] = f"<hash:{rev}>"
        if kind == "ControllerRevision":  # `<owner>-<hash>`, the hash also a label (an orphan has no owner)
            rev = str(o.get("revision", "?"))
            hashed = labels.get("controller.kubernetes.io/hash") or labels.get("controller-revision-hash")
            subs[hashed or name.rsplit("-", 1)[-1]] = f"<rev:{rev}>"
        if kind == "Job":
            for ref in meta.get("ownerReferences") or []:
                if ref.get("kind") == "CronJob" and name.startswith(ref.get("name", "") + "-"):
                    subs.setdefault(name, "")  # numbered below, in schedule order
    cron_jobs = sorted((n for n, m in subs.items() if m == ""), key=lambda n: (len(n), n))
    per_owner: dict[str, int] = {}
    for n in cron_jobs:
        owner = n.rsplit("-", 1)[0]
        per_owner[owner] = per_owner.get(owner, 0) + 1
        subs[n] = f"{owner}-<sched:{per_owner[owner]}>"
    # names from generateName: the generated tail, wherever the name appears
    for o in everything:
        meta = o.get("metadata") or {}
        base, name = meta.get("generateName") or "", meta.get("name") or ""
        if base and name.startswith(base) and GENERATED_SUFFIX.match(name[len(base) :]):
            subs[name] = base + "<gen>"
    return sorted(subs.items(), key=lambda kv: -len(kv[0]))


def _gone_names(event: dict[str, Any]) -> dict[str, Any]:
    """An Event's names of objects that no longer exist, generated tails and hashes as markers (what
    the listed objects explain was renamed before)."""
    out = dict(event)
    for key in ("object", "message"):
        if isinstance(out.get(key), str):
            out[key] = GONE_GENERATED.sub("-<gen>", GONE_HASH.sub("-<hash:gone>", out[key]))
    return out


def _rename(value: Any, subs: list[tuple[str, str]]) -> Any:
    if isinstance(value, dict):
        return {k: _rename(v, subs) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename(v, subs) for v in value]
    if isinstance(value, str):
        for text, marker in subs:
            if text and text in value:
                value = value.replace(text, marker)
        # projected token volumes and other names the API server generates from a fixed prefix
        value = re.sub(r"\b(kube-api-access-)[a-z0-9]{5}\b", r"\1<gen>", value)
    return value


def _clean(value: Any, key: str = "") -> Any:
    if (
        key == "conditions"
        and isinstance(value, list)
        and all(isinstance(c, dict) and "type" in c for c in value)
    ):
        # by type: the order a controller appended them in is no client's business
        return {c["type"]: _clean({k: v for k, v in c.items() if k != "type"}, "condition") for c in value}
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k in VOLATILE_META and key == "metadata":
                continue
            if k == "uid" and key in (
                "ownerReferences",
                "involvedObject",
                "regarding",
                "related",
                "targetRef",
            ):
                continue
            if k == "resourceVersion":  # in object references too (a CronJob's active Jobs)
                continue
            out[k] = _clean(v, k)
        return out
    if isinstance(value, list):
        return [_clean(v, key) for v in value]
    if isinstance(value, str):
        if TIME.match(value):
            return "<time>"
        if CIDR.match(value):
            return "<cidr>"
        return UID.sub("<uid>", IPV4.sub("<ip>", value))
    return value


# -- views: what is compared of each kind ---------------------------------------------------------------


def _meta(meta: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in meta.items() if k not in VOLATILE_META}
    if "deletionTimestamp" in out:
        out["deletionTimestamp"] = "<set>"
    return out


def _object(o: dict[str, Any]) -> dict[str, Any]:
    o["metadata"] = _meta(o.get("metadata") or {})
    return o


def _pod(o: dict[str, Any]) -> dict[str, Any]:
    """The Pod as the API server and controllers made it; of its kubelet-written status, what kwok's
    stages and the emulator's kubelet both derive from the container's command."""
    status = o.get("status") or {}
    o["metadata"] = _meta(o.get("metadata") or {})
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    conditions.pop("PodReadyToStartContainers", None)  # the sandbox: the kubelet's own business
    o["status"] = {
        k: v
        for k, v in status.items()
        if k in ("phase", "qosClass", "reason", "message", "nominatedNodeName")
    }
    o["status"]["conditions"] = conditions
    for key in ("initContainerStatuses", "containerStatuses"):
        if key in status:
            o["status"][key] = [_container_status(c) for c in status[key]]
    return o


def _container_status(c: dict[str, Any]) -> dict[str, Any]:
    state = c.get("state") or {}
    kind = next(iter(state), "none")
    detail = state.get(kind) or {}
    out: dict[str, Any] = {"name": c.get("name"), "ready": c.get("ready"), "state": kind}
    if kind == "terminated":
        out["exitCode"] = detail.get("exitCode")
        out["reason"] = detail.get("reason")
    if kind == "waiting":
        out["reason"] = detail.get("reason")
    out["restarted"] = bool(c.get("restartCount"))
    return out


def _node(o: dict[str, Any]) -> dict[str, Any]:
    o = _object(o)
    status = o.get("status") or {}
    for k in NODE_VOLATILE:
        status.pop(k, None)
    status["conditions"] = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    return o


def _event(e: dict[str, Any]) -> dict[str, Any] | None:
    """An Event by what it says and who says it (not its name, counts or times)."""
    source = (e.get("source") or {}).get("component") or e.get("reportingComponent") or ""
    if source in KUBELET:
        return None
    involved = e.get("involvedObject") or {}
    return {
        "type": e.get("type"),
        "reason": e.get("reason"),
        "object": f"{involved.get('kind')}/{involved.get('name')}",
        "message": e.get("message"),
        "source": source,
        "reportingController": e.get("reportingComponent") or "",
        "action": e.get("action") or "",
    }


def _endpointslice(o: dict[str, Any]) -> dict[str, Any]:
    o = _object(o)
    if "generation" in o["metadata"]:  # how many times the controller rewrote it: churn, not state
        o["metadata"]["generation"] = "<set>"
    o["endpoints"] = sorted(o.get("endpoints") or [], key=lambda e: json.dumps(e.get("targetRef") or {}))
    return o


def _service_account(o: dict[str, Any]) -> dict[str, Any]:
    return _object(o)


VIEWS: dict[str, Callable[[dict[str, Any]], dict[str, Any] | None]] = {
    "pods": _pod,
    "nodes": _node,
    "events": _event,
    "endpointslices": _endpointslice,
    "serviceaccounts": _service_account,
}

__all__ = ["snapshot"]
