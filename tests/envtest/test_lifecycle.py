"""Finalizers, deletionTimestamp, owner-reference garbage collection, namespace deletion."""

from __future__ import annotations

import asyncio
import time

import httpx2

from pyscaffold_op.envtest import Environment
from pyscaffold_op.envtest.controllers.core import CoreControllers
from pyscaffold_op.envtest.storage.objectstore import Event, Store
from pyscaffold_op.testing import eventually

from .conftest import ATS, at, cm

CMS = "/api/v1/namespaces/default/configmaps"
NS_CMS = "/api/v1/namespaces/doomed/configmaps"
MERGE = {"content-type": "application/merge-patch+json"}


def owned(name: str, owner: dict, block: bool = False) -> dict:
    body = cm(name)
    body["metadata"]["ownerReferences"] = [
        {
            "apiVersion": owner["apiVersion"],
            "kind": owner["kind"],
            "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": block,
        }
    ]
    return body


async def test_finalizers_hold_deletion(http: httpx2.AsyncClient) -> None:
    body = at()
    body["metadata"]["finalizers"] = ["example.com/cleanup"]
    await http.post(ATS, json=body)
    r = await http.delete(f"{ATS}/example")
    assert r.status_code == 200  # the object, held by its finalizer
    held = r.json()
    assert held["metadata"]["deletionTimestamp"] and held["metadata"]["finalizers"] == ["example.com/cleanup"]
    assert (await http.get(f"{ATS}/example")).status_code == 200
    # no new finalizers while deleting
    r = await http.patch(
        f"{ATS}/example", json={"metadata": {"finalizers": ["example.com/cleanup", "x/y"]}}, headers=MERGE
    )
    assert r.status_code == 403 or r.status_code == 422
    r = await http.patch(f"{ATS}/example", json={"metadata": {"finalizers": None}}, headers=MERGE)
    assert r.status_code == 200
    assert (await http.get(f"{ATS}/example")).status_code == 404


async def test_background_gc(http: httpx2.AsyncClient) -> None:
    owner = (await http.post(ATS, json=at())).json()
    await http.post(CMS, json=owned("child", owner))
    r = await http.delete(f"{ATS}/example")
    # a custom resource gone at once is answered with the Status, as kube-apiserver v1.37 does
    # (the conformance corpus: custom/delete)
    assert r.status_code == 200 and r.json()["kind"] == "Status"
    assert r.json()["details"]["name"] == "example" and r.json()["details"]["kind"] == "ats"
    assert (await http.get(f"{CMS}/child")).status_code == 404


async def test_dangling_reference_removed_when_other_owner_lives(http: httpx2.AsyncClient) -> None:
    a = (await http.post(CMS, json=cm("owner-a"))).json()
    b = (await http.post(CMS, json=cm("owner-b"))).json()
    child = owned("shared", a)
    child["metadata"]["ownerReferences"].append(
        {
            **child["metadata"]["ownerReferences"][0],
            "name": "owner-b",
            "uid": b["metadata"]["uid"],
            "controller": False,
        }
    )
    await http.post(CMS, json=child)
    await http.delete(f"{CMS}/owner-a")
    refs = (await http.get(f"{CMS}/shared")).json()["metadata"]["ownerReferences"]
    assert [r["name"] for r in refs] == ["owner-b"]


async def test_foreground_deletion(http: httpx2.AsyncClient) -> None:
    owner = (await http.post(ATS, json=at())).json()
    child = owned("fg-child", owner, block=True)
    child["metadata"]["finalizers"] = ["example.com/hold"]
    await http.post(CMS, json=child)
    r = await http.request(
        "DELETE", f"{ATS}/example", json={"propagationPolicy": "Foreground", "orphanDependents": False}
    )
    assert r.status_code == 422  # the real server refuses both
    r = await http.delete(f"{ATS}/example", params={"propagationPolicy": "Foreground"})
    assert r.status_code == 200
    assert "foregroundDeletion" in r.json()["metadata"]["finalizers"]
    # the child is being deleted and holds the owner
    kid = (await http.get(f"{CMS}/fg-child")).json()
    assert kid["metadata"]["deletionTimestamp"]
    assert (await http.get(f"{ATS}/example")).status_code == 200
    await http.patch(f"{CMS}/fg-child", json={"metadata": {"finalizers": None}}, headers=MERGE)
    assert (await http.get(f"{CMS}/fg-child")).status_code == 404
    assert (await http.get(f"{ATS}/example")).status_code == 404


async def test_orphan_deletion(http: httpx2.AsyncClient) -> None:
    owner = (await http.post(ATS, json=at())).json()
    await http.post(CMS, json=owned("orphan-child", owner))
    r = await http.request(
        "DELETE",
        f"{ATS}/example",
        json={"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan"},
    )
    assert r.status_code in (200, 202)
    assert (await http.get(f"{ATS}/example")).status_code == 404
    kid = (await http.get(f"{CMS}/orphan-child")).json()
    assert "ownerReferences" not in kid["metadata"]


async def test_delete_preconditions(http: httpx2.AsyncClient) -> None:
    await http.post(CMS, json=cm("pre"))
    r = await http.request("DELETE", f"{CMS}/pre", json={"preconditions": {"uid": "nope"}})
    assert r.status_code == 409
    assert r.json()["message"].startswith(
        'Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (nope) does not match'
    )
    r = await http.request("DELETE", f"{CMS}/pre", json={"preconditions": {"resourceVersion": "1"}})
    assert r.status_code == 409
    assert (await http.delete(f"{CMS}/pre")).status_code == 200


async def test_namespace_deletion_is_asynchronous(http: httpx2.AsyncClient) -> None:
    await http.post("/api/v1/namespaces", json={"metadata": {"name": "doomed"}})
    await http.post("/api/v1/namespaces/doomed/configmaps", json=cm("x"))
    held = cm("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await http.post("/api/v1/namespaces/doomed/configmaps", json=held)
    r = await http.delete("/api/v1/namespaces/doomed")
    assert r.status_code == 200
    ns = r.json()
    assert ns["kind"] == "Namespace" and ns["status"]["phase"] == "Terminating"
    assert ns["metadata"]["deletionTimestamp"] and ns["spec"]["finalizers"] == ["kubernetes"]
    # the real server answers before the namespace controller runs: the contents are still there
    x = f"{NS_CMS}/x"
    assert (await http.get(x)).status_code == 200
    r = await http.patch(x, json={"data": {"a": "2"}}, headers=MERGE)  # existing objects still change
    assert r.status_code == 200 and r.json()["data"] == {"a": "2"}
    again = await http.delete("/api/v1/namespaces/doomed")  # deleting again changes nothing
    assert again.status_code == 200
    assert again.json()["metadata"]["resourceVersion"] == ns["metadata"]["resourceVersion"]

    async def x_gone() -> bool:
        return (await http.get(x)).status_code == 404

    await eventually(x_gone)
    # a finalizer holds its object, and the object holds the namespace
    got = (await http.get(f"{NS_CMS}/held")).json()
    assert got["metadata"]["deletionTimestamp"]
    assert (await http.get("/api/v1/namespaces/doomed")).json()["status"]["phase"] == "Terminating"
    r = await http.get("/api/v1/namespaces", params={"fieldSelector": "status.phase=Terminating"})
    assert [i["metadata"]["name"] for i in r.json()["items"]] == ["doomed"]
    await http.patch(f"{NS_CMS}/held", json={"metadata": {"finalizers": None}}, headers=MERGE)

    async def ns_gone() -> bool:
        return (await http.get("/api/v1/namespaces/doomed")).status_code == 404

    await eventually(ns_gone)
    # a namespace of the same name can be created again, empty
    assert (await http.post("/api/v1/namespaces", json={"metadata": {"name": "doomed"}})).status_code == 201
    assert (await http.get(NS_CMS)).json()["items"] == []


async def test_create_in_terminating_namespace_is_forbidden(http: httpx2.AsyncClient) -> None:
    await http.post("/api/v1/namespaces", json={"metadata": {"name": "closing"}})
    held = cm("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await http.post("/api/v1/namespaces/closing/configmaps", json=held)
    await http.delete("/api/v1/namespaces/closing")
    r = await http.post("/api/v1/namespaces/closing/configmaps", json=cm("new"))
    assert r.status_code == 403
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'configmaps "new" is forbidden: unable to create new content in namespace closing '
        "because it is being terminated",
        "reason": "Forbidden",
        "details": {
            "name": "new",
            "kind": "configmaps",
            "causes": [
                {
                    "reason": "NamespaceTerminating",
                    "message": "namespace closing is being terminated",
                    "field": "metadata.namespace",
                }
            ],
        },
        "code": 403,
    }
    # admission sees the generateName (the name is generated later), and the group
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"generateName": "web-"},
        "spec": {
            "selector": {"matchLabels": {"app": "w"}},
            "template": {
                "metadata": {"labels": {"app": "w"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    r = await http.post("/apis/apps/v1/namespaces/closing/deployments", json=dep)
    assert r.status_code == 403
    assert r.json()["message"].startswith('deployments.apps "web-" is forbidden: unable to create new')
    # after the controller has emptied it, the finalizer still holds it: creates stay forbidden

    async def emptied() -> bool:
        held = (await http.get("/api/v1/namespaces/closing/configmaps/held")).json()
        return bool(held["metadata"].get("deletionTimestamp"))

    await eventually(emptied)
    r = await http.post("/api/v1/namespaces/closing/configmaps", json=cm("late"))
    assert r.status_code == 403
    # reading, updating and deleting what is there still work
    assert (await http.get("/api/v1/namespaces/closing/configmaps/held")).status_code == 200
    r = await http.patch(
        "/api/v1/namespaces/closing/configmaps/held", json={"metadata": {"finalizers": None}}, headers=MERGE
    )
    assert r.status_code == 200

    async def gone() -> bool:
        return (await http.get("/api/v1/namespaces/closing")).status_code == 404

    await eventually(gone)


async def test_namespace_deletion_events(env: Environment, http: httpx2.AsyncClient) -> None:
    await http.post("/api/v1/namespaces", json={"metadata": {"name": "watched"}})
    await http.post("/api/v1/namespaces/watched/configmaps", json=cm("c"))
    seen: list[tuple[str, str, str]] = []

    def record(ev: Event) -> None:
        meta = ev.obj["metadata"]
        if meta["name"] == "watched" or meta.get("namespace") == "watched":
            seen.append((ev.type, ev.gr[1], ev.obj.get("status", {}).get("phase", "")))

    env.store.on_change.append(record)
    await http.delete("/api/v1/namespaces/watched")
    assert seen == [("MODIFIED", "namespaces", "Terminating")]

    async def deleted() -> bool:
        return seen[-1][0] == "DELETED"

    await eventually(deleted)
    assert seen == [
        ("MODIFIED", "namespaces", "Terminating"),
        ("DELETED", "configmaps", ""),
        ("MODIFIED", "namespaces", "Terminating"),  # the deletion conditions (UpdateStatus)
        ("MODIFIED", "namespaces", "Terminating"),  # spec.finalizers emptied (PUT .../finalize)
        ("DELETED", "namespaces", "Terminating"),
    ]


async def test_initial_namespaces_may_not_be_deleted(http: httpx2.AsyncClient) -> None:
    for name in ("default", "kube-system", "kube-public"):
        r = await http.delete(f"/api/v1/namespaces/{name}")
        assert r.status_code == 403
        assert r.json()["message"] == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
    names = [i["metadata"]["name"] for i in (await http.get("/api/v1/namespaces")).json()["items"]]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]


async def test_namespace_controller_waits_for_deletes() -> None:
    """DELETEs keep coming (kubectl delete -f: the Namespace first, then its contents): the controller
    waits until they stop, at most `namespace_deletion_max_delay`."""
    async with (
        Environment(namespace_deletion_delay=1.0, namespace_deletion_max_delay=10.0) as env,
        httpx2.AsyncClient(base_url=env.url, timeout=10) as http,
    ):
        await http.post("/api/v1/namespaces", json={"metadata": {"name": "slow"}})
        for i in range(12):
            await http.post("/api/v1/namespaces/slow/configmaps", json=cm(f"c{i}"))
        t0 = time.monotonic()
        assert (await http.delete("/api/v1/namespaces/slow")).status_code == 200
        for i in range(12):  # 1.2 s of deletes, each within the 1 s quiet period of the last
            await asyncio.sleep(0.1)  # the pacing is what is tested: writes inside the quiet period
            assert (await http.delete(f"/api/v1/namespaces/slow/configmaps/c{i}")).status_code == 200
        assert time.monotonic() - t0 > 1.0

        async def gone() -> bool:
            return (await http.get("/api/v1/namespaces/slow")).status_code == 404

        await eventually(gone)
        assert env.store.terminating_namespaces == []

    async with (
        Environment(namespace_deletion_delay=0.3, namespace_deletion_max_delay=0.6) as env,
        httpx2.AsyncClient(base_url=env.url, timeout=10) as http,
    ):
        await http.post("/api/v1/namespaces", json={"metadata": {"name": "busy"}})
        await http.post("/api/v1/namespaces/busy/configmaps", json=cm("keep"))
        await http.delete("/api/v1/namespaces/busy")
        t0 = time.monotonic()
        while (await http.get("/api/v1/namespaces/busy")).status_code == 200:
            assert time.monotonic() - t0 < 3, "the deadline did not bound the wait"
            await http.delete(CMS + "/nothing")  # 404, but a DELETE: postpones
            await asyncio.sleep(0.05)  # the pacing is what is tested: a steady stream of writes
        assert time.monotonic() - t0 >= 0.2


def test_store_without_event_loop_empties_namespaces_at_once() -> None:
    store = Store()
    CoreControllers(store)
    ns_info = store.info("", "v1", "namespaces")
    cm_info = store.info("", "v1", "configmaps")
    store.create(ns_info, "", {"metadata": {"name": "sync"}})
    store.create(cm_info, "sync", cm("c"))
    _obj, gone = store.delete(ns_info, "", "sync")
    assert gone and store.find(("", "namespaces"), "", "sync") is None
    assert store.find(("", "configmaps"), "sync", "c") is None


async def test_delete_collection(http: httpx2.AsyncClient) -> None:
    await http.post(CMS, json=cm("dc1", labels={"g": "1"}))
    await http.post(CMS, json=cm("dc2", labels={"g": "1"}))
    await http.post(CMS, json=cm("dc3"))
    r = await http.delete(CMS, params={"labelSelector": "g=1"})
    assert r.status_code == 200
    names = [i["metadata"]["name"] for i in (await http.get(CMS)).json()["items"]]
    assert names == ["dc3"]


async def test_a_simulated_cluster_collects_dependents_of_owners_that_never_were() -> None:
    """The real collector looks a virtual owner up by kind and name: a dependent whose owners are all
    missing (or another object's uid under that name) is deleted, one that still has an owner loses
    the dangling reference. A bare API server (no controller-manager) keeps them all."""

    def ref(name: str, uid: str) -> dict:
        return {"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": uid}

    def dependent(name: str, *refs: dict) -> dict:
        body = cm(name)
        body["metadata"]["ownerReferences"] = list(refs)
        return body

    async with Environment(workloads=True) as env, httpx2.AsyncClient(base_url=env.url) as http:
        owner = (await http.post(CMS, json=cm("owner"))).json()
        assert (await http.post(CMS, json=dependent("orphan", ref("gone", "no-such-uid")))).status_code == 201
        await http.post(CMS, json=dependent("wrong-uid", ref("owner", "not-the-owners-uid")))
        await http.post(
            CMS, json=dependent("half", ref("owner", owner["metadata"]["uid"]), ref("gone", "no-such-uid"))
        )

        async def collected() -> bool:
            names = {c["metadata"]["name"] for c in (await http.get(CMS)).json()["items"]}
            return "orphan" not in names and "wrong-uid" not in names

        await eventually(collected)
        half = (await http.get(f"{CMS}/half")).json()
        assert [r["name"] for r in half["metadata"]["ownerReferences"]] == ["owner"]
        assert (await http.get(f"{CMS}/owner")).status_code == 200
    async with Environment() as env, httpx2.AsyncClient(base_url=env.url) as http:
        await http.post(CMS, json=dependent("orphan", ref("gone", "no-such-uid")))
        await asyncio.sleep(0.1)
        assert (await http.get(f"{CMS}/orphan")).status_code == 200


async def test_a_namespace_held_by_content_reports_it_in_its_conditions(http: httpx2.AsyncClient) -> None:
    """The namespace deleter's conditions: what remains, by resource, and the finalizers holding it
    (the real messages, `configmaps.` with the core group's empty name)."""
    await http.post("/api/v1/namespaces", json={"metadata": {"name": "held"}})
    body = cm("kept")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    await http.post("/api/v1/namespaces/held/configmaps", json=body)
    await http.delete("/api/v1/namespaces/held")

    async def reported() -> dict:
        ns = (await http.get("/api/v1/namespaces/held")).json()
        conds = {c["type"]: c for c in ns["status"].get("conditions") or []}
        assert conds.get("NamespaceContentRemaining", {}).get("status") == "True", conds
        return conds

    conds = await eventually(reported)
    assert [(t, c["status"], c["reason"], c["message"]) for t, c in conds.items()] == [
        (
            "NamespaceDeletionDiscoveryFailure",
            "False",
            "ResourcesDiscovered",
            "All resources successfully discovered",
        ),
        (
            "NamespaceDeletionGroupVersionParsingFailure",
            "False",
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed",
        ),
        (
            "NamespaceDeletionContentFailure",
            "False",
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization",
        ),
        (
            "NamespaceContentRemaining",
            "True",
            "SomeResourcesRemain",
            "Some resources are remaining: configmaps. has 1 resource instances",
        ),
        (
            "NamespaceFinalizersRemaining",
            "True",
            "SomeFinalizersRemain",
            "Some content in the namespace has finalizers remaining: "
            "example.com/hold in 1 resource instances",
        ),
    ]
    await http.patch(
        "/api/v1/namespaces/held/configmaps/kept", json={"metadata": {"finalizers": None}}, headers=MERGE
    )

    async def gone() -> bool:
        return (await http.get("/api/v1/namespaces/held")).status_code == 404

    await eventually(gone)
