"""The runtime with the typed built-in models (`pyscaffold_op.models`): client, cache, owns(),
controllerutil (mixing them with lightkube's: tests/runtime/adapters/test_lightkube.py)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from pyscaffold_op.apimachinery import ObjectMeta
from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.apps_v1 import Deployment, DeploymentSpec
from pyscaffold_op.models.core_v1 import ConfigMap, Container, ContainerPort, PodSpec, PodTemplateSpec
from pyscaffold_op.models.meta_v1 import LabelSelector
from pyscaffold_op.runtime import Client, NotFound, Request, controllerutil
from pyscaffold_op.testing import eventually

from .conftest import make_manager
from .widgets import Widget, widget


async def test_client_crud_with_typed_models(api: Client) -> None:
    cm = ConfigMap(metadata=ObjectMeta(name="typed", labels={"a": "b"}), data={"k": "v"})
    created = await api.create(cm)
    assert created is cm and cm.metadata.uid and cm.metadata.resource_version
    got = await api.get(ConfigMap, "typed", namespace="default")
    assert isinstance(got, ConfigMap) and got.data == {"k": "v"}
    got.data["k"] = "w"
    await api.update(got)
    assert (await api.get(ConfigMap, "typed", "default")).data == {"k": "w"}
    patched = await api.patch(ConfigMap, "typed", {"data": {"x": "y"}}, namespace="default")
    assert isinstance(patched, ConfigMap) and patched.data == {"k": "w", "x": "y"}
    applied = await api.patch(
        ConfigMap(metadata=ObjectMeta(name="applied", namespace="default"), data={"a": "1"}),
        patch_type="apply",
        field_manager="test",
    )
    assert applied.metadata.managed_fields and applied.data == {"a": "1"}
    assert [c.metadata.name for c in await api.list(ConfigMap, "default", labels={"a": "b"})] == ["typed"]
    await api.delete(ConfigMap, "typed", "default")
    with pytest.raises(NotFound):
        await api.get(ConfigMap, "typed", "default")


def _memcached_deployment(owner: Widget) -> Deployment:
    return Deployment(metadata=ObjectMeta(name=owner.metadata.name, namespace=owner.metadata.namespace))


def _mutate_for(owner: Widget, protocol: str | None = "TCP") -> Any:
    labels = {"app.kubernetes.io/name": "memcached", "app.kubernetes.io/instance": owner.metadata.name}

    def mutate(dep: Deployment) -> None:
        # like the Go closure: set the fields we own, keep what the server defaulted
        if dep.spec is None:
            dep.spec = DeploymentSpec(
                selector=LabelSelector(match_labels=labels),
                template=PodTemplateSpec(metadata=ObjectMeta(labels=labels), spec=PodSpec(containers=[])),
            )
        dep.spec.replicas = owner.spec.size
        pod = dep.spec.template.spec
        container = next((c for c in pod.containers if c.name == "memcached"), None)
        if container is None:
            container = Container(name="memcached")
            pod.containers.append(container)
        container.image = "memcached:1.6.26-alpine3.19"
        # protocol: the server defaults it, so leaving it out differs from what is read back
        container.ports = [ContainerPort(container_port=11211, name="memcached", protocol=protocol)]
        controllerutil.set_controller_reference(owner, dep)

    return mutate


async def test_memcached_style_create_or_update_sends_no_write_when_nothing_changed(
    env: Environment, api: Client
) -> None:
    """Second reconcile: the emulator defaulted the Deployment like a real server, so the typed model read
    back equals what mutate produces, and nothing is written."""
    writes: Counter[str] = Counter()
    store = env.store
    real_create, real_update = store.create, store.update

    def create(info: Any, *a: Any, **kw: Any) -> Any:
        writes[f"create {info.plural}"] += 1
        return real_create(info, *a, **kw)

    def update(info: Any, *a: Any, **kw: Any) -> Any:
        writes[f"update {info.plural}"] += 1
        return real_update(info, *a, **kw)

    store.create, store.update = create, update  # type: ignore[method-assign]
    owner = await api.create(widget("cache", size=2))
    results = []
    for _ in range(2):
        dep = _memcached_deployment(owner)
        _, result = await controllerutil.create_or_update(api, dep, _mutate_for(owner))
        results.append(result)
    assert results == [controllerutil.OperationResult.CREATED, controllerutil.OperationResult.UNCHANGED]
    assert writes["create deployments"] == 1 and writes["update deployments"] == 0
    stored = await api.get(Deployment, "cache", "default")
    assert stored.spec.replicas == 2
    assert stored.spec.template.spec.containers[0].ports[0].protocol == "TCP"
    assert stored.metadata.owner_references[0].kind == "Widget"
    # a real change is one update, after which the next reconcile is quiet again
    owner.spec.size = 3
    for expected in (controllerutil.OperationResult.UPDATED, controllerutil.OperationResult.UNCHANGED):
        _, result = await controllerutil.create_or_update(
            api, _memcached_deployment(owner), _mutate_for(owner)
        )
        assert result == expected
    assert writes["update deployments"] == 1


async def test_leaving_out_a_server_default_writes_on_every_reconcile_like_a_cluster(api: Client) -> None:
    owner = await api.create(widget("loop", size=1))
    results = set()
    for _ in range(3):
        mutate = _mutate_for(owner, protocol=None)
        _, result = await controllerutil.create_or_update(api, _memcached_deployment(owner), mutate)
        results.add(result)
    assert controllerutil.OperationResult.UPDATED in results
    assert controllerutil.OperationResult.UNCHANGED not in results


async def test_owns_a_typed_deployment_and_reads_it_from_the_cache(env: Environment, api: Client) -> None:
    mgr = make_manager(env)
    seen: list[Request] = []

    class Memcached:
        async def reconcile(self, request: Request) -> None:
            seen.append(request)
            owner = await mgr.client.get(Widget, request.name, request.namespace)
            await controllerutil.create_or_update(
                mgr.client, _memcached_deployment(owner), _mutate_for(owner)
            )

    mgr.builder().for_(Widget).owns(Deployment).complete(Memcached())
    async with mgr.running():
        await api.create(widget("owned", size=1))

        async def made() -> Deployment | None:
            try:
                return await mgr.client.get(Deployment, "owned", "default")  # served by the cache
            except NotFound:
                return None

        dep = await eventually(made)
        assert isinstance(dep, Deployment) and dep.spec.replicas == 1
        before = len(seen)
        await api.patch(Deployment, "owned", {"spec": {"replicas": 7}}, namespace="default")

        async def repaired() -> bool:
            return (await api.get(Deployment, "owned", "default")).spec.replicas == 1

        await eventually(repaired)  # the owned Deployment's event mapped back to its Widget
        assert len(seen) > before
