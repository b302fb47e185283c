"""The official `kubernetes` client and lightkube's sync client against a server on its own thread."""

from __future__ import annotations

import pytest

from pyscaffold_op.envtest import Environment
from tests.envtest.lightkube_client import lightkube_client, lightkube_config, sync_transport

from .conftest import at


def test_kubernetes_client(thread_env: Environment) -> None:
    import kubernetes  # a test dependency (`.[test]`): missing means a broken set-up, not a skip
    from kubernetes.client.rest import ApiException

    api_client = kubernetes.config.new_client_from_config(config_file=str(thread_env.kubeconfig_path))
    core = kubernetes.client.CoreV1Api(api_client)
    cm = kubernetes.client.V1ConfigMap(metadata=kubernetes.client.V1ObjectMeta(name="k8s"), data={"a": "1"})
    created = core.create_namespaced_config_map("default", cm)
    assert created.metadata.resource_version
    assert core.read_namespaced_config_map("k8s", "default").data == {"a": "1"}
    names = [i.metadata.name for i in core.list_namespaced_config_map("default").items]
    assert "k8s" in names
    core.patch_namespaced_config_map("k8s", "default", {"data": {"b": "2"}})
    assert core.read_namespaced_config_map("k8s", "default").data == {"a": "1", "b": "2"}
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map("default", cm)
    assert err.value.status == 409
    # watch with the official client, bounded by timeoutSeconds
    w = kubernetes.watch.Watch()
    events = [e["type"] for e in w.stream(core.list_namespaced_config_map, "default", timeout_seconds=1)]
    assert "ADDED" in events
    custom = kubernetes.client.CustomObjectsApi(api_client)
    custom.create_namespaced_custom_object(
        "cnat.programming-kubernetes.info", "v1alpha1", "default", "ats", at("k8s")
    )
    got = custom.get_namespaced_custom_object(
        "cnat.programming-kubernetes.info", "v1alpha1", "default", "ats", "k8s"
    )
    assert got["spec"]["replicas"] == 1
    custom.patch_namespaced_custom_object_status(
        "cnat.programming-kubernetes.info", "v1alpha1", "default", "ats", "k8s", {"status": {"phase": "DONE"}}
    )
    core.delete_namespaced_config_map("k8s", "default")
    apps = kubernetes.client.AppsV1Api(api_client)
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    d = apps.create_namespaced_deployment("default", dep)
    assert d.metadata.generation == 1 and d.spec.replicas == 1
    scale = apps.read_namespaced_deployment_scale("web", "default")
    assert scale.spec.replicas == 1
    api_client.close()


def test_lightkube_sync_client(thread_env: Environment) -> None:
    from lightkube import Client
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import Secret

    for transport in (None, sync_transport(thread_env)):
        client = Client(lightkube_config(thread_env), transport=transport)
        name = "sync-" + ("in" if transport else "http")
        client.create(Secret(metadata=ObjectMeta(name=name), stringData={"k": "v"}))
        assert client.get(Secret, name).type == "Opaque"
        client.delete(Secret, name)


async def test_lightkube_apply_paging_and_status(env: Environment) -> None:
    from lightkube.generic_resource import create_namespaced_resource
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ConfigMap
    from lightkube.types import PatchType

    client = lightkube_client(env)
    for i in range(5):
        await client.create(ConfigMap(metadata=ObjectMeta(name=f"page-{i}", labels={"p": "y"})))
    names = [c.metadata.name async for c in client.list(ConfigMap, labels={"p": "y"}, chunk_size=2)]
    assert names == [f"page-{i}" for i in range(5)]
    applied = await client.apply(
        ConfigMap(metadata=ObjectMeta(name="page-0"), data={"k": "v"}), field_manager="pyop-test", force=True
    )
    assert applied.data == {"k": "v"} and applied.metadata.labels == {"p": "y"}
    At = create_namespaced_resource("cnat.programming-kubernetes.info", "v1alpha1", "At", "ats")
    created = await client.create(At(at("lk")))
    assert created["spec"]["mode"] == "Once"
    await client.patch(At.Status, "lk", {"status": {"phase": "DONE"}}, patch_type=PatchType.MERGE)
    got = await client.get(At, "lk")
    assert got.status == {"phase": "DONE"}
    await client.close()


async def test_in_process_transport_across_threads() -> None:
    import asyncio

    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ConfigMap

    env = Environment().start_in_thread()
    try:
        client = lightkube_client(env)  # server loop in another thread: calls hop over
        await client.create(ConfigMap(metadata=ObjectMeta(name="xthread")))

        async def first() -> str:
            async for _typ, obj in client.watch(ConfigMap, namespace="default"):
                return obj.metadata.name
            return ""

        assert await asyncio.wait_for(first(), 3) == "xthread"
        env.drop_watches()
        env.compact()
        await client.close()
    finally:
        await asyncio.to_thread(env.stop)
