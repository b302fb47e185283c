"""Server-side printing as kubectl asks for it (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`):
the real server's columns per kind (the conformance corpus compares every kind's `crud/*/table` and
the `watch/table*` scenarios against kube-apiserver), the wide columns in every row, cells computed
as pkg/printers does, and a watch sending the column definitions in its first event only."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2

from pyscaffold_op.envtest.server import printers

TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}
DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
CMS = "/api/v1/namespaces/default/configmaps"


def _cols(t: dict[str, Any]) -> list[tuple[str, str, str, int]]:
    return [(c["name"], c["type"], c["format"], c["priority"]) for c in t["columnDefinitions"]]


async def test_deployment_columns_and_wide_cells(http: httpx2.AsyncClient) -> None:
    body = {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 0,
            "selector": {
                "matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}],
            },
            "template": {
                "metadata": {"labels": {"app": "web", "tier": "a"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}, {"name": "s", "image": "busybox"}]},
            },
        },
    }
    assert (await http.post(DEPLOYS, json=body)).status_code == 201
    t = (await http.get(f"{DEPLOYS}/web", headers=TABLE)).json()
    assert _cols(t) == [
        ("Name", "string", "name", 0),
        ("Ready", "string", "", 0),
        ("Up-to-date", "string", "", 0),
        ("Available", "string", "", 0),
        ("Age", "string", "", 0),
        ("Containers", "string", "", 1),
        ("Images", "string", "", 1),
        ("Selector", "string", "", 1),
    ]
    assert t["columnDefinitions"][2]["description"].startswith("Total number of non-terminating pods")
    cells = t["rows"][0]["cells"]
    assert cells[:4] == ["web", "0/0", 0, 0] and cells[4].endswith("s")
    assert cells[5:] == ["c,s", "nginx,busybox", "app=web,tier in (a,b)"]
    assert t["metadata"]["resourceVersion"] and t["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


async def test_default_convertor_and_include_object(http: httpx2.AsyncClient) -> None:
    role = {"metadata": {"name": "r"}, "rules": []}
    assert (
        await http.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", json=role)
    ).status_code == 201
    t = (
        await http.get(
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/r",
            headers=TABLE,
            params={"includeObject": "None"},
        )
    ).json()
    assert _cols(t) == [("Name", "string", "name", 0), ("Created At", "date", "", 0)]
    assert t["rows"][0]["cells"][1].endswith("Z") and t["rows"][0]["object"] is None
    r = await http.get(CMS, headers=TABLE, params={"includeObject": "All"})
    assert r.status_code == 400 and "unrecognized includeObject value" in r.json()["message"]


async def test_node_columns_are_the_servers_order(http: httpx2.AsyncClient) -> None:
    node = {
        "metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "addresses": [{"type": "InternalIP", "address": "10.1.2.3"}],
            "nodeInfo": {"kubeletVersion": "v1.37.2", "architecture": "arm64", "kernelVersion": "6.1"},
        },
    }
    created = await http.post("/api/v1/nodes", json=node)
    assert created.status_code == 201
    r = await http.put("/api/v1/nodes/n1/status", json={**created.json(), "status": node["status"]})
    assert r.status_code == 200, r.text
    t = (await http.get("/api/v1/nodes/n1", headers=TABLE)).json()
    assert [c["name"] for c in t["columnDefinitions"]][:5] == ["Name", "Status", "Roles", "Age", "Version"]
    cells = t["rows"][0]["cells"]
    assert cells[:3] == ["n1", "Ready", "control-plane"]
    assert cells[5:] == ["10.1.2.3", "<none>", "<unknown>", "6.1 (arm64)", "<unknown>"]


async def test_watch_as_table_sends_the_columns_first(http: httpx2.AsyncClient) -> None:
    await http.post(CMS, json={"metadata": {"name": "a"}, "data": {"k": "v"}})
    await http.post(CMS, json={"metadata": {"name": "b"}})
    out: list[dict[str, Any]] = []

    async def read() -> None:
        params = {"watch": "true", "resourceVersion": "0", "includeObject": "Object"}
        async with http.stream("GET", CMS, params=params, headers=TABLE) as r:
            assert r.status_code == 200
            async for line in r.aiter_lines():
                if line:
                    out.append(json.loads(line))
                    if len(out) == 2:
                        return

    await asyncio.wait_for(read(), 5)
    first, second = (e["object"] for e in out)
    assert first["kind"] == "Table" and [c["name"] for c in first["columnDefinitions"]] == [
        "Name",
        "Data",
        "Age",
    ]
    assert second["columnDefinitions"] is None
    assert first["rows"][0]["cells"][:2] == ["a", 1] and first["rows"][0]["object"]["kind"] == "ConfigMap"
    assert first["metadata"]["resourceVersion"] == first["rows"][0]["object"]["metadata"]["resourceVersion"]


def test_cells_ported_from_the_printers() -> None:
    assert printers.human_duration(3 * 365 * 24 * 3600 + 5 * 24 * 3600) == "3y5d"
    assert printers.format_selector({}) == "<none>"
    assert (
        printers.selector_string(
            {
                "matchExpressions": [
                    {"key": "b", "operator": "DoesNotExist"},
                    {"key": "a", "operator": "Exists"},
                ]
            }
        )
        == "a,!b"
    )
    job = {"metadata": {"name": "j"}, "spec": {"parallelism": 3}, "status": {"succeeded": 1}}
    assert printers.PRINTERS[("batch", "jobs")](job)[1:4] == ["Running", "1/1 of 3", ""]
    svc = {
        "metadata": {"name": "s"},
        "spec": {
            "type": "LoadBalancer",
            "clusterIPs": ["10.0.0.9"],
            "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}],
        },
    }
    assert printers.PRINTERS[("", "services")](svc)[1:5] == [
        "LoadBalancer",
        "10.0.0.9",
        "<pending>",
        "80:30080/TCP",
    ]
    done = {"metadata": {"name": "p"}, "status": {"phase": "Succeeded"}}
    assert printers.pod_conditions(done) == [
        {
            "type": "Completed",
            "status": "True",
            "reason": "Succeeded",
            "message": "The pod has completed successfully.",
        }
    ]
