"""The workload corpus's harness: a scenario acts on both servers, each in a namespace of its own, and
the objects they converge to are compared (tests/conformance's sibling, which compares answers).

A `Scenario` is a name, a family, an `act(k)` that drives one server through a `Kube` (creates,
scales, deletes, kubectl, and waits on conditions with generous bounds: never on timings), and the
resources whose converged objects are compared. After `act`, the harness lists those resources until
two listings a second apart agree (the server has settled), normalises them (`normalise.snapshot`)
and compares the two servers' views, with what `act` recorded and noted (timeouts, refusals).
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tests.workloads.kube import STOP, Kube, Side
from tests.workloads.normalise import snapshot

SETTLE_SECONDS = 1.0  # two listings this far apart must agree
SETTLE_TIMEOUT = 40.0


@dataclass
class Scenario:
    name: str
    family: str
    act: Callable[[Kube], None]
    resources: tuple[str, ...] = ("pods",)
    # the namespace's objects to leave out (e.g. the ServiceAccount and ConfigMap every namespace gets)
    keep: Callable[[str, dict[str, Any]], bool] | None = None
    # after the objects are compared: remove what lives outside the namespace (nodes, volumes)
    cleanup: Callable[[Kube], None] | None = None
    # touches what every scenario shares (cordons the node): runs alone, after the others
    serial: bool = False


@dataclass
class Outcome:
    """What one server converged to in one scenario."""

    view: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    records: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def compared(self) -> dict[str, Any]:
        return {"objects": self.view, "records": self.records, "notes": sorted(self.notes)}


def namespace_of(name: str) -> str:
    return "wl-" + hashlib.sha1(name.encode()).hexdigest()[:10]


def run_one(side: Side, scenario: Scenario) -> Outcome:
    ns = namespace_of(scenario.name)
    k = Kube(side, ns)
    began = time.monotonic()
    try:
        k.request(
            "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        )
        # Pods need the namespace's default ServiceAccount (the ServiceAccount admission plugin)
        k.until(
            "the default ServiceAccount exists", lambda: k.get("serviceaccounts", "default") is not None, 30
        )
        try:
            scenario.act(k)
        except Exception as err:  # a scenario's own bug or an answer it did not expect: a difference
            k.notes.append(f"act raised {type(err).__name__}: {err}")
            traceback.print_exc()
        view = settle(k, scenario)
        if scenario.cleanup is not None:
            scenario.cleanup(k)
        # its Pods count against the node's 110 until the namespace goes: not waited for
        k.target.send("DELETE", f"/api/v1/namespaces/{ns}", None, {})
    finally:
        k.close()
    return Outcome(view, k.notes, k.records, time.monotonic() - began)


def settle(k: Kube, scenario: Scenario) -> dict[str, Any]:
    deadline = time.monotonic() + SETTLE_TIMEOUT
    last: dict[str, Any] | None = None
    while True:
        now = listing(k, scenario)
        if now == last:
            return now
        if time.monotonic() > deadline:
            k.notes.append("the objects did not settle")
            return now
        last = now
        time.sleep(SETTLE_SECONDS)


# listed in every scenario for the names they generate, compared only where a scenario names them
NAMERS = ("replicasets", "controllerrevisions", "jobs", "pods")


def listing(k: Kube, scenario: Scenario) -> dict[str, Any]:
    objects: dict[str, list[dict[str, Any]]] = {}
    for plural in dict.fromkeys((*scenario.resources, *NAMERS)):
        items = k.list(plural)
        for item in items:  # a list's items carry no kind; the views and names want it
            item.setdefault("kind", _KIND.get(plural, plural))
        if scenario.keep is not None:
            items = [i for i in items if scenario.keep(plural, i)]
        objects[plural] = items
    compared = {p: objects[p] for p in scenario.resources}
    return snapshot(compared, {p: v for p, v in objects.items() if p not in compared})


_KIND = {
    "pods": "Pod",
    "replicasets": "ReplicaSet",
    "deployments": "Deployment",
    "controllerrevisions": "ControllerRevision",
    "jobs": "Job",
    "cronjobs": "CronJob",
    "statefulsets": "StatefulSet",
    "daemonsets": "DaemonSet",
    "events": "Event",
    "services": "Service",
    "endpointslices": "EndpointSlice",
    "serviceaccounts": "ServiceAccount",
    "configmaps": "ConfigMap",
    "secrets": "Secret",
    "persistentvolumeclaims": "PersistentVolumeClaim",
    "poddisruptionbudgets": "PodDisruptionBudget",
    "replicationcontrollers": "ReplicationController",
}


def compare(emulator: Outcome, cluster: Outcome) -> list[str]:
    """Each difference as `path: what` (`emulator X != cluster Y`, `cluster lacks it, emulator has X`)."""
    return diff(emulator.compared(), cluster.compared(), "")


def diff(a: Any, b: Any, at: str) -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for k in sorted(set(a) | set(b), key=str):
            if k not in b:
                out.append(f"{at}.{k}: cluster lacks it, emulator has {_brief(a[k])}")
            elif k not in a:
                out.append(f"{at}.{k}: emulator lacks it, cluster has {_brief(b[k])}")
            else:
                out.extend(diff(a[k], b[k], f"{at}.{k}"))
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b) and not (a and b and isinstance(a[0], dict)):
            return [f"{at or '.'}: emulator {_brief(a)} != cluster {_brief(b)}"]
        out = [f"{at}: emulator has {len(a)} items, cluster {len(b)}"] if len(a) != len(b) else []
        return out + [d for i, (x, y) in enumerate(zip(a, b, strict=False)) for d in diff(x, y, f"{at}[{i}]")]
    if a != b:
        return [f"{at or '.'}: emulator {_brief(a)} != cluster {_brief(b)}"]
    return []


def _brief(v: Any) -> str:
    s = json.dumps(v, sort_keys=True, default=str)
    return s if len(s) <= 300 else s[:297] + "..."


def run_all(
    scenarios: Iterable[Scenario], emulator: Side, cluster: Side, workers: int = 16
) -> dict[str, tuple[Outcome, Outcome]]:
    """Every scenario on both servers, `workers` scenarios at a time (each on both servers at once),
    then the serial ones one by one."""
    out: dict[str, tuple[Outcome, Outcome]] = {}
    chosen = list(scenarios)
    batches = [[s for s in chosen if not s.serial], *[[s] for s in chosen if s.serial]]
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2 * workers, thread_name_prefix="workload")
    try:
        for batch in batches:
            pending = {
                s.name: (pool.submit(_bounded, emulator, s), pool.submit(_bounded, cluster, s)) for s in batch
            }
            for name, (a, b) in pending.items():
                out[name] = (a.result(), b.result())
    except BaseException:  # Ctrl-C: end every wait, so the threads end and the servers can stop
        STOP.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return out


def _bounded(side: Side, scenario: Scenario) -> Outcome:
    try:
        return run_one(side, scenario)
    except Exception as err:  # the harness must report every scenario, whatever one of them did
        return Outcome(notes=[f"harness: {type(err).__name__}: {err}"])


def brief(outcome: Outcome) -> str:
    return json.dumps(outcome.compared(), sort_keys=True, indent=1)[:4000]
