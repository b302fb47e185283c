"""CRUD semantics through the real HTTP protocol: resourceVersion, uid, generation, status codes."""

from __future__ import annotations

import httpx2

from pyscaffold_op.envtest import Environment
from tests.envtest.lightkube_client import lightkube_client

from .conftest import ATS, at, cm

CMS = "/api/v1/namespaces/default/configmaps"


async def test_default_namespaces_exist(http: httpx2.AsyncClient) -> None:
    r = await http.get("/api/v1/namespaces")
    names = [i["metadata"]["name"] for i in r.json()["items"]]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
    assert r.json()["kind"] == "NamespaceList"
    assert "kind" not in r.json()["items"][0]  # typed lists omit item kinds, as the real server does


async def test_create_get_update_delete(http: httpx2.AsyncClient) -> None:
    r = await http.post(CMS, json=cm("a", x="1"))
    assert r.status_code == 201
    created = r.json()
    meta = created["metadata"]
    assert meta["uid"] and meta["resourceVersion"].isdigit() and meta["creationTimestamp"].endswith("Z")
    assert meta["namespace"] == "default" and "generation" not in meta
    got = (await http.get(f"{CMS}/a")).json()
    assert got["metadata"]["resourceVersion"] == meta["resourceVersion"]
    got["data"]["x"] = "2"
    r = await http.put(f"{CMS}/a", json=got)
    assert r.status_code == 200
    assert int(r.json()["metadata"]["resourceVersion"]) > int(meta["resourceVersion"])
    # stale resourceVersion -> 409 Conflict
    r = await http.put(f"{CMS}/a", json=got)
    assert r.status_code == 409
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Operation cannot be fulfilled on configmaps "a": the object has been modified; please '
        "apply your changes to the latest version and try again",
        "reason": "Conflict",
        "details": {"name": "a", "kind": "configmaps"},
        "code": 409,
    }
    r = await http.delete(f"{CMS}/a")
    assert r.status_code == 200
    assert r.json()["status"] == "Success" and r.json()["details"]["uid"] == meta["uid"]
    r = await http.get(f"{CMS}/a")
    assert r.status_code == 404
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'configmaps "a" not found',
        "reason": "NotFound",
        "details": {"name": "a", "kind": "configmaps"},
        "code": 404,
    }


async def test_already_exists_and_generate_name(http: httpx2.AsyncClient) -> None:
    await http.post(CMS, json=cm("dup"))
    r = await http.post(CMS, json=cm("dup"))
    assert r.status_code == 409
    assert r.json()["reason"] == "AlreadyExists"
    assert r.json()["message"] == 'configmaps "dup" already exists'
    deployment = {
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    }
    r = await http.post(
        "/apis/apps/v1/namespaces/default/deployments",
        json=deployment,
    )
    r = await http.post(
        "/apis/apps/v1/namespaces/default/deployments",
        json=deployment,
    )
    assert r.json()["details"] == {"name": "d", "group": "apps", "kind": "deployments"}
    assert r.json()["message"] == 'deployments.apps "d" already exists'
    r = await http.post(CMS, json={"metadata": {"generateName": "gen-"}})
    assert r.status_code == 201
    name = r.json()["metadata"]["name"]
    assert name.startswith("gen-") and len(name) == 9


async def test_unconditional_put_and_noop_write(http: httpx2.AsyncClient) -> None:
    created = (await http.post(CMS, json=cm("u", x="1"))).json()
    body = cm("u", x="2")  # no resourceVersion: built-ins allow unconditional updates
    r = await http.put(f"{CMS}/u", json=body)
    assert r.status_code == 200 and r.json()["data"] == {"x": "2"}
    same = await http.put(f"{CMS}/u", json=r.json())
    assert same.json()["metadata"]["resourceVersion"] == r.json()["metadata"]["resourceVersion"]
    assert created["metadata"]["uid"] == same.json()["metadata"]["uid"]
    assert (await http.put(f"{CMS}/missing", json=cm("missing"))).status_code == 404


async def test_custom_resource_generation_and_status_split(http: httpx2.AsyncClient) -> None:
    r = await http.post(ATS, json=at())
    assert r.status_code == 201
    obj = r.json()
    assert obj["metadata"]["generation"] == 1
    assert obj["spec"]["replicas"] == 1 and obj["spec"]["mode"] == "Once"  # defaulted
    # metadata-only change: no generation bump
    obj["metadata"]["labels"] = {"a": "b"}
    obj = (await http.put(f"{ATS}/example", json=obj)).json()
    assert obj["metadata"]["generation"] == 1
    # status on the main resource is ignored
    obj["status"] = {"phase": "DONE"}
    obj["spec"]["command"] = "echo changed"
    obj = (await http.put(f"{ATS}/example", json=obj)).json()
    assert obj["metadata"]["generation"] == 2 and "status" not in obj
    # spec on /status is ignored
    obj["status"] = {"phase": "RUNNING"}
    obj["spec"]["command"] = "ignored"
    r = await http.put(f"{ATS}/example/status", json=obj)
    assert r.status_code == 200
    assert r.json()["status"] == {"phase": "RUNNING"}
    assert r.json()["spec"]["command"] == "echo changed" and r.json()["metadata"]["generation"] == 2
    # custom resources need a resourceVersion on update
    r = await http.put(f"{ATS}/example", json=at())
    assert r.status_code == 422
    assert r.json()["details"]["causes"][0]["field"] == "metadata.resourceVersion"


async def test_cluster_scoped_custom_resource(http: httpx2.AsyncClient) -> None:
    base = "/apis/example.com/v1/clusterthings"
    r = await http.post(
        base,
        json={
            "apiVersion": "example.com/v1",
            "kind": "ClusterThing",
            "metadata": {"name": "c1"},
            "spec": {"size": 3},
        },
    )
    assert r.status_code == 201 and "namespace" not in r.json()["metadata"]
    assert (await http.get(f"{base}/c1")).json()["spec"] == {"size": 3}
    assert (await http.get("/apis/example.com/v1/namespaces/default/clusterthings")).status_code == 404


async def test_namespace_must_exist(http: httpx2.AsyncClient) -> None:
    r = await http.post("/api/v1/namespaces/nope/configmaps", json=cm("x"))
    assert r.status_code == 404
    assert r.json()["message"] == 'namespaces "nope" not found'


async def test_resource_version_on_create(http: httpx2.AsyncClient) -> None:
    body = cm("rv")
    body["metadata"]["resourceVersion"] = "5"
    r = await http.post(CMS, json=body)
    assert r.status_code == 500
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "resourceVersion should not be set on objects to be created",
        "code": 500,
    }


async def test_deletion_bumps_generation(http: httpx2.AsyncClient) -> None:
    body = at()
    body["metadata"]["finalizers"] = ["x/y"]
    await http.post(ATS, json=body)
    held = (await http.delete(f"{ATS}/example")).json()
    assert held["metadata"]["generation"] == 2 and held["metadata"]["deletionGracePeriodSeconds"] == 0


async def test_dry_run_does_not_store(http: httpx2.AsyncClient) -> None:
    r = await http.post(CMS, params={"dryRun": "All"}, json=cm("dry"))
    assert r.status_code == 201
    assert (await http.get(f"{CMS}/dry")).status_code == 404


async def test_lightkube_in_process_and_http(env: Environment) -> None:
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ConfigMap

    for in_process in (True, False):
        client = lightkube_client(env, in_process=in_process)
        name = f"lk-{int(in_process)}"
        created = await client.create(ConfigMap(metadata=ObjectMeta(name=name), data={"a": "1"}))
        assert created.metadata.uid
        got = await client.get(ConfigMap, name)
        assert got.data == {"a": "1"}
        await client.delete(ConfigMap, name)
        await client.close()


async def test_internal_error_is_a_500_status(
    http: httpx2.AsyncClient, env: Environment, monkeypatch: object
) -> None:
    def boom(*a: object, **k: object) -> None:
        raise RuntimeError("boom")

    env.store.get = boom  # type: ignore[method-assign]
    r = await http.get(f"{CMS}/x")
    assert r.status_code == 500
    assert r.json()["reason"] == "InternalError" and "boom" in r.json()["message"]
