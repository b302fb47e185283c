"""What Go's envtest suites found missing (issue 40) and strict decoding (issue 38), fast and on the
emulator alone: the same behaviours are judged against kube-apiserver by the `registry/*` and
`decoding/*` conformance scenarios and by Go's suites themselves (tests/gosuites/)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.envtest.server import godecode, gotime

MERGE = {"content-type": "application/merge-patch+json"}
CMS = "/api/v1/namespaces/default/configmaps"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


@pytest.fixture
async def bare() -> AsyncIterator[httpx2.AsyncClient]:
    async with Environment(bare=True) as env, httpx2.AsyncClient(base_url=env.url, timeout=30) as http:
        yield http


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    async with Environment() as env, httpx2.AsyncClient(base_url=env.url, timeout=30) as client:
        yield client


def deployment(**pod_spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "labels": {"app": "x"}},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {"containers": [{"name": "c", "image": "i"}], **pod_spec},
            },
        },
    }


async def test_bare_namespace_stays_terminating_until_finalized(bare: httpx2.AsyncClient) -> None:
    await bare.post("/api/v1/namespaces", json={"metadata": {"name": "n"}})
    await bare.post("/api/v1/namespaces/n/configmaps", json={"metadata": {"name": "kept"}})
    r = await bare.delete("/api/v1/namespaces/n")
    assert r.json()["status"]["phase"] == "Terminating" and r.json()["spec"]["finalizers"] == ["kubernetes"]
    assert (
        await bare.get("/api/v1/namespaces/n/configmaps/kept")
    ).status_code == 200  # no controller empties it
    assert (await bare.get("/api/v1/namespaces/n")).json()["status"]["phase"] == "Terminating"
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}, "spec": {"finalizers": []}}
    r = await bare.put("/api/v1/namespaces/n/finalize", json=body)
    assert r.status_code == 200 and r.json()["spec"] == {}
    assert (await bare.get("/api/v1/namespaces/n")).status_code == 404


async def test_finalize_is_put_only_and_validates_names(bare: httpx2.AsyncClient) -> None:
    await bare.post("/api/v1/namespaces", json={"metadata": {"name": "n"}})
    assert (await bare.get("/api/v1/namespaces/n/finalize")).status_code == 405
    body = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "n"},
        "spec": {"finalizers": ["nodomain"]},
    }
    r = await bare.put("/api/v1/namespaces/n/finalize", json=body)
    assert r.status_code == 422 and r.json()["details"]["causes"][0]["field"] == "spec.finalizers[0]"
    # a plain update keeps spec.finalizers: only /finalize changes them
    r = await bare.put("/api/v1/namespaces/n", json={**body, "spec": {"finalizers": []}})
    assert r.json()["spec"]["finalizers"] == ["kubernetes"]


async def test_bare_has_no_garbage_collector(bare: httpx2.AsyncClient) -> None:
    owner = (await bare.post(CMS, json={"metadata": {"name": "owner"}})).json()
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    await bare.post(CMS, json={"metadata": {"name": "dependent", "ownerReferences": [ref]}})
    await bare.delete(f"{CMS}/owner")
    assert (await bare.get(f"{CMS}/dependent")).status_code == 200


async def test_pod_template_needs_containers(http: httpx2.AsyncClient) -> None:
    body = deployment()
    body["spec"]["template"]["spec"]["containers"] = []
    r = await http.post(DEPLOYMENTS, json=body)
    assert r.status_code == 422
    assert (
        r.json()["message"] == 'Deployment.apps "d" is invalid: spec.template.spec.containers: Required value'
    )
    r = await http.post(DEPLOYMENTS, json=deployment(restartPolicy="Never"))
    assert r.json()["details"]["causes"][0]["field"] == "spec.template.spec.restartPolicy"


async def test_dry_run_create_naming_a_resource_version(http: httpx2.AsyncClient) -> None:
    cm = {"metadata": {"name": "c", "resourceVersion": "5"}}
    assert (await http.post(CMS, params={"dryRun": "All"}, json=cm)).status_code == 201
    bad = {"metadata": {"name": "c", "resourceVersion": "5", "labels": {"bad key!": "v"}}}
    assert (await http.post(CMS, params={"dryRun": "All"}, json=bad)).status_code == 422
    assert (await http.post(CMS, json=bad)).status_code == 422  # validation before storage's 500
    assert (await http.post(CMS, json=cm)).status_code == 500


async def test_delete_collection_dry_run_in_the_body(http: httpx2.AsyncClient) -> None:
    await http.post(CMS, json={"metadata": {"name": "a"}})
    r = await http.request(
        "DELETE", CMS, json={"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]}
    )
    assert [i["metadata"]["name"] for i in r.json()["items"]] == ["a"]
    assert (await http.get(f"{CMS}/a")).status_code == 200


async def test_deployment_status_patch_keeps_annotations_not_labels(http: httpx2.AsyncClient) -> None:
    await http.post(DEPLOYMENTS, json=deployment())
    change = {"metadata": {"annotations": {"note": "1"}, "labels": {"other": "1"}}, "status": {"replicas": 0}}
    r = await http.patch(f"{DEPLOYMENTS}/d/status", json=change, headers=MERGE)
    assert r.json()["metadata"]["annotations"] == {"note": "1"}
    assert r.json()["metadata"]["labels"] == {"app": "x"}


async def test_secret_type_is_immutable(http: httpx2.AsyncClient) -> None:
    await http.post("/api/v1/namespaces/default/secrets", json={"metadata": {"name": "s"}, "type": "Opaque"})
    r = await http.patch(
        "/api/v1/namespaces/default/secrets/s", json={"type": "example.com/other"}, headers=MERGE
    )
    assert r.status_code == 422
    assert (
        r.json()["details"]["causes"][0]["message"]
        == 'Invalid value: "example.com/other": field is immutable'
    )


async def test_strict_decoding(http: httpx2.AsyncClient) -> None:
    big = b'{"metadata":{"name":"c","generation":1234567890123456789012345678901234567890}}'
    r = await http.post(CMS, content=big, headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert r.json()["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number '
        "1234567890123456789012345678901234567890 into Go struct field "
        "ObjectMeta.metadata.generation of type int64"
    )
    pod = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": "eighty"}]}]},
    }
    r = await http.post("/api/v1/namespaces/default/pods", json=pod)
    assert r.json()["message"].endswith(
        "json: cannot unmarshal string into Go struct field "
        "ContainerPort.spec.containers.ports.containerPort of type int32"
    )
    yaml_body = b"metadata: {name: y}\nspec:\n  leaseDurationSeconds: 2.0\n"
    r = await http.post(
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        content=yaml_body,
        headers={"content-type": "application/yaml"},
    )
    assert r.status_code == 201 and r.json()["spec"]["leaseDurationSeconds"] == 2  # YAML's 2.0 is JSON's 2


def test_go_float_and_time_texts() -> None:
    assert [godecode.go_float(f) for f in (1.0, 1.5, 1e21, 1.5e-7, 1.2345678901234568e39)] == [
        "1",
        "1.5",
        "1e+21",
        "1.5e-7",
        "1.2345678901234568e+39",
    ]
    assert gotime.parse_error(gotime.RFC3339, "2024-01-01T00:00:00Z") is None
    assert (
        gotime.parse_error(gotime.RFC3339, "2024-13-01T00:00:00Z")
        == 'parsing time "2024-13-01T00:00:00Z": month out of range'
    )
    assert gotime.duration_error("1h30m") is None
    assert gotime.duration_error("soon") == 'time: invalid duration "soon"'
