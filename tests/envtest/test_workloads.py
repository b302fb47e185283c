"""The simulated workload controllers: Deployments and ReplicaSets, seen through real clients."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest
from lightkube import AsyncClient
from lightkube.models.autoscaling_v1 import ScaleSpec
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.apps_v1 import Deployment, ReplicaSet
from lightkube.resources.core_v1 import Pod

from pyscaffold_op.envtest import Environment, KubeletSimulator
from pyscaffold_op.envtest.storage.objectstore import Event
from pyscaffold_op.testing import eventually
from tests.envtest.lightkube_client import lightkube_client


def deployment(name: str, replicas: int = 3, image: str = "nginx:1.25", **strategy: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "web", "image": image}]},
        },
    }
    if strategy:
        spec["strategy"] = strategy
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


@pytest.fixture
async def env() -> AsyncIterator[Environment]:
    kubelet = KubeletSimulator(pending_seconds=0.01, stop_seconds=0.01)
    async with Environment(kubelet=kubelet, workloads=True) as e:
        yield e


@pytest.fixture
async def client(env: Environment) -> AsyncIterator[AsyncClient]:
    c = lightkube_client(env, in_process=False)
    yield c
    await c.close()


def condition(obj: Any, typ: str) -> Any:
    return next((c for c in obj.status.conditions or [] if c.type == typ), None)


async def rolled_out(client: AsyncClient, name: str, replicas: int) -> Deployment:
    """What `kubectl rollout status` waits for: the spec observed, every replica updated and available."""

    async def check() -> Deployment:
        d = await client.get(Deployment, name)
        s = d.status
        assert s is not None and s.observedGeneration == d.metadata.generation, s
        assert (s.updatedReplicas or 0) == replicas and (s.replicas or 0) == replicas, s
        assert (s.availableReplicas or 0) == replicas, s
        return d

    return await eventually(check)


async def test_deployment_creates_replicaset_and_pods(client: AsyncClient) -> None:
    await client.create(Deployment.from_dict(deployment("web")))
    d = await rolled_out(client, "web", 3)
    available, progressing = condition(d, "Available"), condition(d, "Progressing")
    assert (available.status, available.reason) == ("True", "MinimumReplicasAvailable")
    assert (progressing.status, progressing.reason) == ("True", "NewReplicaSetAvailable")
    assert d.metadata.annotations["deployment.kubernetes.io/revision"] == "1"
    [rs] = [rs async for rs in client.list(ReplicaSet)]
    h = rs.metadata.labels["pod-template-hash"]
    assert rs.metadata.name == f"web-{h}" and rs.spec.selector.matchLabels == {
        "app": "web",
        "pod-template-hash": h,
    }
    ref = rs.metadata.ownerReferences[0]
    assert (ref.kind, ref.name, ref.uid, ref.controller) == ("Deployment", "web", d.metadata.uid, True)
    assert (rs.status.replicas, rs.status.readyReplicas, rs.status.availableReplicas) == (3, 3, 3)
    pods = [p async for p in client.list(Pod, labels={"app": "web"})]
    assert len(pods) == 3
    for p in pods:
        assert p.metadata.name.startswith(f"web-{h}-") and p.status.phase == "Running"
        assert p.metadata.ownerReferences[0].uid == rs.metadata.uid
        assert p.metadata.managedFields[0].manager == "kube-controller-manager"


async def test_rolling_update_respects_surge_and_unavailability(
    env: Environment, client: AsyncClient
) -> None:
    await client.create(
        Deployment.from_dict(
            deployment("roll", 3, type="RollingUpdate", rollingUpdate={"maxSurge": 1, "maxUnavailable": 0})
        )
    )
    await rolled_out(client, "roll", 3)
    # every pod change during the rollout: never more than 3 + 1 pods, never fewer than 3 ready
    pods: dict[str, dict[str, Any]] = {}
    worst = {"max_pods": 0, "min_ready": 99}

    def watch(ev: Event) -> None:
        if ev.gr != ("", "pods") or not ev.obj["metadata"]["name"].startswith("roll-"):
            return
        if ev.type == "DELETED":
            pods.pop(ev.obj["metadata"]["name"], None)
        else:
            pods[ev.obj["metadata"]["name"]] = ev.obj
        live = [p for p in pods.values() if not p["metadata"].get("deletionTimestamp")]
        ready = [
            p
            for p in live
            if any(
                c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or []
            )
        ]
        worst["max_pods"] = max(worst["max_pods"], len(live))
        worst["min_ready"] = min(worst["min_ready"], len(ready))

    for p in [p async for p in client.list(Pod, labels={"app": "roll"})]:
        pods[p.metadata.name] = p.to_dict()
    env.store.on_change.append(watch)
    d = await client.get(Deployment, "roll")
    d.spec.template.spec.containers[0].image = "nginx:1.26"
    await client.replace(d)
    d = await rolled_out(client, "roll", 3)
    env.store.on_change.remove(watch)
    assert worst["max_pods"] <= 4 and worst["min_ready"] >= 3, worst
    assert d.metadata.annotations["deployment.kubernetes.io/revision"] == "2"
    rss = {
        rs.metadata.annotations["deployment.kubernetes.io/revision"]: rs
        async for rs in client.list(ReplicaSet)
    }
    assert rss["1"].spec.replicas == 0 and rss["2"].spec.replicas == 3
    assert rss["2"].spec.template.spec.containers[0].image == "nginx:1.26"

    async def old_pods_gone() -> bool:
        images = [p.spec.containers[0].image async for p in client.list(Pod, labels={"app": "roll"})]
        assert images == ["nginx:1.26"] * 3, images
        return True

    await eventually(old_pods_gone)


async def test_recreate_stops_old_pods_before_starting_new(env: Environment, client: AsyncClient) -> None:
    await client.create(Deployment.from_dict(deployment("re", 2, type="Recreate")))
    await rolled_out(client, "re", 2)
    overlap: list[str] = []
    images: dict[str, str] = {}

    def watch(ev: Event) -> None:
        name = ev.obj["metadata"]["name"]
        if ev.gr != ("", "pods") or not name.startswith("re-"):
            return
        if ev.type == "DELETED":
            images.pop(name, None)
        else:
            images[name] = ev.obj["spec"]["containers"][0]["image"]
        if len(set(images.values())) > 1:
            overlap.append(name)

    for p in [p async for p in client.list(Pod, labels={"app": "re"})]:
        images[p.metadata.name] = p.spec.containers[0].image
    env.store.on_change.append(watch)
    await client.patch(
        Deployment,
        "re",
        {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}}}},
    )
    await rolled_out(client, "re", 2)
    env.store.on_change.remove(watch)
    assert overlap == [] and set(images.values()) == {"nginx:2"}


async def test_scale_up_and_down(client: AsyncClient) -> None:
    await client.create(Deployment.from_dict(deployment("sc", 1)))
    await rolled_out(client, "sc", 1)
    await client.replace(
        Deployment.Scale(metadata=ObjectMeta(name="sc", namespace="default"), spec=ScaleSpec(replicas=4))
    )
    await rolled_out(client, "sc", 4)
    await client.patch(Deployment, "sc", {"spec": {"replicas": 2}})
    await rolled_out(client, "sc", 2)

    async def two_pods() -> bool:
        live = [p async for p in client.list(Pod, labels={"app": "sc"}) if not p.metadata.deletionTimestamp]
        assert len(live) == 2, [p.metadata.name for p in live]
        return True

    await eventually(two_pods)
    [rs] = [rs async for rs in client.list(ReplicaSet)]
    assert rs.metadata.annotations["deployment.kubernetes.io/revision"] == "1"  # scaling is no new revision


async def test_unavailable_pods_keep_the_deployment_unavailable() -> None:
    # containers that crash never become Ready: Available stays False, Progressing True
    kubelet = KubeletSimulator(pending_seconds=0.01, restart_backoff=0.01)
    async with Environment(kubelet=kubelet, workloads=True) as env:
        client = lightkube_client(env)
        body = deployment("crash", 2)
        body["spec"]["template"]["spec"]["containers"][0]["command"] = ["sh", "-c", "exit 1"]
        await client.create(Deployment.from_dict(body))

        async def crashing() -> Deployment:
            d = await client.get(Deployment, "crash")
            pods = [p async for p in client.list(Pod, labels={"app": "crash"})]
            assert pods and all(
                (p.status.containerStatuses or [None])[0] and p.status.containerStatuses[0].restartCount
                for p in pods
            )
            assert d.status and d.status.updatedReplicas == 2 and not d.status.availableReplicas, d.status
            return d

        d = await eventually(crashing)
        assert (condition(d, "Available").status, condition(d, "Available").reason) == (
            "False",
            "MinimumReplicasUnavailable",
        )
        assert condition(d, "Progressing").status == "True"
        assert d.status.unavailableReplicas == 2
        await client.close()


async def test_deleting_a_deployment_removes_its_replicasets_and_pods(client: AsyncClient) -> None:
    await client.create(Deployment.from_dict(deployment("gone", 2)))
    await rolled_out(client, "gone", 2)
    await client.delete(Deployment, "gone")

    async def empty() -> bool:
        assert [rs async for rs in client.list(ReplicaSet)] == []
        assert [p async for p in client.list(Pod, labels={"app": "gone"})] == []
        return True

    await eventually(empty)


async def test_workloads_are_opt_in() -> None:
    async with Environment(kubelet=KubeletSimulator()) as env:
        client = lightkube_client(env)
        await client.create(Deployment.from_dict(copy.deepcopy(deployment("idle", 1))))
        assert [rs async for rs in client.list(ReplicaSet)] == []
        status = (await client.get(Deployment, "idle")).status  # `status: {}`, as the server writes it
        assert status is not None and status.observedGeneration is None and status.replicas is None
        await client.close()


async def test_fixing_a_crashing_deployment_rolls_out() -> None:
    # the old ReplicaSet's pods never became available: they are scaled away first (cleanup of
    # unhealthy replicas), and the rollout completes
    kubelet = KubeletSimulator(pending_seconds=0.01, restart_backoff=0.01, stop_seconds=0.01)
    async with Environment(kubelet=kubelet, workloads=True) as env:
        client = lightkube_client(env)
        body = deployment("fix", 3)
        body["spec"]["template"]["spec"]["containers"][0]["command"] = ["sh", "-c", "exit 1"]
        await client.create(Deployment.from_dict(body))

        async def crashing() -> bool:
            d = await client.get(Deployment, "fix")
            assert d.status and d.status.updatedReplicas == 3 and not d.status.availableReplicas, d.status
            return True

        await eventually(crashing)
        await client.patch(
            Deployment,
            "fix",
            {"spec": {"template": {"spec": {"containers": [{"name": "web", "command": None}]}}}},
        )
        await rolled_out(client, "fix", 3)
        rss = {
            rs.metadata.annotations["deployment.kubernetes.io/revision"]: rs
            async for rs in client.list(ReplicaSet)
        }
        assert rss["1"].spec.replicas == 0 and rss["2"].status.availableReplicas == 3
        await client.close()


async def test_a_replicaset_adopts_orphans_and_releases_relabelled_pods(client: AsyncClient) -> None:
    """ClaimPods: a matching Pod without a controller is adopted (and counted, so one fewer is
    created); one of its own relabelled out of the selector is released and replaced."""
    stray = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "stray", "labels": {"app": "rs"}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]},
    }
    await client.create(Pod.from_dict(stray))
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "rs"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "rs"}},
            "template": {
                "metadata": {"labels": {"app": "rs"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]},
            },
        },
    }
    created = await client.create(ReplicaSet.from_dict(rs))

    async def two_owned() -> list[Pod]:
        pods = [p async for p in client.list(Pod, labels={"app": "rs"})]
        assert len(pods) == 2 and all(p.metadata.ownerReferences for p in pods), pods
        return pods

    pods = await eventually(two_owned)
    adopted = next(p for p in pods if p.metadata.name == "stray")
    ref = adopted.metadata.ownerReferences[0]
    assert (ref.kind, ref.name, ref.uid, ref.controller, ref.blockOwnerDeletion) == (
        "ReplicaSet",
        "rs",
        created.metadata.uid,
        True,
        True,
    )
    # relabel one out of the selector: released (no owner), and a replacement is created
    await client.patch(Pod, "stray", {"metadata": {"labels": {"app": "gone"}}})

    async def released() -> bool:
        gone = await client.get(Pod, "stray")
        assert not gone.metadata.ownerReferences, gone.metadata
        assert len([p async for p in client.list(Pod, labels={"app": "rs"})]) == 2
        return True

    await eventually(released)


async def test_terminating_replicas_are_counted(env: Environment, client: AsyncClient) -> None:
    """apps/v1 ReplicaSets and Deployments report `terminatingReplicas` (0 once every Pod is gone or
    running), as kube-controller-manager v1.37 does; the workload corpus found the emulator lacking it."""
    await client.create(Deployment.from_dict(deployment("term", replicas=2)))
    d = await rolled_out(client, "term", 2)
    [raw] = [rs async for rs in client.list(ReplicaSet, labels={"app": "term"})]
    assert raw.status is not None and raw.status.terminatingReplicas == 0
    assert d.status is not None and d.status.terminatingReplicas == 0
