"""A CRD with `conversion.strategy: Webhook`: objects are stored in the storage version and the
emulator calls the runtime's conversion webhook (over HTTPS) for every other version, on reads, writes,
lists, watches and for kubectl."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import new_client
from pyscaffold_op.runtime.webhook import WebhookServer, webhook_managed_by
from tests.runtime.webhook_kinds import Shape, ShapeV2

V1 = "/apis/shapes.pyop.io/v1/namespaces/default/shapes"
V2 = "/apis/shapes.pyop.io/v2/namespaces/default/shapes"


def version(name: str, storage: bool, spec: dict[str, Any]) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {"type": "object", "properties": spec},
        },
    }
    return {
        "name": name,
        "served": True,
        "storage": storage,
        "schema": {"openAPIV3Schema": schema},
        "additionalPrinterColumns": [
            {
                "name": "Width" if name == "v2" else "Size",
                "type": "integer",
                "jsonPath": ".spec.dimensions.width" if name == "v2" else ".spec.size",
            }
        ],
    }


def shape_crd(server: WebhookServer) -> dict[str, Any]:
    assert server.ca_bundle is not None
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "shapes.shapes.pyop.io"},
        "spec": {
            "group": "shapes.pyop.io",
            "names": {"kind": "Shape", "plural": "shapes", "singular": "shape", "listKind": "ShapeList"},
            "scope": "Namespaced",
            "versions": [
                version("v1", True, {"size": {"type": "integer"}}),
                version(
                    "v2",
                    False,
                    {"dimensions": {"type": "object", "properties": {"width": {"type": "integer"}}}},
                ),
            ],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {
                        "url": server.url + "/convert",
                        "caBundle": base64.b64encode(server.ca_bundle).decode(),
                    },
                },
            },
        },
    }


@pytest.fixture
async def server() -> AsyncIterator[WebhookServer]:
    s = WebhookServer(host="127.0.0.1", port=0)
    webhook_managed_by(s).for_(Shape).complete()
    async with s:
        yield s


@pytest.fixture
async def env(server: WebhookServer) -> AsyncIterator[Environment]:
    async with Environment(kubelet=None) as e:
        async with httpx2.AsyncClient(base_url=e.url) as c:
            r = await c.post(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=shape_crd(server)
            )
            assert r.status_code == 201, r.text
        yield e


@pytest.fixture
async def http(env: Environment) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(base_url=env.url, timeout=30) as c:
        yield c


def v1_shape(name: str, size: int) -> dict[str, Any]:
    return {
        "apiVersion": "shapes.pyop.io/v1",
        "kind": "Shape",
        "metadata": {"name": name},
        "spec": {"size": size},
    }


async def test_written_as_v1_read_as_v2(http: httpx2.AsyncClient) -> None:
    assert (await http.post(V1, json=v1_shape("s", 3))).status_code == 201
    got = (await http.get(f"{V2}/s")).json()
    assert got["apiVersion"] == "shapes.pyop.io/v2" and got["spec"] == {"dimensions": {"width": 3}}
    listed = (await http.get(V2)).json()
    assert listed["apiVersion"] == "shapes.pyop.io/v2"
    assert [i["spec"] for i in listed["items"]] == [{"dimensions": {"width": 3}}]
    # the storage version is served without a call
    assert (await http.get(f"{V1}/s")).json()["spec"] == {"size": 3}


async def test_written_as_v2_is_stored_as_v1(http: httpx2.AsyncClient) -> None:
    body = {
        "apiVersion": "shapes.pyop.io/v2",
        "kind": "Shape",
        "metadata": {"name": "t"},
        "spec": {"dimensions": {"width": 5}},
    }
    r = await http.post(V2, json=body)
    assert r.status_code == 201, r.text
    assert r.json()["apiVersion"] == "shapes.pyop.io/v2" and r.json()["spec"] == {"dimensions": {"width": 5}}
    assert (await http.get(f"{V1}/t")).json()["spec"] == {"size": 5}
    patched = await http.patch(
        f"{V2}/t",
        json={"spec": {"dimensions": {"width": 7}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200 and patched.json()["spec"] == {"dimensions": {"width": 7}}
    assert (await http.get(f"{V1}/t")).json()["spec"] == {"size": 7}
    current = patched.json()
    current["spec"]["dimensions"]["width"] = 9
    assert (await http.put(f"{V2}/t", json=current)).json()["spec"]["dimensions"]["width"] == 9
    assert (await http.get(f"{V1}/t")).json()["spec"] == {"size": 9}
    deleted = await http.delete(f"{V2}/t")
    # gone at once: kube-apiserver answers a custom resource's delete with the Status (nothing to convert)
    assert deleted.status_code == 200 and deleted.json()["kind"] == "Status"
    assert deleted.json()["details"]["name"] == "t"


async def test_table_uses_the_request_versions_columns(http: httpx2.AsyncClient) -> None:
    await http.post(V1, json=v1_shape("s", 4))
    r = await http.get(V2, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    table = r.json()
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]][:2] == ["Name", "Width"]
    assert table["rows"][0]["cells"][:2] == ["s", 4]


async def test_watch_events_are_converted(http: httpx2.AsyncClient) -> None:
    async with http.stream("GET", V2, params={"watch": "true"}) as stream:
        await http.post(V1, json=v1_shape("w", 6))
        async for line in stream.aiter_lines():
            event = json.loads(line)
            assert event["type"] == "ADDED"
            assert event["object"]["apiVersion"] == "shapes.pyop.io/v2"
            assert event["object"]["spec"] == {"dimensions": {"width": 6}}
            break


async def test_runtime_client_reads_the_spoke(env: Environment, http: httpx2.AsyncClient) -> None:
    await http.post(V1, json=v1_shape("typed", 2))
    client = new_client(env.config)
    try:
        got = await client.get(ShapeV2, "typed", namespace="default")
        assert got.spec.dimensions.width == 2
        got.spec.dimensions.width = 8
        await client.update(got)
        assert (await client.get(Shape, "typed", namespace="default")).spec.size == 8
    finally:
        await client.close()


async def test_webhook_failure_is_a_500(server: WebhookServer, http: httpx2.AsyncClient) -> None:
    await http.post(V1, json=v1_shape("s", 1))
    await server.stop()
    r = await http.get(f"{V2}/s")
    assert r.status_code == 500
    assert r.json()["message"].startswith(
        "Internal error occurred: conversion webhook for shapes.pyop.io/v1, Kind=Shape failed: "
        'failed to call webhook: Post "https://127.0.0.1:'
    )


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_kubectl_reads_v1_as_v2(env: Environment, http: httpx2.AsyncClient) -> None:
    await http.post(V1, json=v1_shape("k", 11))
    proc = await asyncio.create_subprocess_exec(
        "kubectl",
        "--kubeconfig",
        str(env.kubeconfig_path),
        "get",
        "shapes.v2.shapes.pyop.io",
        "k",
        "-o",
        "json",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    got = json.loads(out)
    assert got["apiVersion"] == "shapes.pyop.io/v2" and got["spec"] == {"dimensions": {"width": 11}}
