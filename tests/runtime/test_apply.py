"""`client.apply` / `client.status().apply` with apply configurations (`apply_configuration`): only the
fields set are sent and owned, conflicts between field owners, force, the status subresource."""

from __future__ import annotations

from typing import Any

import pytest

from pyscaffold_op.apimachinery import Condition
from pyscaffold_op.runtime import Client, Conflict, apply_configuration
from pyscaffold_op.runtime.client.apply import apply_body

from .widgets import Widget, WidgetSpec, WidgetStatus


def _owned_spec_fields(widget: Widget, manager: str) -> set[str]:
    """The spec fields `manager` owns, read from managedFields (fieldsV1 `f:<name>` keys)."""
    owned: set[str] = set()
    for entry in widget.metadata.managed_fields or []:
        if entry.get("manager") == manager:
            spec: dict[str, Any] = entry.get("fieldsV1", {}).get("f:spec", {})
            owned |= {key.removeprefix("f:") for key in spec}
    return owned


def test_only_the_fields_set_are_in_the_body() -> None:
    cfg = apply_configuration(Widget, "w", "default")
    cfg.spec = WidgetSpec(color="red")
    body = apply_body(cfg, api_version="test.pyop.io/v1", kind="Widget")
    # size has a default (1) but was not set: sending it would claim it
    assert body == {
        "apiVersion": "test.pyop.io/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"color": "red"},
    }


def test_list_items_are_sent_whole_and_status_only_sends_status() -> None:
    cfg = apply_configuration(Widget, "w", "default")
    cfg.spec = WidgetSpec(size=3)
    cfg.status = WidgetStatus(conditions=[Condition(type="Ready", status="True", reason="Done")])
    body = apply_body(cfg, api_version="test.pyop.io/v1", kind="Widget", only="status")
    assert "spec" not in body
    (condition,) = body["status"]["conditions"]
    # a Condition's lastTransitionTime and message are defaults, but the CRD requires them
    assert {"type", "status", "reason", "message", "lastTransitionTime"} <= condition.keys()
    assert "observedSize" not in body["status"]


async def test_apply_creates_then_conflicts_with_another_owner_until_forced(api: Client) -> None:
    mine = apply_configuration(Widget, "applied", "default")
    mine.spec = WidgetSpec(size=2)
    created = await api.apply(mine, field_owner="widget-controller")
    assert created.spec.size == 2 and created.metadata.uid
    assert created is not mine and mine.metadata.uid is None  # the configuration stays reusable
    assert _owned_spec_fields(created, "widget-controller") == {"size"}

    theirs = apply_configuration(Widget, "applied", "default")
    theirs.spec = WidgetSpec(size=5, color="green")
    with pytest.raises(Conflict) as raised:
        await api.apply(theirs, field_owner="someone-else")
    assert "size" in str(raised.value)

    taken = await api.apply(theirs, field_owner="someone-else", force=True)
    assert (taken.spec.size, taken.spec.color) == (5, "green")
    assert _owned_spec_fields(taken, "someone-else") == {"size", "color"}
    assert _owned_spec_fields(taken, "widget-controller") == set()


async def test_status_apply_sets_status_and_leaves_spec(api: Client) -> None:
    cfg = apply_configuration(Widget, "with-status", "default")
    cfg.spec = WidgetSpec(size=4)
    await api.apply(cfg, field_owner="owner")

    status = apply_configuration(Widget, "with-status", "default")
    status.status = WidgetStatus(observed_size=4)
    updated = await api.status().apply(status, field_owner="owner", force=True)
    assert updated.status is not None and updated.status.observed_size == 4
    assert updated.spec.size == 4
    assert any(e.get("subresource") == "status" for e in updated.metadata.managed_fields or [])


async def test_dry_run_apply_changes_nothing(api: Client) -> None:
    cfg = apply_configuration(Widget, "dry", "default")
    cfg.spec = WidgetSpec(size=7)
    answered = await api.apply(cfg, field_owner="owner", dry_run=True)
    assert answered.spec.size == 7
    assert await api.list(Widget, "default") == []


async def test_apply_needs_a_field_owner(api: Client) -> None:
    cfg = apply_configuration(Widget, "nameless-owner", "default")
    with pytest.raises(ValueError, match="field_manager"):
        await api.apply(cfg)


async def test_apply_takes_only_apply_configurations(api: Client) -> None:
    body: Any = {"apiVersion": "test.pyop.io/v1", "kind": "Widget", "metadata": {"name": "raw"}}
    with pytest.raises(TypeError, match="patch_type='apply'"):
        await api.apply(body, field_owner="owner")
