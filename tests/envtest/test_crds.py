"""CRDs: installation (files and API), discovery, schema validation/defaulting/pruning, subresources,
printer columns, versions, removal."""

from __future__ import annotations

import asyncio
import copy

import httpx2
import yaml

from pyscaffold_op.envtest import Environment

from .conftest import AT_API, ATS, CRDS, at

TABLE = {"accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.test.pyop.io"},
    "spec": {
        "group": "test.pyop.io",
        "scope": "Namespaced",
        "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {"size": {"type": "integer", "maximum": 10}},
                            }
                        },
                    }
                },
            }
        ],
    },
}


async def test_discovery(http: httpx2.AsyncClient) -> None:
    assert (await http.get("/version")).json()["major"] == "1"
    api = (await http.get("/api")).json()
    assert api["kind"] == "APIVersions" and api["versions"] == ["v1"]
    groups = {g["name"]: g for g in (await http.get("/apis")).json()["groups"]}
    for g in (
        "apps",
        "batch",
        "coordination.k8s.io",
        "events.k8s.io",
        "apiextensions.k8s.io",
        "cnat.programming-kubernetes.info",
        "example.com",
    ):
        assert g in groups, g
    cnat = groups["cnat.programming-kubernetes.info"]
    assert [v["version"] for v in cnat["versions"]] == ["v1beta1", "v1alpha1"]
    assert cnat["preferredVersion"]["version"] == "v1beta1"
    res = {r["name"]: r for r in (await http.get(AT_API)).json()["resources"]}
    assert res["ats"]["kind"] == "At" and res["ats"]["namespaced"] is True
    assert res["ats"]["shortNames"] == ["at"] and "watch" in res["ats"]["verbs"]
    assert "ats/status" in res and "ats/scale" in res
    core = {r["name"] for r in (await http.get("/api/v1")).json()["resources"]}
    assert {
        "pods",
        "pods/status",
        "services",
        "configmaps",
        "secrets",
        "events",
        "namespaces",
        "serviceaccounts",
    } <= core
    apps = {r["name"] for r in (await http.get("/apis/apps/v1")).json()["resources"]}
    assert {"deployments", "statefulsets", "replicasets", "deployments/scale"} <= apps
    assert (await http.get("/apis/apps")).json()["preferredVersion"]["groupVersion"] == "apps/v1"


async def test_validation_errors_name_fields(http: httpx2.AsyncClient) -> None:
    bad = at(schedule="tomorrow", command="", replicas=-1, mode="Sometimes")
    del bad["spec"]["command"]
    r = await http.post(ATS, json=bad)
    assert r.status_code == 422
    body = r.json()
    assert body["reason"] == "Invalid"
    assert body["details"]["group"] == "cnat.programming-kubernetes.info" and body["details"]["kind"] == "At"
    causes = {c["field"]: c for c in body["details"]["causes"]}
    assert causes["spec.command"] == {
        "reason": "FieldValueRequired",
        "message": "Required value",
        "field": "spec.command",
    }
    assert causes["spec.schedule"]["message"] == (
        'Invalid value: "tomorrow": spec.schedule in body must be of type date-time: "tomorrow"'
    )
    assert causes["spec.replicas"]["message"] == (
        "Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
    )
    assert causes["spec.mode"]["reason"] == "FieldValueNotSupported"
    assert body["message"].startswith('At.cnat.programming-kubernetes.info "example" is invalid: [')
    r = await http.post(ATS, json=at(replicas="three"))
    assert r.json()["details"]["causes"][0]["message"] == (
        'Invalid value: "string": spec.replicas in body must be of type integer: "string"'
    )


async def test_pruning_and_defaulting(http: httpx2.AsyncClient) -> None:
    body = at(unknown="x", extra={"anything": {"goes": 1}})
    body["metadata"]["bogusMeta"] = 1
    body["topLevel"] = True
    r = await http.post(ATS, json=body)
    assert r.status_code == 201
    obj = r.json()
    assert "unknown" not in obj["spec"] and obj["spec"]["extra"] == {"anything": {"goes": 1}}
    assert "topLevel" not in obj and "bogusMeta" not in obj["metadata"]
    assert obj["spec"]["replicas"] == 1 and obj["spec"]["mode"] == "Once"
    assert r.headers["warning"] == (
        '299 - "unknown field \\"metadata.bogusMeta\\"", 299 - "unknown field \\"spec.unknown\\"", '
        '299 - "unknown field \\"topLevel\\""'
    )
    # strict field validation rejects unknown fields instead (kubectl's default)
    r = await http.post(ATS, params={"fieldValidation": "Strict"}, json=at("strict", unknown="x"))
    assert r.status_code == 400 and 'unknown field "spec.unknown"' in r.json()["message"]
    # defaults in status items
    await http.patch(
        f"{ATS}/example/status",
        json={"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
        headers={"content-type": "application/merge-patch+json"},
    )
    st = (await http.get(f"{ATS}/example")).json()["status"]
    assert st["conditions"] == [{"type": "Ready", "status": "True", "reason": ""}]


async def test_versions_share_storage(http: httpx2.AsyncClient) -> None:
    await http.post(ATS, json=at())
    beta = "/apis/cnat.programming-kubernetes.info/v1beta1/namespaces/default/ats"
    r = await http.get(f"{beta}/example")
    assert r.status_code == 200 and r.json()["apiVersion"] == "cnat.programming-kubernetes.info/v1beta1"
    items = (await http.get(beta)).json()["items"]
    assert items[0]["apiVersion"].endswith("v1beta1")


async def test_printer_columns_table(http: httpx2.AsyncClient) -> None:
    await http.post(ATS, json=at())
    await http.patch(
        f"{ATS}/example/status",
        json={"status": {"phase": "RUNNING"}},
        headers={"content-type": "application/merge-patch+json"},
    )
    t = (await http.get(ATS, headers=TABLE)).json()
    assert t["kind"] == "Table" and t["apiVersion"] == "meta.k8s.io/v1"
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "Schedule", "Phase", "Age"]
    cells = t["rows"][0]["cells"]
    assert cells[:3] == ["example", "2026-12-02T15:00:00Z", "RUNNING"] and cells[3].endswith("s")
    assert t["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    one = (await http.get(f"{ATS}/example", headers=TABLE, params={"includeObject": "Object"})).json()
    assert one["rows"][0]["object"]["spec"]["command"] == "echo hi"


async def test_scale_subresource(http: httpx2.AsyncClient) -> None:
    await http.post(ATS, json=at(replicas=2))
    sc = (await http.get(f"{ATS}/example/scale")).json()
    assert sc["kind"] == "Scale" and sc["spec"]["replicas"] == 2
    sc["spec"]["replicas"] = 5
    r = await http.put(f"{ATS}/example/scale", json=sc)
    assert r.status_code == 200 and r.json()["spec"]["replicas"] == 5
    assert (await http.get(f"{ATS}/example")).json()["spec"]["replicas"] == 5
    r = await http.patch(
        f"{ATS}/example/scale",
        json={"spec": {"replicas": 1}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert r.json()["spec"]["replicas"] == 1


async def test_crd_through_the_api(http: httpx2.AsyncClient) -> None:
    r = await http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=WIDGET_CRD)
    assert r.status_code == 201
    conds = {c["type"]: c["status"] for c in r.json()["status"]["conditions"]}
    assert conds == {"NamesAccepted": "True", "Established": "True"}
    base = "/apis/test.pyop.io/v1/namespaces/default/widgets"
    w = {"apiVersion": "test.pyop.io/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3}}
    assert (await http.post(base, json=w)).status_code == 201
    bad = {**w, "metadata": {"name": "w2"}, "spec": {"size": 11}}
    assert (await http.post(base, json=bad)).status_code == 422
    # deleting the CRD removes its objects and its endpoints
    r = await http.delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.test.pyop.io")
    assert r.status_code == 200
    assert (await http.get(base)).status_code == 404
    assert "test.pyop.io" not in [g["name"] for g in (await http.get("/apis")).json()["groups"]]
    # recreate: empty again
    await http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=WIDGET_CRD)
    assert (await http.get(base)).json()["items"] == []


async def test_invalid_crd(http: httpx2.AsyncClient) -> None:
    crd = yaml.safe_load(yaml.safe_dump(WIDGET_CRD))
    crd["metadata"]["name"] = "wrong.test.pyop.io"
    r = await http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
    assert r.status_code == 422
    assert r.json()["details"]["causes"][0]["field"] == "metadata.name"


async def test_install_crds_from_thread_and_loop(tmp_path: object) -> None:
    env = Environment().start_in_thread()
    try:
        stored = await env.install_crds([CRDS])
        assert {c["metadata"]["name"] for c in stored} == {
            "ats.cnat.programming-kubernetes.info",
            "clusterthings.example.com",
        }
        again = await env.install_crds([CRDS])  # idempotent: replaces
        assert len(again) == 2
        async with httpx2.AsyncClient(base_url=env.url) as http:
            assert (await http.get(ATS)).status_code == 200
    finally:
        await asyncio.to_thread(env.stop)


async def test_pod_table(http: httpx2.AsyncClient) -> None:
    await http.post(
        "/api/v1/namespaces/default/pods",
        json={"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}},
    )
    t = (await http.get("/api/v1/namespaces/default/pods", headers=TABLE)).json()
    assert [c["name"] for c in t["columnDefinitions"]][:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert t["rows"][0]["cells"][:4] == ["p", "0/1", "Pending", "0"]  # Restarts is a string


RULES_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "scalers.test.pyop.io"},
    "spec": {
        "group": "test.pyop.io",
        "scope": "Namespaced",
        "names": {"kind": "Scaler", "plural": "scalers", "singular": "scaler", "listKind": "ScalerList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "x-kubernetes-validations": [
                                    {
                                        "rule": "self.minReplicas <= self.maxReplicas",
                                        "message": "min must not exceed max",
                                    },
                                ],
                                "properties": {
                                    "minReplicas": {"type": "integer"},
                                    "maxReplicas": {"type": "integer"},
                                    "name": {
                                        "type": "string",
                                        "x-kubernetes-validations": [
                                            {"rule": "self == oldSelf", "message": "name is immutable"}
                                        ],
                                    },
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
}


async def test_crd_with_a_rule_that_does_not_compile_is_refused(http: httpx2.AsyncClient) -> None:
    crd = copy.deepcopy(RULES_CRD)
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["x-kubernetes-validations"].append({"rule": "self.minReplicas.unknownFn()", "message": "m"})
    r = await http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
    assert r.status_code == 422
    [c] = r.json()["details"]["causes"]
    assert c["reason"] == "FieldValueInvalid"
    assert c["field"] == (
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].rule"
    )
    assert c["message"].startswith(
        'Invalid value: apiextensions.ValidationRule{Rule:"self.minReplicas.unknownFn()", Message:"m", '
    )
    assert ": compilation failed: ERROR: <input>:1:27: undeclared reference to 'unknownFn'" in c["message"]
    r = await http.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/scalers.test.pyop.io")
    assert r.status_code == 404


async def test_cel_rules(http: httpx2.AsyncClient) -> None:
    assert (
        await http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=RULES_CRD)
    ).status_code == 201
    base = "/apis/test.pyop.io/v1/namespaces/default/scalers"

    def scaler(lo: int, hi: int, name: str = "a") -> dict:
        return {
            "apiVersion": "test.pyop.io/v1",
            "kind": "Scaler",
            "metadata": {"name": "s"},
            "spec": {"minReplicas": lo, "maxReplicas": hi, "name": name},
        }

    r = await http.post(base, json=scaler(5, 3))
    assert r.status_code == 422
    assert r.json()["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "field": "spec",
            "message": 'Invalid value: "object": min must not exceed max',
        }
    ]
    assert (await http.post(base, json=scaler(1, 3))).status_code == 201
    r = await http.patch(
        f"{base}/s", json={"spec": {"name": "b"}}, headers={"content-type": "application/merge-patch+json"}
    )
    assert r.status_code == 422 and "name is immutable" in r.json()["message"]
    r = await http.patch(
        f"{base}/s",
        json={"spec": {"maxReplicas": 4}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert r.status_code == 200
