"""PATCH: merge, JSON patch, strategic merge, server-side apply with managers, conflicts and force."""

from __future__ import annotations

import httpx2
import yaml

from .conftest import ATS, at, cm

CMS = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"
MERGE = {"content-type": "application/merge-patch+json"}
JSONP = {"content-type": "application/json-patch+json"}
SMP = {"content-type": "application/strategic-merge-patch+json"}
APPLY = {"content-type": "application/apply-patch+yaml"}


def pod(name: str = "p") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [
                {"name": "a", "image": "busybox:1", "env": [{"name": "X", "value": "1"}]},
                {"name": "b", "image": "busybox:1"},
            ]
        },
    }


async def test_merge_patch(http: httpx2.AsyncClient) -> None:
    await http.post(CMS, json=cm("m", a="1", b="2"))
    r = await http.patch(
        f"{CMS}/m", json={"data": {"a": None, "c": "3"}, "metadata": {"labels": {"x": "y"}}}, headers=MERGE
    )
    assert r.status_code == 200
    assert r.json()["data"] == {"b": "2", "c": "3"} and r.json()["metadata"]["labels"] == {"x": "y"}
    # a resourceVersion in the patch is a precondition
    r = await http.patch(
        f"{CMS}/m", json={"metadata": {"resourceVersion": "1"}, "data": {"a": "1"}}, headers=MERGE
    )
    assert r.status_code == 409
    assert (await http.patch(f"{CMS}/nope", json={}, headers=MERGE)).status_code == 404


async def test_json_patch_with_test(http: httpx2.AsyncClient) -> None:
    await http.post(CMS, json=cm("j", a="1"))
    ok = [{"op": "test", "path": "/data/a", "value": "1"}, {"op": "replace", "path": "/data/a", "value": "2"}]
    r = await http.patch(f"{CMS}/j", json=ok, headers=JSONP)
    assert r.status_code == 200 and r.json()["data"] == {"a": "2"}
    r = await http.patch(f"{CMS}/j", json=ok, headers=JSONP)  # test fails now
    assert r.status_code == 422 and r.json()["reason"] == "Invalid"
    r = await http.patch(f"{CMS}/j", json=[{"op": "remove", "path": "/data/zzz"}], headers=JSONP)
    assert r.status_code == 422


async def test_strategic_merge_containers_by_name(http: httpx2.AsyncClient) -> None:
    await http.post(PODS, json=pod())
    r = await http.patch(
        f"{PODS}/p", json={"spec": {"containers": [{"name": "b", "image": "busybox:2"}]}}, headers=SMP
    )
    assert r.status_code == 200
    cs = r.json()["spec"]["containers"]
    assert [c["name"] for c in cs] == ["a", "b"] and cs[1]["image"] == "busybox:2"
    assert cs[0]["env"] == [{"name": "X", "value": "1"}]
    r = await http.patch(f"{PODS}/p", json={"metadata": {"finalizers": ["x/y"]}}, headers=SMP)
    r = await http.patch(f"{PODS}/p", json={"metadata": {"finalizers": ["x/z"]}}, headers=SMP)
    assert r.json()["metadata"]["finalizers"] == ["x/z", "x/y"]  # new items first, as the server does
    r = await http.patch(
        f"{PODS}/p", json={"metadata": {"$deleteFromPrimitiveList/finalizers": ["x/y", "x/z"]}}, headers=SMP
    )
    assert "finalizers" not in r.json()["metadata"] or r.json()["metadata"]["finalizers"] == []
    # pod spec is immutable apart from images
    r = await http.patch(f"{PODS}/p", json={"spec": {"restartPolicy": "Never"}}, headers=SMP)
    assert r.status_code == 422


async def test_status_patch_on_subresource(http: httpx2.AsyncClient) -> None:
    await http.post(ATS, json=at())
    r = await http.patch(
        f"{ATS}/example/status",
        json={"status": {"phase": "RUNNING"}, "spec": {"command": "x"}},
        headers=MERGE,
    )
    assert r.json()["status"] == {"phase": "RUNNING"} and r.json()["spec"]["command"] == "echo hi"
    r = await http.patch(f"{ATS}/example/status", json={"status": {"phase": "BOGUS"}}, headers=MERGE)
    assert r.status_code == 422
    cause = r.json()["details"]["causes"][0]
    assert cause == {
        "reason": "FieldValueNotSupported",
        "field": "status.phase",
        "message": 'Unsupported value: "BOGUS": supported values: "PENDING", "RUNNING", "DONE"',
    }


async def test_server_side_apply(http: httpx2.AsyncClient) -> None:
    body = yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "s", "labels": {"l": "1"}},
            "data": {"a": "1", "b": "2"},
        }
    )
    r = await http.patch(f"{CMS}/s", params={"fieldManager": "alice"}, content=body, headers=APPLY)
    assert r.status_code == 201
    mf = r.json()["metadata"]["managedFields"]
    assert mf[0]["manager"] == "alice" and mf[0]["operation"] == "Apply"
    assert mf[0]["fieldsV1"] == {"f:data": {"f:a": {}, "f:b": {}}, "f:metadata": {"f:labels": {"f:l": {}}}}
    # bob changes a field alice owns -> conflict
    bob = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "s"}, "data": {"a": "bob"}}
    r = await http.patch(f"{CMS}/s", params={"fieldManager": "bob"}, json=bob, headers=APPLY)
    assert r.status_code == 409
    st = r.json()
    assert st["reason"] == "Conflict"
    # an Apply manager is named alone (kube-apiserver's printManager; Update managers add "using v1")
    assert st["message"] == 'Apply failed with 1 conflict: conflict with "alice": .data.a'
    assert st["details"] == {
        "causes": [{"reason": "FieldManagerConflict", "message": 'conflict with "alice"', "field": ".data.a"}]
    }
    # same value is shared ownership, not a conflict
    same = {**bob, "data": {"b": "2"}}
    assert (
        await http.patch(f"{CMS}/s", params={"fieldManager": "bob"}, json=same, headers=APPLY)
    ).status_code == 200
    # force takes ownership
    r = await http.patch(f"{CMS}/s", params={"fieldManager": "bob", "force": "true"}, json=bob, headers=APPLY)
    assert r.status_code == 200 and r.json()["data"]["a"] == "bob"
    # alice stops applying label and b: label removed (only hers), b kept (bob shares it? no: bob dropped b)
    alice2 = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "s"}, "data": {"b": "2"}}
    r = await http.patch(f"{CMS}/s", params={"fieldManager": "alice"}, json=alice2, headers=APPLY)
    assert r.status_code == 200
    assert "labels" not in r.json()["metadata"] or r.json()["metadata"]["labels"] == {}
    assert r.json()["data"] == {"a": "bob", "b": "2"}
    # an Update manager owns what it changed
    r = await http.patch(
        f"{CMS}/s", params={"fieldManager": "editor"}, json={"data": {"b": "3"}}, headers=MERGE
    )
    r = await http.patch(f"{CMS}/s", params={"fieldManager": "alice"}, json=alice2, headers=APPLY)
    assert r.status_code == 409 and 'conflict with "editor"' in r.json()["message"]
    # missing fieldManager
    r = await http.patch(f"{CMS}/s", json=alice2, headers=APPLY)
    assert r.status_code == 422
    assert r.json()["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    )


async def test_apply_custom_resource_lists(http: httpx2.AsyncClient) -> None:
    def applied(**spec: object) -> dict:
        return at(**spec)

    r = await http.patch(
        f"{ATS}/example",
        params={"fieldManager": "a"},
        headers=APPLY,
        json=applied(env=[{"name": "A", "value": "1"}], tags=["x"]),
    )
    assert r.status_code == 201
    r = await http.patch(
        f"{ATS}/example",
        params={"fieldManager": "b"},
        headers=APPLY,
        json={
            "apiVersion": at()["apiVersion"],
            "kind": "At",
            "metadata": {"name": "example"},
            "spec": {"env": [{"name": "B", "value": "2"}], "tags": ["y"]},
        },
    )
    assert r.status_code == 200
    spec = r.json()["spec"]
    assert spec["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]  # map list merged by key
    assert spec["tags"] == ["x", "y"]  # set merged
    # status apply on the subresource
    r = await http.patch(
        f"{ATS}/example/status",
        params={"fieldManager": "ctrl"},
        headers=APPLY,
        json={
            "apiVersion": at()["apiVersion"],
            "kind": "At",
            "metadata": {"name": "example"},
            "status": {"phase": "DONE"},
        },
    )
    assert r.status_code == 200 and r.json()["status"] == {"phase": "DONE"}


async def test_a_patch_keeps_what_the_served_version_declares(http: httpx2.AsyncClient) -> None:
    """Found merging two rounds: a labels patch of an autoscaling/v2 HPA judged its `metrics` by v1's
    type, and pruning them reached the stored object through the subtrees the patch result shares."""
    hpas = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}
    body = {"metadata": {"name": "h"}, "spec": {"scaleTargetRef": target, "maxReplicas": 3}}
    created = (await http.post(hpas, json=body)).json()
    assert created["spec"]["metrics"]  # defaulted: 80% CPU
    r = await http.patch(f"{hpas}/h", json={"metadata": {"labels": {"u": "1"}}}, headers=MERGE)
    assert r.status_code == 200 and "warning" not in r.headers
    assert r.json()["spec"] == created["spec"] and r.json()["status"] == created["status"]
    assert r.json()["metadata"]["generation"] == 1
    # an unknown field sent in a patch is dropped from the result only
    r = await http.patch(f"{hpas}/h", json={"spec": {"junk": 1}}, headers=MERGE)
    assert "junk" not in r.json()["spec"] and r.json()["spec"]["metrics"] == created["spec"]["metrics"]
