"""The Memcached pattern against the emulator: an operator (pyop runtime) owns a Deployment per custom
resource, sizes it from the spec and reports Available once the Deployment is available."""

from __future__ import annotations

from pathlib import Path

from lightkube.models.apps_v1 import DeploymentSpec
from lightkube.models.core_v1 import Container, PodSpec, PodTemplateSpec
from lightkube.models.meta_v1 import LabelSelector, ObjectMeta
from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.core_v1 import Pod

from pyscaffold_op.apimachinery import Condition, set_condition
from pyscaffold_op.envtest import Environment, KubeletSimulator
from pyscaffold_op.runtime import Client, Manager, ManagerOptions, NotFound, Request, Result, controllerutil
from pyscaffold_op.testing import eventually
from tests.runtime.widgets import Widget, WidgetStatus, widget

CRDS = Path(__file__).parents[1] / "runtime" / "crds"


class MemcachedReconciler:
    """Widget -> Deployment of `spec.size` memcached pods; Available mirrors the Deployment's."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def reconcile(self, request: Request) -> Result | None:
        try:
            w = await self.client.get(Widget, request.name, namespace=request.namespace)
        except NotFound:
            return None
        labels = {"app": "memcached", "widget": w.metadata.name}
        spec = DeploymentSpec(
            replicas=w.spec.size,
            selector=LabelSelector(matchLabels=labels),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels=labels),
                spec=PodSpec(containers=[Container(name="memcached", image="memcached:1.6", args=["-m=64"])]),
            ),
        )
        dep = Deployment(metadata=ObjectMeta(name=w.metadata.name, namespace=request.namespace), spec=spec)

        def mutate(d: Deployment) -> None:
            d.spec.replicas = w.spec.size
            d.spec.selector, d.spec.template = spec.selector, spec.template
            controllerutil.set_controller_reference(w, d)

        dep, _op = await controllerutil.create_or_update(self.client, dep, mutate)
        available = (
            next((c for c in (dep.status.conditions or []) if c.type == "Available"), None)
            if dep.status
            else None
        )
        ok = (
            available is not None
            and available.status == "True"
            and (dep.status.availableReplicas or 0) == w.spec.size
        )
        w.status = w.status or WidgetStatus()
        w.status.observed_size = dep.status.availableReplicas or 0 if dep.status else 0
        set_condition(
            w.status.conditions,
            Condition(
                type="Available",
                status="True" if ok else "False",
                reason="DeploymentAvailable" if ok else "DeploymentUnavailable",
                message=f"{w.status.observed_size}/{w.spec.size} memcached pods available",
                observed_generation=w.metadata.generation,
            ),
        )
        await self.client.status().update(w)
        return None

    def setup_with_manager(self, mgr: Manager) -> None:
        mgr.builder().for_(Widget).owns(Deployment).complete(self)


async def test_memcached_operator_reports_available_and_scales() -> None:
    kubelet = KubeletSimulator(pending_seconds=0.01, stop_seconds=0.01)
    async with Environment(crd_paths=[CRDS], kubelet=kubelet, workloads=True) as env:
        mgr = Manager(env.config, ManagerOptions(health_probe_bind_address="0", metrics_bind_address="0"))
        MemcachedReconciler(mgr.client).setup_with_manager(mgr)
        async with mgr.running():
            await mgr.client.create(widget("cache", size=2))

            async def available(size: int) -> Widget:
                w = await mgr.api_reader.get(Widget, "cache", namespace="default")
                cond = next(
                    (c for c in (w.status.conditions if w.status else []) if c.type == "Available"), None
                )
                assert cond is not None and cond.status == "True", w.status
                assert w.status.observed_size == size and cond.observed_generation == w.metadata.generation
                return w

            await eventually(lambda: available(2))
            pods = await mgr.api_reader.list(Pod, namespace="default", labels={"widget": "cache"})
            assert len(pods) == 2 and {p.status.phase for p in pods} == {"Running"}

            for size in (4, 1):
                w = await mgr.api_reader.get(Widget, "cache", namespace="default")
                w.spec.size = size
                await mgr.client.update(w)
                await eventually(lambda size=size: available(size))

                async def pods_left(size: int = size) -> bool:
                    pods = await mgr.api_reader.list(Pod, namespace="default", labels={"widget": "cache"})
                    live = [p for p in pods if not p.metadata.deletionTimestamp]
                    assert len(live) == size, len(live)
                    return True

                await eventually(pods_left)
