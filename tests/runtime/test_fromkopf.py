"""What kopf leaves on an object, and the patch that removes it (the takeover against a real kopf
operator is examples/kopf/test_kopf_takeover.py)."""

from __future__ import annotations

from typing import Any

from pyscaffold_op.runtime import KopfMarks, release_from_kopf
from pyscaffold_op.runtime.controller.fromkopf import KOPF_FINALIZER

from .widgets import Widget

KOPF_HANDLED: dict[str, Any] = {
    "apiVersion": "test.pyop.io/v1",
    "kind": "Widget",
    "metadata": {
        "name": "w",
        "namespace": "default",
        "resourceVersion": "7",
        "finalizers": ["example.com/mine", KOPF_FINALIZER],
        "annotations": {
            "kopf.zalando.org/last-handled-configuration": '{"spec": {}}',
            "kopf.zalando.org/create_fn": '{"retries": 2}',
            "kopf.zalando.org/touch-dummy": "2020-01-01",
            "example.com/keep": "yes",
        },
    },
    "spec": {"size": 1},
    "status": {"kopf": {"progress": {}}, "create_fn": {"children": ["x"]}},
}


def test_the_patch_removes_kopfs_marks_only_and_is_guarded_by_the_version() -> None:
    assert KopfMarks().found(KOPF_HANDLED) == {
        "metadata": {
            "resourceVersion": "7",
            "finalizers": ["example.com/mine"],
            "annotations": {
                "kopf.zalando.org/create_fn": None,
                "kopf.zalando.org/last-handled-configuration": None,
                "kopf.zalando.org/touch-dummy": None,
            },
        },
        "status": {"kopf": None},  # kopf's storage, not its handlers' results (create_fn stays)
    }
    clean = {"metadata": {"name": "w", "finalizers": ["example.com/mine"]}, "status": {"create_fn": {}}}
    assert not KopfMarks().on(clean)


def test_an_operator_with_its_own_kopf_settings_names_them() -> None:
    obj = {"metadata": {"finalizers": ["acme.io/kopf"], "annotations": {"acme.io/last-handled": "{}"}}}
    assert not KopfMarks().on(obj)
    marks = KopfMarks(finalizer="acme.io/kopf", annotation_prefix="acme.io/", status_field=None)
    assert marks.found(obj)["metadata"] == {
        "resourceVersion": None,
        "finalizers": None,  # the last finalizer: the field goes
        "annotations": {"acme.io/last-handled": None},
    }


class FakeClient:
    def __init__(self) -> None:
        self.patches: list[tuple[str, Any]] = []

    async def patch(self, kind: type, name: str, patch: Any, *, namespace: str | None = None) -> Any:
        self.patches.append(("main", patch))
        return None

    def status(self) -> FakeClient:
        return self


async def test_release_writes_once_and_status_through_its_subresource_too() -> None:
    client = FakeClient()
    assert await release_from_kopf(client, KOPF_HANDLED, kind=Widget)
    assert [where for where, _ in client.patches] == ["main", "main"]  # the second via status()
    assert client.patches[1][1] == {"status": {"kopf": None}}
    client.patches.clear()
    assert not await release_from_kopf(client, {"metadata": {"name": "w"}}, kind=Widget)
    assert client.patches == []


def test_adopt_is_kopfs() -> None:
    from pyscaffold_op.apimachinery import ObjectMeta
    from pyscaffold_op.models.core_v1 import Pod
    from pyscaffold_op.runtime import controllerutil

    owner = Widget.model_validate(
        {"metadata": {"name": "w", "namespace": "ns", "uid": "u-1", "labels": {"app": "a", "tier": "t"}}}
    )
    pod = Pod(metadata=ObjectMeta(labels={"tier": "mine"}))
    controllerutil.adopt(owner, pod)
    assert (pod.metadata.namespace, pod.metadata.generate_name) == ("ns", "w-")
    assert pod.metadata.labels == {"app": "a", "tier": "mine"}  # the child's own label wins
    [ref] = pod.metadata.owner_references or []
    assert (ref.kind, ref.name, ref.uid, ref.controller) == ("Widget", "w", "u-1", True)
    named = Pod(metadata=ObjectMeta(name="given"))
    controllerutil.adopt(owner, named, labels=False)
    assert named.metadata.generate_name is None and not named.metadata.labels
