"""Finalizers, deletionTimestamp, owner-reference garbage collection, namespace deletion."""

from __future__ import annotations

import httpx2

from .conftest import ATS, at, cm

CMS = "/api/v1/namespaces/default/configmaps"
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
    assert r.status_code == 200 and r.json()["kind"] == "At"  # custom resources return the object
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


async def test_namespace_deletion_deletes_contents(http: httpx2.AsyncClient) -> None:
    await http.post("/api/v1/namespaces", json={"metadata": {"name": "doomed"}})
    await http.post("/api/v1/namespaces/doomed/configmaps", json=cm("x"))
    held = cm("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await http.post("/api/v1/namespaces/doomed/configmaps", json=held)
    r = await http.delete("/api/v1/namespaces/doomed")
    assert r.status_code == 200 and r.json()["status"]["phase"] == "Terminating"
    assert (await http.get("/api/v1/namespaces/doomed/configmaps/x")).status_code == 404
    r = await http.post("/api/v1/namespaces/doomed/configmaps", json=cm("new"))
    assert r.status_code == 403 and r.json()["reason"] == "Forbidden"
    await http.patch(
        "/api/v1/namespaces/doomed/configmaps/held", json={"metadata": {"finalizers": None}}, headers=MERGE
    )
    assert (await http.get("/api/v1/namespaces/doomed")).status_code == 404


async def test_delete_collection(http: httpx2.AsyncClient) -> None:
    await http.post(CMS, json=cm("dc1", labels={"g": "1"}))
    await http.post(CMS, json=cm("dc2", labels={"g": "1"}))
    await http.post(CMS, json=cm("dc3"))
    r = await http.delete(CMS, params={"labelSelector": "g=1"})
    assert r.status_code == 200
    names = [i["metadata"]["name"] for i in (await http.get(CMS)).json()["items"]]
    assert names == ["dc3"]
