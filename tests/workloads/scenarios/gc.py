"""Garbage collection by owner references: background, foreground and orphan deletion, owner chains,
several owners, dangling and invalid references, blockOwnerDeletion."""

from __future__ import annotations

from typing import Any

from tests.workloads.harness import Scenario
from tests.workloads.kube import Kube, container, obj

RESOURCES = ("configmaps", "pods", "events")
HOLD = "example.com/hold"


def keep(plural: str, item: dict[str, Any]) -> bool:
    """Leave out the root CA every namespace gets: it is the controller-manager's, not the GC's."""
    return item["metadata"]["name"] != "kube-root-ca.crt"


def ref(owner: dict[str, Any] | None, block: bool = False, controller: bool = False) -> dict[str, Any]:
    owner = owner or {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "gone", "uid": "00000000-0000-0000-0000-000000000000"},
    }
    out = {
        "apiVersion": owner.get("apiVersion", "v1"),
        "kind": owner.get("kind", "ConfigMap"),
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }
    if block:
        out["blockOwnerDeletion"] = True
    if controller:
        out["controller"] = True
    return out


def configmap(name: str, *owners: dict[str, Any], finalizers: list[str] | None = None) -> dict[str, Any]:
    body = obj("v1", "ConfigMap", name, data={"k": name})
    if owners:
        body["metadata"]["ownerReferences"] = list(owners)
    if finalizers:
        body["metadata"]["finalizers"] = finalizers
    return body


def _chain(length: int, propagation: str | None) -> Any:
    def act(k: Kube) -> None:
        owner = k.create(configmap("c0"))
        for i in range(1, length):
            owner = k.create(configmap(f"c{i}", ref(owner, block=propagation == "Foreground")))
        k.delete("configmaps", "c0", propagation)
        k.wait_gone("configmaps", "c0")
        if propagation == "Orphan":
            k.wait("configmaps", "c1", lambda c: not c["metadata"].get("ownerReferences"), "lost its owner")
        else:
            for i in range(1, length):
                k.wait_gone("configmaps", f"c{i}", 90)

    return act


def _two_owners(delete_both: bool) -> Any:
    def act(k: Kube) -> None:
        a, b = k.create(configmap("a")), k.create(configmap("b"))
        k.create(configmap("dep", ref(a), ref(b)))
        k.delete("configmaps", "a")
        k.wait_gone("configmaps", "a")
        if delete_both:
            k.delete("configmaps", "b")
            k.wait_gone("configmaps", "dep", 90)
        else:
            k.wait(
                "configmaps",
                "dep",
                lambda c: len(c["metadata"].get("ownerReferences") or []) == 1,
                "keeps one owner",
                90,
            )

    return act


def _dangling(wrong_uid: bool) -> Any:
    def act(k: Kube) -> None:
        owner = None
        if wrong_uid:
            real = k.create(configmap("owner"))
            owner = {**real, "metadata": {**real["metadata"], "uid": "11111111-1111-1111-1111-111111111111"}}
        k.create(configmap("dep", ref(owner)))
        k.wait_gone("configmaps", "dep", 90)

    return act


def _blocked_foreground(k: Kube) -> None:
    """A dependent with blockOwnerDeletion and a finalizer of its own holds its owner in foreground
    deletion: both stay, deleting, until the finalizer goes."""
    owner = k.create(configmap("owner"))
    k.create(configmap("dep", ref(owner, block=True), finalizers=[HOLD]))
    k.delete("configmaps", "owner", "Foreground")
    k.wait(
        "configmaps", "dep", lambda c: bool(c["metadata"].get("deletionTimestamp")), "is being deleted", 90
    )


def _release_hold(k: Kube) -> None:
    k.patch("configmaps", "dep", {"metadata": {"finalizers": None}})


def _orphan_with_finalizer(k: Kube) -> None:
    owner = k.create(configmap("owner"))
    k.create(configmap("dep", ref(owner)))
    k.delete("configmaps", "owner", "Orphan")
    k.wait_gone("configmaps", "owner", 90)
    k.wait("configmaps", "dep", lambda c: not c["metadata"].get("ownerReferences"), "is an orphan", 90)


def _pods(propagation: str | None) -> Any:
    def act(k: Kube) -> None:
        owner = k.create(configmap("owner"))
        for i in range(2):
            pod = obj("v1", "Pod", f"p{i}", {"containers": [container()]})
            pod["metadata"]["ownerReferences"] = [ref(owner, block=True, controller=True)]
            k.create(pod)
        k.wait_count("pods", 2, timeout=60, status__phase="Running")
        k.delete("configmaps", "owner", propagation)
        k.wait_gone("configmaps", "owner", 90)
        if propagation == "Orphan":
            k.until(
                "the pods are orphans",
                lambda: all(not p["metadata"].get("ownerReferences") for p in k.list("pods")),
            )
        else:
            k.wait_count("pods", 0, timeout=90)

    return act


def _cluster_scoped_owner(k: Kube) -> None:
    role = k.request(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": k.ns},
            "rules": [],
        },
    )
    k.create(configmap("dep", ref(role)))
    k.request("DELETE", f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{k.ns}")
    k.wait_gone("configmaps", "dep", 90)


def _namespaced_owner_of_cluster_scoped(k: Kube) -> None:
    """A cluster-scoped dependent cannot have a namespaced owner: the GC says so in an Event and
    treats the reference as dangling."""
    owner = k.create(configmap("owner"))
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": k.ns, "ownerReferences": [ref(owner)]},
        "rules": [],
    }
    k.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role)
    k.until(
        "the cluster role is gone",
        lambda: (
            k.target.send("GET", f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{k.ns}", None, {}).status
            == 404
        ),
        90,
    )


def _cleanup_role(k: Kube) -> None:
    k.target.send("DELETE", f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{k.ns}", None, {})


def _scenario(name: str, act: Any, **kw: Any) -> Scenario:
    return Scenario(f"gc/{name}", "gc", act, RESOURCES, keep=keep, **kw)


SCENARIOS: list[Scenario] = [
    _scenario("owner-background", _chain(2, None)),
    _scenario("owner-foreground", _chain(2, "Foreground")),
    _scenario("owner-orphan", _chain(2, "Orphan")),
    _scenario("chain-3-background", _chain(3, "Background")),
    _scenario("chain-3-foreground", _chain(3, "Foreground")),
    _scenario("chain-3-orphan", _chain(3, "Orphan")),
    _scenario("chain-5-background", _chain(5, None)),
    _scenario("two-owners-one-deleted", _two_owners(False)),
    _scenario("two-owners-both-deleted", _two_owners(True)),
    _scenario("dangling-owner", _dangling(False)),
    _scenario("owner-with-other-uid", _dangling(True)),
    _scenario("blocked-foreground", _blocked_foreground, cleanup=_release_hold),
    _scenario("orphan-keeps-dependent", _orphan_with_finalizer),
    _scenario("pods-background", _pods(None)),
    _scenario("pods-foreground", _pods("Foreground")),
    _scenario("pods-orphan", _pods("Orphan")),
    _scenario("cluster-scoped-owner", _cluster_scoped_owner, cleanup=_cleanup_role),
    _scenario(
        "namespaced-owner-of-cluster-scoped", _namespaced_owner_of_cluster_scoped, cleanup=_cleanup_role
    ),
]
