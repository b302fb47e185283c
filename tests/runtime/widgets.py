"""A tiny custom resource for the runtime's tests (CRD in crds/widgets.yaml)."""

from __future__ import annotations

from pyscaffold_op.apimachinery import Condition, CustomResource, GroupVersionKind, KubeModel


class WidgetSpec(KubeModel):
    size: int = 1
    color: str = "blue"


class WidgetStatus(KubeModel):
    observed_size: int | None = None
    reconciles: int | None = None
    conditions: list[Condition] = []


class Widget(CustomResource):
    gvk = GroupVersionKind("test.pyop.io", "v1", "Widget")
    spec: WidgetSpec = WidgetSpec()
    status: WidgetStatus | None = None


class Gadget(CustomResource):
    """Cluster-scoped, to check scope rules."""

    gvk = GroupVersionKind("test.pyop.io", "v1", "Gadget")
    namespaced = False
    spec: WidgetSpec = WidgetSpec()


def widget(name: str, namespace: str = "default", size: int = 1, **labels: str) -> Widget:
    return Widget.model_validate(
        {"metadata": {"name": name, "namespace": namespace, "labels": labels}, "spec": {"size": size}}
    )
