"""Namespaces: what a new one gets, and deletion (empty, with objects and running Pods, held by a
finalizer: the namespace controller's conditions), creating content in a terminating one."""

from __future__ import annotations

from typing import Any

from tests.workloads.harness import Scenario
from tests.workloads.kube import Kube, container, obj

HOLD = "example.com/hold"


def child(k: Kube) -> str:
    return f"{k.ns}-x"


def make_child(k: Kube) -> str:
    name = child(k)
    k.request(
        "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    k.until(
        "the child's default ServiceAccount exists",
        lambda: (
            k.target.send("GET", f"/api/v1/namespaces/{name}/serviceaccounts/default", None, {}).status == 200
        ),
        60,
    )
    return name


def post(k: Kube, ns: str, plural: str, body: dict[str, Any]) -> Any:
    return k.request("POST", k.path(plural, ns=ns), body)


def gone(k: Kube, ns: str) -> bool:
    return k.target.send("GET", f"/api/v1/namespaces/{ns}", None, {}).status == 404


def _new(k: Kube) -> None:
    name = make_child(k)
    k.until(
        "the root CA is published",
        lambda: (
            k.target.send("GET", f"/api/v1/namespaces/{name}/configmaps/kube-root-ca.crt", None, {}).status
            == 200
        ),
        60,
    )
    k.record_object("namespace", "namespaces", name)
    k.record_object("default ServiceAccount", "serviceaccounts", "default", ns=name)
    cm = k.target.send("GET", f"/api/v1/namespaces/{name}/configmaps/kube-root-ca.crt", None, {}).body
    k.record("root CA keys", sorted((cm.get("data") or {}).keys()))
    k.record("root CA annotations", sorted((cm["metadata"].get("annotations") or {}).keys()))
    k.request("DELETE", f"/api/v1/namespaces/{name}")


def _delete(fill: Any) -> Any:
    def act(k: Kube) -> None:
        name = make_child(k)
        fill(k, name)
        k.request("DELETE", f"/api/v1/namespaces/{name}")
        k.until("the child namespace is gone", lambda: gone(k, name), 120)

    return act


def _nothing(k: Kube, ns: str) -> None:
    return None


def _objects(k: Kube, ns: str) -> None:
    post(k, ns, "configmaps", obj("v1", "ConfigMap", "cm", data={"a": "b"}))
    post(k, ns, "secrets", obj("v1", "Secret", "s", stringData={"a": "b"}))
    post(k, ns, "services", obj("v1", "Service", "svc", {"ports": [{"port": 80}], "selector": {"app": "x"}}))


def _pods(k: Kube, ns: str) -> None:
    labels = {"app": "web"}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [container()]}}
    post(
        k,
        ns,
        "deployments",
        obj(
            "apps/v1",
            "Deployment",
            "web",
            {"replicas": 2, "selector": {"matchLabels": labels}, "template": template},
        ),
    )
    k.until(
        "two pods run in the child",
        lambda: (
            len(
                [
                    p
                    for p in k.target.send("GET", f"/api/v1/namespaces/{ns}/pods", None, {}).body.get(
                        "items", []
                    )
                    if (p.get("status") or {}).get("phase") == "Running"
                ]
            )
            == 2
        ),
        90,
    )


def _held(k: Kube) -> None:
    """A ConfigMap with a finalizer holds its namespace Terminating: the controller's conditions say why."""
    name = make_child(k)
    cm = obj("v1", "ConfigMap", "held", data={"a": "b"})
    cm["metadata"]["finalizers"] = [HOLD]
    post(k, name, "configmaps", cm)
    k.request("DELETE", f"/api/v1/namespaces/{name}")

    def reported() -> bool:
        ns = k.target.send("GET", f"/api/v1/namespaces/{name}", None, {}).body
        conditions = {c["type"]: c["status"] for c in (ns.get("status") or {}).get("conditions") or []}
        return conditions.get("NamespaceFinalizersRemaining") == "True"

    k.until("the namespace reports the finalizer left", reported, 90)
    k.record_object("namespace", "namespaces", name)
    k.record_object("held", "configmaps", "held", ns=name)
    k.record(
        "create in terminating",
        k.target.send(
            "POST",
            f"/api/v1/namespaces/{name}/configmaps",
            b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"late"}}',
            {"Content-Type": "application/json"},
        ).body.get("reason"),
    )


def _release(k: Kube) -> None:
    k.request(
        "PATCH",
        f"/api/v1/namespaces/{child(k)}/configmaps/held",
        {"metadata": {"finalizers": None}},
        "application/merge-patch+json",
    )


def _spec_finalizer(k: Kube) -> None:
    name = make_child(k)
    k.record_object("namespace", "namespaces", name)
    k.request("DELETE", f"/api/v1/namespaces/{name}")
    k.until("the child namespace is gone", lambda: gone(k, name), 120)
    k.record("gone", gone(k, name))


SCENARIOS: list[Scenario] = [
    Scenario("namespace/new", "namespace", _new, ()),
    Scenario("namespace/delete-empty", "namespace", _delete(_nothing), ()),
    Scenario("namespace/delete-with-objects", "namespace", _delete(_objects), ()),
    Scenario("namespace/delete-with-running-pods", "namespace", _delete(_pods), ()),
    Scenario("namespace/delete-held-by-finalizer", "namespace", _held, (), cleanup=_release),
    Scenario("namespace/spec-finalizer", "namespace", _spec_finalizer, ()),
]
