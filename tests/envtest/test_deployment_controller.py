"""The simulated Deployment controller against kube-controller-manager's rules (pkg/controller/deployment
v1.37.2): revisions renumbered when an old template comes back, the revision history, what `kubectl
rollout undo` then finds, cleanup by revision, annotations copied to ReplicaSets, proportional
scaling, and the Events it records."""

from __future__ import annotations

import asyncio
import copy
import shutil
import subprocess
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

from pyscaffold_op.envtest import Environment, KubeletSimulator
from pyscaffold_op.testing import eventually

NS = "/apis/apps/v1/namespaces/default"
REVISION = "deployment.kubernetes.io/revision"
HISTORY = "deployment.kubernetes.io/revision-history"


def deployment(
    name: str = "web", replicas: int = 2, image: str = "nginx:1.25", **spec: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": image}]},
            },
            **spec,
        },
    }


@pytest.fixture
async def env() -> AsyncIterator[Environment]:
    async with Environment(kubelet=KubeletSimulator(pending_seconds=0.01), workloads=True) as e:
        yield e


@pytest.fixture
async def http(env: Environment) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(base_url=env.url, timeout=10) as c:
        yield c


async def rolled_out(http: httpx2.AsyncClient, name: str = "web") -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        d = (await http.get(f"{NS}/deployments/{name}")).json()
        s, want = d.get("status") or {}, d["spec"]["replicas"]
        done = s.get("observedGeneration") == d["metadata"]["generation"] and all(
            s.get(k, 0) == want for k in ("updatedReplicas", "replicas", "availableReplicas")
        )
        progressing = next((c for c in s.get("conditions") or [] if c["type"] == "Progressing"), {})
        return d if done and progressing.get("reason") == "NewReplicaSetAvailable" else None

    return await eventually(check, timeout=15)


async def set_image(http: httpx2.AsyncClient, image: str, name: str = "web") -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": image}]}}}}
    r = await http.patch(
        f"{NS}/deployments/{name}",
        json=patch,
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert r.status_code == 200, r.text


async def replica_sets(http: httpx2.AsyncClient) -> dict[str, dict[str, Any]]:
    """ReplicaSets by image."""
    items = (await http.get(f"{NS}/replicasets")).json()["items"]
    return {rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs for rs in items}


async def rollout_undo(http: httpx2.AsyncClient, name: str = "web") -> None:
    """What `kubectl rollout undo` does: the ReplicaSet of the second highest revision gives the
    Deployment its template (hash label dropped) and its annotations (the controller's own kept)."""
    d = (await http.get(f"{NS}/deployments/{name}")).json()
    rss = list((await replica_sets(http)).values())
    previous, _latest = sorted(rss, key=lambda rs: int(rs["metadata"]["annotations"][REVISION]))[-2:]
    template = copy.deepcopy(previous["spec"]["template"])
    del template["metadata"]["labels"]["pod-template-hash"]
    patch = [{"op": "replace", "path": "/spec/template", "value": template}]
    r = await http.patch(
        f"{NS}/deployments/{name}",
        json=patch,
        headers={"Content-Type": "application/json-patch+json"},
        params={"resourceVersion": d["metadata"]["resourceVersion"]},
    )
    assert r.status_code == 200, r.text


async def test_an_old_template_coming_back_takes_the_next_revision(http: httpx2.AsyncClient) -> None:
    await http.post(f"{NS}/deployments", json=deployment())
    await rolled_out(http)
    await set_image(http, "httpd:2.4")
    await rolled_out(http)
    await set_image(http, "nginx:1.25")  # the first template again: its ReplicaSet is re-adopted
    d = await rolled_out(http)
    rss = await replica_sets(http)
    assert len(rss) == 2  # no third ReplicaSet
    assert rss["nginx:1.25"]["metadata"]["annotations"][REVISION] == "3"
    assert rss["nginx:1.25"]["metadata"]["annotations"][HISTORY] == "1"
    assert rss["httpd:2.4"]["metadata"]["annotations"][REVISION] == "2"
    assert d["metadata"]["annotations"][REVISION] == "3"

    await rollout_undo(http)  # the previous revision is httpd's (2), not nginx's old number
    d = await rolled_out(http)
    assert d["spec"]["template"]["spec"]["containers"][0]["image"] == "httpd:2.4"
    rss = await replica_sets(http)
    assert rss["httpd:2.4"]["metadata"]["annotations"][REVISION] == "4"
    assert rss["httpd:2.4"]["metadata"]["annotations"][HISTORY] == "2"
    assert d["metadata"]["annotations"][REVISION] == "4"
    await rollout_undo(http)
    d = await rolled_out(http)
    assert d["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
    rss = await replica_sets(http)
    assert rss["nginx:1.25"]["metadata"]["annotations"][HISTORY] == "1,3"


async def test_cleanup_keeps_the_highest_revisions_and_copies_annotations(http: httpx2.AsyncClient) -> None:
    body = deployment(revisionHistoryLimit=1)
    body["metadata"]["annotations"] = {"team": "a", "kubectl.kubernetes.io/last-applied-configuration": "{}"}
    await http.post(f"{NS}/deployments", json=body)
    await rolled_out(http)
    for image in ("nginx:1.26", "nginx:1.27", "nginx:1.28"):
        await set_image(http, image)
        await rolled_out(http)

    async def two_left() -> dict[str, dict[str, Any]] | None:
        rss = await replica_sets(http)
        return rss if len(rss) == 2 else None

    rss = await eventually(two_left)
    assert set(rss) == {"nginx:1.27", "nginx:1.28"}
    rs = rss["nginx:1.28"]
    assert rs["metadata"]["annotations"] == {
        "team": "a",  # the Deployment's own annotations, not kubectl's last-applied one
        REVISION: "4",
        "deployment.kubernetes.io/desired-replicas": "2",
        "deployment.kubernetes.io/max-replicas": "3",
    }


async def test_a_scale_during_a_paused_rollout_is_spread_in_proportion(http: httpx2.AsyncClient) -> None:
    await http.post(f"{NS}/deployments", json=deployment(replicas=10))
    await rolled_out(http)
    r = await http.patch(
        f"{NS}/deployments/web",
        json={
            "spec": {"paused": True, "template": {"spec": {"containers": [{"name": "web", "image": "b"}]}}}
        },
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert r.status_code == 200
    # paused: no new ReplicaSet yet; unpause for one step, then pause again with two live ones
    await http.patch(
        f"{NS}/deployments/web",
        json={"spec": {"paused": False}},
        headers={"Content-Type": "application/merge-patch+json"},
    )

    async def two_live() -> dict[str, dict[str, Any]] | None:
        rss = await replica_sets(http)
        return rss if len(rss) == 2 and rss["b"]["spec"]["replicas"] > 0 else None

    await eventually(two_live)
    await http.patch(
        f"{NS}/deployments/web",
        json={"spec": {"paused": True}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    rss = await replica_sets(http)
    before = {image: rs["spec"]["replicas"] for image, rs in rss.items()}
    await http.patch(
        f"{NS}/deployments/web",
        json={"spec": {"replicas": 20}},
        headers={"Content-Type": "application/merge-patch+json"},
    )

    async def scaled() -> dict[str, int] | None:
        sizes = {image: rs["spec"]["replicas"] for image, rs in (await replica_sets(http)).items()}
        return sizes if sum(sizes.values()) == 20 + 5 else None  # maxSurge 25% of 20

    sizes = await eventually(scaled)
    assert all(sizes[image] >= before[image] for image in before)
    assert min(sizes.values()) > 0  # both grew: the new size was spread, not given to one


async def test_events_are_the_real_controllers(http: httpx2.AsyncClient) -> None:
    await http.post(f"{NS}/deployments", json=deployment(replicas=2))
    await rolled_out(http)
    await set_image(http, "nginx:1.26")
    await rolled_out(http)
    rss = await replica_sets(http)
    old, new = rss["nginx:1.25"]["metadata"]["name"], rss["nginx:1.26"]["metadata"]["name"]

    async def events() -> list[dict[str, Any]] | None:
        items = (await http.get("/api/v1/namespaces/default/events")).json()["items"]
        scaled = [e for e in items if e["reason"] == "ScalingReplicaSet"]
        return items if any(f"{old} from 1 to 0" in e["message"] for e in scaled) else None

    items = await eventually(events)
    messages = [e["message"] for e in items if e["involvedObject"]["kind"] == "Deployment"]
    assert f"Scaled up replica set {old} from 0 to 2" in messages
    assert f"Scaled up replica set {new} from 0 to 1" in messages
    assert f"Scaled down replica set {old} from 2 to 1" in messages
    scaling = next(e for e in items if e["reason"] == "ScalingReplicaSet")
    assert scaling["source"] == {"component": "deployment-controller"}
    assert scaling["reportingComponent"] == "deployment-controller" and scaling["reportingInstance"] == ""
    assert (scaling["type"], scaling["count"]) == ("Normal", 1)
    assert scaling["involvedObject"]["apiVersion"] == "apps/v1"
    assert scaling["metadata"]["name"].startswith("web.")
    created = [e for e in items if e["reason"] == "SuccessfulCreate"]
    assert {e["source"]["component"] for e in created} == {"replicaset-controller"}
    assert all(e["message"].startswith("Created pod: ") for e in created)
    assert {e["involvedObject"]["name"] for e in created} == {old, new}


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_kubectl_rollout_undo_after_the_template_came_back(
    env: Environment, http: httpx2.AsyncClient
) -> None:
    """The issue 36 sequence, with kubectl's own undo."""
    await http.post(f"{NS}/deployments", json=deployment(image="nginx:1.25"))
    await rolled_out(http)
    await set_image(http, "httpd:2.4")
    await rolled_out(http)
    await set_image(http, "nginx:1.25")
    await rolled_out(http)
    kc = str(env.kubeconfig_path)
    run = await asyncio.to_thread(
        subprocess.run,
        ["kubectl", "--kubeconfig", kc, "rollout", "undo", "deployment/web"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert run.returncode == 0, run.stderr
    d = await rolled_out(http)
    assert d["spec"]["template"]["spec"]["containers"][0]["image"] == "httpd:2.4"
    history = await asyncio.to_thread(
        subprocess.run,
        ["kubectl", "--kubeconfig", kc, "rollout", "history", "deployment/web"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert [line.split()[0] for line in history.stdout.splitlines()[2:] if line.strip()] == ["3", "4"]


async def test_generation_as_the_deployment_strategy_counts_it(http: httpx2.AsyncClient) -> None:
    """Annotations bump a Deployment's generation (its strategy: they go to its ReplicaSets); the
    controller's revision annotation, written with the status, does not."""
    await http.post(f"{NS}/deployments", json=deployment())
    d = await rolled_out(http)
    assert d["metadata"]["annotations"][REVISION] == "1"
    assert d["metadata"]["generation"] == 1 and d["status"]["observedGeneration"] == 1
    r = await http.patch(
        f"{NS}/deployments/web",
        json={"metadata": {"labels": {"tier": "front"}, "annotations": {"note": "x"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.json()["metadata"]["generation"] == 2
    d = await rolled_out(http)
    assert d["status"]["observedGeneration"] == 2
    rs = next(iter((await replica_sets(http)).values()))
    assert rs["metadata"]["annotations"]["note"] == "x"  # copied to the ReplicaSet
