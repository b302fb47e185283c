"""One scenario's hands on one server: requests in its namespace, waits on conditions, kubectl.

Everything a scenario does goes through a `Kube`, on the emulator and on the cluster alike. What
fails along the way (a refused request, a condition that never came, kubectl's exit status) is not an
exception: it is noted, and the notes are compared with the other server's like the objects.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conformance.harness import PATCH_TYPES, Target

# set when the session is interrupted: every wait ends at once, so the scenarios' threads do too
STOP = threading.Event()
AFTER_A_TIMEOUT = 10.0  # once one wait of a scenario timed out, the next wait only this long

# plural -> (API prefix, namespaced)
RESOURCES: dict[str, tuple[str, bool]] = {
    "pods": ("/api/v1", True),
    "services": ("/api/v1", True),
    "endpoints": ("/api/v1", True),
    "configmaps": ("/api/v1", True),
    "secrets": ("/api/v1", True),
    "serviceaccounts": ("/api/v1", True),
    "events": ("/api/v1", True),
    "persistentvolumeclaims": ("/api/v1", True),
    "replicationcontrollers": ("/api/v1", True),
    "limitranges": ("/api/v1", True),
    "resourcequotas": ("/api/v1", True),
    "nodes": ("/api/v1", False),
    "namespaces": ("/api/v1", False),
    "deployments": ("/apis/apps/v1", True),
    "replicasets": ("/apis/apps/v1", True),
    "statefulsets": ("/apis/apps/v1", True),
    "daemonsets": ("/apis/apps/v1", True),
    "controllerrevisions": ("/apis/apps/v1", True),
    "jobs": ("/apis/batch/v1", True),
    "cronjobs": ("/apis/batch/v1", True),
    "endpointslices": ("/apis/discovery.k8s.io/v1", True),
    "poddisruptionbudgets": ("/apis/policy/v1", True),
    "leases": ("/apis/coordination.k8s.io/v1", True),
    "roles": ("/apis/rbac.authorization.k8s.io/v1", True),
    "rolebindings": ("/apis/rbac.authorization.k8s.io/v1", True),
}
KINDS = {
    "Pod": "pods",
    "Service": "services",
    "ConfigMap": "configmaps",
    "Secret": "secrets",
    "ServiceAccount": "serviceaccounts",
    "PersistentVolumeClaim": "persistentvolumeclaims",
    "ReplicationController": "replicationcontrollers",
    "LimitRange": "limitranges",
    "ResourceQuota": "resourcequotas",
    "Node": "nodes",
    "Namespace": "namespaces",
    "Deployment": "deployments",
    "ReplicaSet": "replicasets",
    "StatefulSet": "statefulsets",
    "DaemonSet": "daemonsets",
    "Job": "jobs",
    "CronJob": "cronjobs",
    "PodDisruptionBudget": "poddisruptionbudgets",
    "Role": "roles",
    "RoleBinding": "rolebindings",
}


@dataclass
class Side:
    """A server the corpus runs on: its URL, admin token, CA and a kubeconfig for kubectl."""

    name: str  # "emulator" | "cluster"
    url: str
    token: str
    ca_pem: bytes | None
    kubeconfig: Path


@dataclass
class Kube:
    side: Side
    ns: str
    notes: list[str] = field(default_factory=list)  # what went wrong, compared with the other side's
    records: dict[str, Any] = field(default_factory=dict)  # what a scenario saw on the way
    target: Target = field(init=False)

    def __post_init__(self) -> None:
        self.target = Target(self.side.name, self.side.url, self.side.token, self.side.ca_pem)

    # -- paths ---------------------------------------------------------------------------------------

    def path(self, plural: str, name: str = "", sub: str = "", ns: str | None = None) -> str:
        prefix, namespaced = RESOURCES[plural]
        out = f"{prefix}/namespaces/{ns or self.ns}/{plural}" if namespaced else f"{prefix}/{plural}"
        return out + (f"/{name}" if name else "") + (f"/{sub}" if sub else "")

    # -- verbs ---------------------------------------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None, ctype: str = "application/json") -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": ctype} if data is not None else {}
        resp = self.target.send(method, path, data, headers)
        if resp.status >= 400:
            reason = resp.body.get("reason") if isinstance(resp.body, dict) else ""
            self.notes.append(f"{method} {self._short(path)}: {resp.status} {reason}")
            return None
        return resp.body

    def _short(self, path: str) -> str:
        return path.replace(f"/namespaces/{self.ns}/", "/namespaces/<ns>/").split("?")[0]

    def create(self, doc: dict[str, Any]) -> Any:
        plural = KINDS[doc["kind"]]
        return self.request("POST", self.path(plural), doc)

    def get(self, plural: str, name: str, *, quiet: bool = True) -> Any:
        resp = self.target.send("GET", self.path(plural, name), None, {})
        if resp.status == 200:
            return resp.body
        if not quiet:
            self.notes.append(f"GET {plural}/{name}: {resp.status}")
        return None

    def list(self, plural: str, selector: str = "") -> list[dict[str, Any]]:
        query = f"?labelSelector={selector}" if selector else ""
        resp = self.target.send("GET", self.path(plural) + query, None, {})
        return list(resp.body.get("items") or []) if resp.status == 200 else []

    def patch(self, plural: str, name: str, body: Any, kind: str = "merge", sub: str = "") -> Any:
        return self.request("PATCH", self.path(plural, name, sub), body, PATCH_TYPES[kind])

    def delete(self, plural: str, name: str, propagation: str | None = None, grace: int | None = None) -> Any:
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation:
            options["propagationPolicy"] = propagation
        if grace is not None:
            options["gracePeriodSeconds"] = grace
        return self.request("DELETE", self.path(plural, name), options)

    def scale(self, plural: str, name: str, replicas: int) -> Any:
        return self.patch(plural, name, {"spec": {"replicas": replicas}}, sub="scale")

    # -- waiting -------------------------------------------------------------------------------------

    def until(self, what: str, check: Callable[[], bool], timeout: float = 60.0) -> bool:
        """Poll `check` until it holds; a timeout is noted (the other side may have got there). After
        a first timeout the scenario has already differed: later waits are short."""
        if any(n.startswith("timed out") for n in self.notes):
            timeout = min(timeout, AFTER_A_TIMEOUT)
        deadline = time.monotonic() + timeout
        while True:
            if STOP.is_set():
                raise RuntimeError("the session was interrupted")
            try:
                if check():
                    return True
            except (KeyError, TypeError, IndexError, AttributeError):
                pass
            if time.monotonic() > deadline:
                self.notes.append(f"timed out waiting until {what}")
                return False
            time.sleep(0.2)

    def wait(
        self, plural: str, name: str, check: Callable[[dict[str, Any]], bool], what: str, timeout: float = 60
    ) -> bool:
        def ok() -> bool:
            obj = self.get(plural, name)
            return obj is not None and bool(check(obj))

        return self.until(f"{plural}/{name} {what}", ok, timeout)

    def wait_gone(self, plural: str, name: str, timeout: float = 60) -> bool:
        return self.until(f"{plural}/{name} is gone", lambda: self.get(plural, name) is None, timeout)

    def wait_count(
        self, plural: str, count: int, selector: str = "", timeout: float = 60, **field: Any
    ) -> bool:
        """Until `count` objects (with every `status.phase`-style `field` equal) are listed."""

        def ok() -> bool:
            items = self.list(plural, selector)
            items = [i for i in items if all(_dig(i, k) == v for k, v in field.items())]
            return len(items) == count

        label = (
            f"{count} {plural}"
            + (f" ({selector})" if selector else "")
            + "".join(f" {k}={v}" for k, v in field.items())
        )
        return self.until(label, ok, timeout)

    # -- kubectl -------------------------------------------------------------------------------------

    def kubectl(
        self, *args: str, timeout: float = 120, record: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["kubectl", "--kubeconfig", str(self.side.kubeconfig), "-n", self.ns, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if record is not None:
            self.records[record] = done.returncode
        return done

    def record(self, label: str, value: Any) -> None:
        self.records[label] = value

    def record_object(self, label: str, plural: str, name: str, ns: str | None = None) -> None:
        """An object as it is now, normalised (or None when it is not there), into the records."""
        from tests.workloads.normalise import snapshot

        resp = self.target.send("GET", self.path(plural, name, ns=ns), None, {})
        if resp.status != 200:
            self.records[label] = resp.status
            return
        resp.body.setdefault("kind", "")
        self.records[label] = snapshot({plural: [resp.body]})[plural][0]

    def close(self) -> None:
        self.target.close()


def _dig(obj: Any, dotted: str) -> Any:
    for part in dotted.split("__"):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


# -- shapes scenarios build objects from --------------------------------------------------------------


def container(
    name: str = "c", image: str = "nginx", command: list[str] | None = None, **extra: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "image": image}
    if command is not None:
        out["command"] = command
    out.update(extra)
    return out


def pod_template(labels: dict[str, str], *containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": labels}, "spec": {"containers": list(containers) or [container()], **spec}}


def obj(api_version: str, kind: str, name: str, spec: Any = None, **top: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}
    if spec is not None:
        out["spec"] = spec
    for k, v in top.items():
        if k == "labels" or k == "annotations":
            out["metadata"][k] = v
        else:
            out[k] = v
    return out


SLEEP = ["sh", "-c", "sleep 3600"]
DONE = ["sh", "-c", "echo done"]
FAIL = ["sh", "-c", "exit 3"]
