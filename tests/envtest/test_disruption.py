"""PodDisruptionBudgets as on a cluster (issue 36): the disruption controller fills their status, the
eviction subresource judges by it, and `kubectl drain` blocks on a budget because the cordoned node
takes no replacement Pod."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

from pyscaffold_op.envtest import Environment, KubeletSimulator
from pyscaffold_op.testing import eventually

NS = "/apis/apps/v1/namespaces/default"
PDBS = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
PODS = "/api/v1/namespaces/default/pods"


def deployment(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def budget(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "keep"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
    }


@pytest.fixture
async def env() -> AsyncIterator[Environment]:
    kubelet = KubeletSimulator(pending_seconds=0.01, stop_seconds=0.01)
    async with Environment(kubelet=kubelet, workloads=True) as e:
        yield e


@pytest.fixture
async def http(env: Environment) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(base_url=env.url, timeout=10) as c:
        yield c


async def status_of(http: httpx2.AsyncClient, **want: Any) -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        status = (await http.get(f"{PDBS}/keep")).json().get("status") or {}
        return status if all(status.get(k) == v for k, v in want.items()) else None

    return await eventually(check, timeout=10)


async def running_pods(http: httpx2.AsyncClient, n: int) -> list[dict[str, Any]]:
    async def check() -> list[dict[str, Any]] | None:
        items = (await http.get(PODS)).json()["items"]
        ready = [
            p
            for p in items
            if any(
                c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or []
            )
        ]
        return ready if len(ready) == n else None

    return await eventually(check, timeout=10)


async def test_the_controller_fills_the_status(http: httpx2.AsyncClient) -> None:
    await http.post(f"{NS}/deployments", json=deployment(3))
    await running_pods(http, 3)
    await http.post(PDBS, json=budget(minAvailable=2))
    status = await status_of(http, currentHealthy=3)
    assert (status["desiredHealthy"], status["expectedPods"], status["disruptionsAllowed"]) == (2, 3, 1)
    assert status["observedGeneration"] == 1
    [cond] = status["conditions"]
    assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == (
        "DisruptionAllowed",
        "True",
        "SufficientPods",
        "",
    )
    # maxUnavailable counts against the Deployment's scale
    got = (await http.get(f"{PDBS}/keep")).json()
    got["spec"] = {"selector": got["spec"]["selector"], "maxUnavailable": "50%"}
    await http.put(f"{PDBS}/keep", json=got)
    status = await status_of(http, observedGeneration=2)
    assert (status["desiredHealthy"], status["expectedPods"], status["disruptionsAllowed"]) == (1, 3, 2)


async def test_eviction_spends_the_budget(http: httpx2.AsyncClient) -> None:
    await http.post(f"{NS}/deployments", json=deployment(2))
    pods = await running_pods(http, 2)
    await http.post(PDBS, json=budget(minAvailable=1))
    await status_of(http, disruptionsAllowed=1)
    # cordoned: a replacement Pod finds no node and never counts as healthy
    await http.patch(
        "/api/v1/nodes/envtest-node",
        json={"spec": {"unschedulable": True}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    first, second = (p["metadata"]["name"] for p in pods)

    def eviction(name: str) -> dict[str, Any]:
        return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}

    r = await http.post(f"{PODS}/{first}/eviction", params={"dryRun": "All"}, json=eviction(first))
    assert r.status_code == 201
    assert (await http.get(f"{PODS}/{first}")).json()["metadata"].get("deletionTimestamp") is None
    r = await http.post(f"{PODS}/{first}/eviction", json=eviction(first))
    assert r.status_code == 201, r.text
    await status_of(http, disruptionsAllowed=0, currentHealthy=1)
    r = await http.post(f"{PODS}/{second}/eviction", json=eviction(second))
    assert r.status_code == 429
    body = r.json()
    assert body["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert body["details"]["causes"] == [
        {
            "reason": "DisruptionBudget",
            "message": "The disruption budget keep needs 1 healthy pods and has 1 currently",
        }
    ]
    assert "Retry-After" not in r.headers


async def test_a_budget_not_yet_observed_refuses() -> None:
    """Without a disruption controller (a bare API server) every eviction of a budgeted Pod waits."""
    async with (
        Environment(kubelet=KubeletSimulator(pending_seconds=0.01)) as bare,  # no controller-manager
        httpx2.AsyncClient(base_url=bare.url, timeout=10) as client,
    ):
        pod = {
            "metadata": {"name": "p", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        }
        await client.post(PODS, json=pod)
        await running_pods(client, 1)
        await client.post(PDBS, json=budget(minAvailable=1))
        r = await client.post(f"{PODS}/p/eviction", json={"metadata": {"name": "p"}})
        assert r.status_code == 429 and r.headers["Retry-After"] == "10"
        assert r.json()["details"] == {
            "causes": [
                {
                    "reason": "DisruptionBudget",
                    "message": "The disruption budget keep is still being processed by the server.",
                }
            ],
            "retryAfterSeconds": 10,
        }


@pytest.mark.kubectl
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_kubectl_drain_blocks_on_the_budget(env: Environment, http: httpx2.AsyncClient) -> None:
    await http.post(f"{NS}/deployments", json=deployment(2))
    await running_pods(http, 2)
    await http.post(PDBS, json=budget(minAvailable=2))
    await status_of(http, currentHealthy=2, disruptionsAllowed=0)
    drain = await asyncio.to_thread(
        subprocess.run,
        ["kubectl", "--kubeconfig", str(env.kubeconfig_path), "drain", "envtest-node", "--timeout=7s"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert drain.returncode != 0
    assert "Cannot evict pod as it would violate the pod's disruption budget." in drain.stderr
    node = (await http.get("/api/v1/nodes/envtest-node")).json()
    assert node["spec"]["unschedulable"] is True
    assert len(await running_pods(http, 2)) == 2  # nothing was evicted

    # with room for one disruption, the evicted Pod's replacement finds no node: the drain still blocks
    got = (await http.get(f"{PDBS}/keep")).json()
    got["spec"]["minAvailable"] = 1
    await http.put(f"{PDBS}/keep", json=got)
    await status_of(http, disruptionsAllowed=1, observedGeneration=2)
    drain = await asyncio.to_thread(
        subprocess.run,
        ["kubectl", "--kubeconfig", str(env.kubeconfig_path), "drain", "envtest-node", "--timeout=7s"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert drain.returncode != 0
    items = (await http.get(PODS)).json()["items"]
    pending = [p for p in items if not p["spec"].get("nodeName")]
    assert len(pending) == 1
    cond = next(c for c in pending[0]["status"]["conditions"] if c["type"] == "PodScheduled")
    assert cond["reason"] == "Unschedulable" and "node(s) were unschedulable" in cond["message"]
