"""The shared API machinery: plurals, CustomResource type metadata, wire form, conditions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from pyscaffold_op.apimachinery import (
    Condition,
    CustomResource,
    Duration,
    GroupVersionKind,
    Int32,
    Int64,
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
    assert set_condition(
        conditions, Condition(type="Ready", status="False", reason="Starting", last_transition_time=first)
    )
    assert not set_condition(
        conditions, Condition(type="Ready", status="False", reason="Starting", last_transition_time=later)
    )
    assert set_condition(
        conditions, Condition(type="Ready", status="False", reason="Waiting", last_transition_time=later)
    )
    assert conditions[0].last_transition_time == first
    assert set_condition(
        conditions, Condition(type="Ready", status="True", reason="Done", last_transition_time=later)
    )
    ready = find_condition(conditions, "Ready")
    assert ready is not None and ready.last_transition_time == later
    assert remove_condition(conditions, "Ready") and not conditions


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"type": "Ready", "status": "True"}, "reason"),  # metav1.Condition requires a reason
        ({"type": "Ready", "status": "True", "reason": ""}, "at least 1 character"),
        ({"type": "Ready", "status": "True", "reason": "not valid"}, "pattern"),
        ({"type": "Ready", "status": "True", "reason": "1Starts"}, "pattern"),
        ({"type": "not a type", "status": "True", "reason": "Ok"}, "pattern"),
        ({"type": "Ready", "status": "Maybe", "reason": "Ok"}, "'True', 'False' or 'Unknown'"),
        ({"type": "Ready", "status": "True", "reason": "Ok", "observedGeneration": -1}, "greater than"),
        ({"type": "Ready", "status": "True", "reason": "Ok", "observedGeneration": 2**63}, "int64"),
    ],
)
def test_condition_validates_like_the_api_server(fields: dict, error: str) -> None:
    with pytest.raises(ValidationError, match=error):
        Condition.model_validate(fields)


def test_condition_wire_form_has_every_required_field() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    condition = Condition(
        type="example.com/Synced", status="True", reason="Ok,Done:1", last_transition_time=at
    )
    assert condition.model_dump(mode="json", exclude_none=True) == {
        "type": "example.com/Synced",
        "status": "True",
        "reason": "Ok,Done:1",
        "message": "",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }


def test_int32_int64_check_their_range() -> None:
    class Sizes(KubeModel):
        small: Int32
        big: Int64

    assert Sizes(small=2**31 - 1, big=-(2**63)).small == 2**31 - 1
    with pytest.raises(ValidationError, match="does not fit in an int32"):
        Sizes(small=2**31, big=0)
    with pytest.raises(ValidationError, match="does not fit in an int64"):
        Sizes(small=0, big=2**63)


@pytest.mark.parametrize(
    ("wire", "value", "back"),
    [
        ("1h30m", timedelta(hours=1, minutes=30), "1h30m"),
        ("90m", timedelta(minutes=90), "1h30m"),
        ("1.5s", timedelta(seconds=1, milliseconds=500), "1.5s"),
        ("1500ms", timedelta(seconds=1, milliseconds=500), "1.5s"),
        ("0s", timedelta(0), "0s"),
        ("-2m", timedelta(minutes=-2), "-2m"),
    ],
)
def test_duration_and_timedelta_speak_go_durations(wire: str, value: timedelta, back: str) -> None:
    class Timing(KubeModel):
        typed: Duration
        plain: timedelta
        optional: timedelta | None = None

    timing = Timing.model_validate({"typed": wire, "plain": wire, "optional": wire})
    assert timing.typed == timing.plain == timing.optional == value
    assert timing.model_dump(mode="json") == {"typed": back, "plain": back, "optional": back}
    assert Timing(typed=value, plain=value).model_dump(mode="json")["plain"] == back


def test_duration_refuses_what_go_refuses() -> None:
    class Timing(KubeModel):
        timeout: Duration

    with pytest.raises(ValidationError, match="not a Go duration"):
        Timing.model_validate({"timeout": "PT1H"})
    with pytest.raises(ValidationError, match="not a Go duration"):
        Timing.model_validate({"timeout": "5 minutes"})


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
