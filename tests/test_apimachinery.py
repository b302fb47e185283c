"""The shared API machinery: plurals, CustomResource type metadata, wire form, conditions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from pyscaffold_op.apimachinery import (
    Condition,
    CustomResource,
    GroupVersionKind,
    KubeModel,
    ObjectMeta,
    find_condition,
    remove_condition,
    set_condition,
)
from pyscaffold_op.apimachinery.naming import pluralize


@pytest.mark.parametrize(
    ("kind", "plural"),
    [
        ("At", "ats"),
        ("Policy", "policies"),
        ("Ingress", "ingresses"),
        ("Box", "boxes"),
        ("Fox", "foxes"),
        ("Human", "humans"),
        ("Person", "people"),
        ("Key", "keys"),
        ("Match", "matches"),
        ("Endpoints", "endpoints"),
    ],
)
def test_pluralize_like_kubebuilder(kind: str, plural: str) -> None:
    assert pluralize(kind) == plural


class WidgetSpec(KubeModel):
    replica_count: int = 1
    """How many."""


class Widget(CustomResource):
    gvk = GroupVersionKind("example.com", "v1", "Widget")
    spec: WidgetSpec = WidgetSpec()


def test_custom_resource_fills_type_meta_and_registers() -> None:
    widget = Widget(metadata=ObjectMeta(name="w"), spec=WidgetSpec(replica_count=3))
    assert widget.to_dict() == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"replicaCount": 3},
    }
    assert Widget.plural == "widgets" and Widget.namespaced is True
    assert CustomResource.registry[Widget.gvk] is Widget


def test_custom_resource_rejects_another_type() -> None:
    with pytest.raises(ValidationError, match="does not match"):
        Widget.model_validate({"apiVersion": "example.com/v2", "kind": "Widget"})
    with pytest.raises(ValidationError, match="does not match"):
        Widget.model_validate({"apiVersion": "example.com/v1", "kind": "Gadget"})


def test_object_meta_omits_empty_fields_and_keeps_unknown_keys() -> None:
    meta = ObjectMeta.model_validate({"name": "x", "labels": {}, "selfLink": "/kept"})
    assert meta.model_dump(mode="json", exclude_none=True) == {"name": "x", "selfLink": "/kept"}


def test_set_condition_moves_transition_time_only_on_status_change() -> None:
    first = datetime(2026, 1, 1, tzinfo=UTC)
    later = datetime(2026, 1, 2, tzinfo=UTC)
    conditions: list[Condition] = []
    assert set_condition(conditions, Condition(type="Ready", status="False", last_transition_time=first))
    assert not set_condition(conditions, Condition(type="Ready", status="False", last_transition_time=later))
    assert set_condition(
        conditions, Condition(type="Ready", status="False", reason="Waiting", last_transition_time=later)
    )
    assert conditions[0].last_transition_time == first
    assert set_condition(conditions, Condition(type="Ready", status="True", last_transition_time=later))
    ready = find_condition(conditions, "Ready")
    assert ready is not None and ready.last_transition_time == later
    assert remove_condition(conditions, "Ready") and not conditions


def test_lazy_exports_cover_all_and_keep_the_cli_import_light() -> None:
    import subprocess
    import sys

    import pyscaffold_op.apimachinery as apimachinery

    assert set(apimachinery.__all__) == set(apimachinery._MODULE_OF)
    for name in apimachinery.__all__:
        assert getattr(apimachinery, name) is not None
    probe = "import sys, pyscaffold_op.cli; print('pyscaffold_op.apimachinery.resource' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False", "the CLI start-up builds the pydantic API models"
