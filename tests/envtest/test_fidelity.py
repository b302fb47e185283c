"""Gaps real clients hit (issue 14): resources and subresources served, DELETE bodies, metadata-only
reads, graceful Pod deletion, following logs, evictions and bindings, the newline after JSON bodies."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator

import httpx2
import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from lightkube import AsyncClient
from lightkube.models.core_v1 import Container, PodSpec
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.models.policy_v1 import PodDisruptionBudgetSpec
from lightkube.resources.core_v1 import Pod
from lightkube.resources.policy_v1 import PodDisruptionBudget

from pyscaffold_op.envtest import Environment, KubeletSimulator
from pyscaffold_op.testing import eventually
from tests.envtest.lightkube_client import lightkube_client
from tests.envtest.test_kubectl_csr import csr_manifest

METADATA_LIST = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"
METADATA = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io,application/json"


def sleeper(name: str, **labels: str) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, labels=labels or None),
        spec=PodSpec(
            containers=[Container(name="c", image="busybox", command=["sh", "-c", "echo up; sleep 300"])]
        ),
    )


@pytest.fixture
async def env() -> AsyncIterator[Environment]:
    async with Environment(kubelet=KubeletSimulator(pending_seconds=0.01, stop_seconds=0.05)) as e:
        yield e


@pytest.fixture
async def client(env: Environment) -> AsyncIterator[AsyncClient]:
    c = lightkube_client(env, in_process=False)
    yield c
    await c.close()


async def running(client: AsyncClient, name: str) -> Pod:
    async def check() -> Pod:
        p = await client.get(Pod, name)
        assert p.status.phase == "Running" and p.status.containerStatuses[0].ready, p.status
        return p

    return await eventually(check)


@pytest.fixture(scope="module")
def thread_env() -> Iterator[Environment]:
    e = Environment().start_in_thread()
    yield e
    e.stop()


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_api_resources_lists_the_missing_kinds(thread_env: Environment) -> None:
    out = subprocess.run(
        ["kubectl", "--kubeconfig", str(thread_env.kubeconfig_path), "api-resources", "-o", "wide"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:]}
    assert rows["replicationcontrollers"][1] == "rc" and rows["podtemplates"][1] == "v1"
    assert rows["certificatesigningrequests"][1:3] == ["csr", "certificates.k8s.io/v1"]
    assert rows["apiservices"][1] == "apiregistration.k8s.io/v1"
    assert rows["csistoragecapacities"][1] == "storage.k8s.io/v1"
    # a valid request: the emulator validates spec.request as a PEM certificate request
    subprocess.run(
        ["kubectl", "--kubeconfig", str(thread_env.kubeconfig_path), "create", "-f", "-"],
        input=csr_manifest("me"),
        text=True,
        check=True,
        capture_output=True,
        timeout=30,
    )
    names = subprocess.run(
        ["kubectl", "--kubeconfig", str(thread_env.kubeconfig_path), "get", "csr", "-o", "name"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    assert names.strip() == "certificatesigningrequest.certificates.k8s.io/me"


def test_subresources_in_discovery_and_delete_bodies(thread_env: Environment) -> None:
    with k8s_config.new_client_from_config(str(thread_env.kubeconfig_path)) as api:
        core = k8s.CoreV1Api(api)
        resources = {r.name: r for r in core.get_api_resources().resources}
        assert resources["pods/log"].verbs == ["get"]
        assert (resources["pods/eviction"].group, resources["pods/eviction"].kind) == ("policy", "Eviction")
        assert resources["pods/binding"].verbs == ["create"]
        token = resources["serviceaccounts/token"]
        assert (token.group, token.version, token.kind) == ("authentication.k8s.io", "v1", "TokenRequest")
        # these registries answer a DELETE with the deleted object, not a Status
        core.create_namespaced_service(
            "default", {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}
        )
        core.create_namespaced_service_account("default", {"metadata": {"name": "robot"}})
        core.create_namespaced_pod_template(
            "default",
            {"metadata": {"name": "t"}, "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}},
        )
        core.create_namespaced_config_map("default", {"metadata": {"name": "cm"}})
        for delete, name, kind in (
            (core.delete_namespaced_service, "s", "Service"),
            (core.delete_namespaced_service_account, "robot", "ServiceAccount"),
            (core.delete_namespaced_pod_template, "t", "PodTemplate"),
            (core.delete_namespaced_config_map, "cm", "Status"),
        ):
            resp = delete(name, "default", _preload_content=False)
            body = json.loads(resp.data)
            assert body["kind"] == kind, body
            assert resp.data.endswith(b"\n")  # like Go's json.Encoder


async def test_metadata_only_list_get_and_watch(env: Environment, client: AsyncClient) -> None:
    await client.create(sleeper("meta", app="m"))
    async with httpx2.AsyncClient(base_url=env.url, timeout=10) as http:
        r = await http.get("/api/v1/namespaces/default/pods", headers={"Accept": METADATA_LIST})
        body = r.json()
        assert body["kind"] == "PartialObjectMetadataList" and body["apiVersion"] == "meta.k8s.io/v1"
        [item] = body["items"]
        assert item["kind"] == "PartialObjectMetadata" and set(item) == {"kind", "apiVersion", "metadata"}
        assert item["metadata"]["labels"] == {"app": "m"} and body["metadata"]["resourceVersion"]
        r = await http.get("/api/v1/namespaces/default/pods/meta", headers={"Accept": METADATA})
        assert r.json()["kind"] == "PartialObjectMetadata" and "spec" not in r.json()
        # only the List form for a single object: 406
        r = await http.get(
            "/api/v1/namespaces/default/pods/meta",
            headers={"Accept": "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"},
        )
        assert r.status_code == 406 and r.json()["reason"] == "NotAcceptable"
        rv = body["metadata"]["resourceVersion"]
        async with http.stream(
            "GET",
            "/api/v1/namespaces/default/pods",
            params={"watch": "1", "resourceVersion": rv, "timeoutSeconds": "5"},
            headers={"Accept": METADATA},
        ) as stream:
            await client.patch(Pod, "meta", {"metadata": {"labels": {"seen": "yes"}}})
            async for line in stream.aiter_lines():
                ev = json.loads(line)
                if ev["object"]["metadata"]["labels"].get("seen"):
                    assert ev["type"] == "MODIFIED" and ev["object"]["kind"] == "PartialObjectMetadata"
                    assert "status" not in ev["object"]
                    break


async def test_graceful_pod_deletion(env: Environment, client: AsyncClient) -> None:
    await client.create(sleeper("slow"))
    pod = await running(client, "slow")
    seen: list[tuple[str, str | None, bool]] = []

    async def watch() -> None:
        async for typ, p in client.watch(
            Pod, namespace="default", resource_version=pod.metadata.resourceVersion
        ):
            if p.metadata.name == "slow":
                ready = any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])
                seen.append((typ, p.status.phase, ready))
                if typ == "DELETED":
                    return

    watching = asyncio.create_task(watch())
    await asyncio.sleep(0)
    await client.delete(Pod, "slow")
    after = await client.get(Pod, "slow")  # still there: terminating
    assert after.metadata.deletionTimestamp and after.metadata.deletionGracePeriodSeconds == 30
    await asyncio.wait_for(watching, 10)
    assert seen[0] == ("MODIFIED", "Running", True)  # deletionTimestamp set
    assert ("MODIFIED", "Failed", False) in seen  # the kubelet stopped the containers (SIGTERM, 143)
    assert seen[-1][0] == "DELETED"
    # grace period 0 removes at once; a Pod no kubelet runs is removed at once too
    await client.create(sleeper("fast"))
    await running(client, "fast")
    await client.delete(Pod, "fast", grace_period=0)
    assert [p.metadata.name async for p in client.list(Pod)] == []


async def test_logs_follow_until_the_pod_stops(client: AsyncClient) -> None:
    await client.create(sleeper("talker"))
    await running(client, "talker")
    lines: list[str] = []

    async def follow() -> None:
        async for line in client.log("talker", follow=True):
            lines.append(line)

    following = asyncio.create_task(follow())
    await eventually(lambda: asyncio.sleep(0, result=lines == ["up\n"]))
    assert not following.done()  # still following the running container
    await client.delete(Pod, "talker")
    await asyncio.wait_for(following, 10)
    assert lines == ["up\n"]


async def test_eviction_respects_disruption_budgets(client: AsyncClient) -> None:
    await client.create(sleeper("guarded", app="g"))
    await running(client, "guarded")
    await client.create(
        PodDisruptionBudget(
            metadata=ObjectMeta(name="keep-one"),
            spec=PodDisruptionBudgetSpec(minAvailable=1, selector={"matchLabels": {"app": "g"}}),
        )
    )
    eviction = Pod.Eviction(metadata=ObjectMeta(name="guarded", namespace="default"))
    with pytest.raises(Exception) as refused:
        await client.create(eviction, "guarded", namespace="default")
    assert getattr(refused.value, "status", None) and refused.value.status.code == 429
    await client.delete(PodDisruptionBudget, "keep-one")
    await client.create(eviction, "guarded", namespace="default")
    assert (await client.get(Pod, "guarded")).metadata.deletionTimestamp


def test_binding_assigns_a_node(thread_env: Environment) -> None:
    # no kubelet: nothing binds pods but this (what a scheduler sends); the answer is a Status
    with k8s_config.new_client_from_config(str(thread_env.kubeconfig_path)) as api:
        core = k8s.CoreV1Api(api)
        core.create_namespaced_pod(
            "default",
            {"metadata": {"name": "unbound"}, "spec": {"containers": [{"name": "c", "image": "x"}]}},
        )
        binding = {
            "metadata": {"name": "unbound"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
        }
        resp = core.create_namespaced_pod_binding("unbound", "default", binding, _preload_content=False)
        assert resp.status == 201 and json.loads(resp.data)["status"] == "Success"
        assert core.read_namespaced_pod("unbound", "default").spec.node_name == "n1"
        with pytest.raises(k8s.ApiException) as again:
            core.create_namespaced_pod_binding("unbound", "default", binding, _preload_content=False)
        assert again.value.status == 409 and "already assigned" in json.loads(again.value.body)["message"]
        core.delete_namespaced_pod("unbound", "default", grace_period_seconds=0)
