"""What changed: field_changed and matching() predicates, the opt-in ReconcileContext (attempt, old
object, diff), and the Warning Event a failed reconcile posts (kopf's filters, diff, retry and events)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.core_v1 import Event
from pyscaffold_op.runtime import (
    ABSENT,
    PRESENT,
    Change,
    Client,
    CreateEvent,
    DeleteEvent,
    ReconcileContext,
    Request,
    Result,
    UpdateEvent,
    diff,
    field_changed,
    matching,
)
from pyscaffold_op.runtime.objects.rawobj import RawObject
from pyscaffold_op.testing import FakeClock, eventually

from .conftest import make_manager
from .widgets import Widget, widget


def raw(obj: Widget) -> RawObject:
    return RawObject(
        obj.model_dump_json(by_alias=True, exclude_none=True).encode(), Widget.model_validate_json
    )


def test_field_changed_passes_updates_of_that_field_only() -> None:
    old = widget("w", size=1)
    bigger = old.model_copy(deep=True)
    bigger.spec.size = 2
    relabelled = old.model_copy(deep=True)
    relabelled.metadata.labels = {"x": "y"}
    pred = field_changed("spec.size")
    for make in (lambda o: o, raw):  # typed objects, and the informer's JSON
        assert pred.update(UpdateEvent(make(old), make(bigger)))
        assert not pred.update(UpdateEvent(make(old), make(relabelled)))
        assert not pred.update(UpdateEvent(make(old), make(old)))
    assert field_changed("metadata.labels").update(UpdateEvent(old, relabelled))
    assert field_changed("spec.color", "spec.size").update(UpdateEvent(old, bigger))
    assert pred.create(CreateEvent(old)) and pred.delete(DeleteEvent(old))  # other events pass
    with pytest.raises(ValueError, match="dotted wire names"):
        field_changed("spec..size")


def test_a_field_that_appears_or_goes_is_a_change_and_json_spelling_is_not() -> None:
    pred = field_changed("spec.extra")
    assert pred.update(UpdateEvent({"spec": {}}, {"spec": {"extra": None}}))
    assert pred.update(UpdateEvent({"spec": {"extra": 1}}, {"spec": {}}))
    assert not field_changed("spec.n").update(UpdateEvent({"spec": {"n": 1}}, {"spec": {"n": 1.0}}))


def test_matching_has_kopfs_label_and_annotation_semantics() -> None:
    obj = widget("w", app="db")
    obj.metadata.annotations = {"owner": "team-a"}
    assert matching(labels={"app": "db"}).matches(obj)
    assert not matching(labels={"app": "web"}).matches(obj)
    assert matching(labels={"app": PRESENT, "tier": ABSENT}).matches(obj)
    assert not matching(labels={"tier": PRESENT}).matches(obj)
    assert matching(annotations={"owner": lambda v: v is not None and v.startswith("team-")}).matches(obj)
    assert matching(labels={"tier": lambda v: v is None}).matches(obj)  # absent: called with None
    assert matching(when=lambda o: o.spec.size == 1).matches(obj)
    assert not matching(labels={"app": "db"}, when=lambda o: o.spec.size > 1).matches(obj)
    assert matching(labels={"app": "db"}).matches(raw(obj))  # from the JSON, no typed object built
    other = obj.model_copy(deep=True)
    other.metadata.labels = {}
    pred = matching(labels={"app": "db"})
    assert pred.update(UpdateEvent(other, obj)) and not pred.update(UpdateEvent(obj, other))  # the new one


def test_diff_is_kopfs_over_what_a_user_changes() -> None:
    old = {
        "metadata": {"name": "w", "resourceVersion": "1", "labels": {"a": "1"}},
        "spec": {"size": 1, "x": {"y": 1}},
    }
    new = {
        "metadata": {"name": "w", "resourceVersion": "2", "labels": {"a": "2"}},
        "spec": {"size": 1, "x": {"z": 2}, "items": [1, 2]},
        "status": {"observed": 1},
    }
    assert diff(old, new) == (
        Change("change", ("metadata", "labels", "a"), "1", "2"),
        Change("add", ("spec", "items"), None, [1, 2]),
        Change("remove", ("spec", "x", "y"), 1, None),
        Change("add", ("spec", "x", "z"), None, 2),
    )
    assert diff(None, {"spec": {"size": 1}}) == (Change("add", ("spec",), None, {"size": 1}),)


async def test_a_reconcile_taking_a_context_sees_the_attempt_the_old_object_and_the_diff(
    env: Environment, api: Client
) -> None:
    clock = FakeClock()
    seen: list[tuple[int, Any, tuple[Change, ...], bool]] = []

    class Reconciler:
        async def reconcile(self, request: Request, ctx: ReconcileContext) -> Result | None:
            old = ctx.old.spec.size if ctx.old is not None else None
            seen.append((ctx.attempt, old, ctx.diff(), ctx.changed("spec.size")))
            if ctx.object is not None and ctx.object.spec.color == "red" and ctx.attempt < 2:
                raise RuntimeError("red is hard")
            return None

    mgr = make_manager(env, clock=clock)
    mgr.builder().for_(Widget).complete(Reconciler())
    async with mgr.running():
        await api.create(widget("w", size=1))
        await eventually(lambda: len(seen) == 1)
        assert seen[0][:2] == (0, None) and seen[0][3]  # first since start: everything is new
        await api.patch(Widget, "w", {"spec": {"size": 3}}, namespace="default")
        await eventually(lambda: len(seen) == 2)
        assert seen[1] == (0, 1, (Change("change", ("spec", "size"), 1, 3),), True)
        await api.patch(Widget, "w", {"spec": {"color": "red"}}, namespace="default")
        await eventually(lambda: len(seen) == 3)
        await clock.wait_for_timers()
        clock.advance(1)
        await eventually(lambda: len(seen) == 4)
        await clock.wait_for_timers()
        clock.advance(1)
        await eventually(lambda: len(seen) == 5)
        attempts = [s[0] for s in seen[2:]]
        assert attempts == [0, 1, 2]  # kopf's retry: failures since the last success
        # a failed reconcile does not move `old`: the retries still see size 3 -> color change
        assert all(s[1] == 3 and not s[3] for s in seen[2:])
        assert seen[4][2] == (Change("change", ("spec", "color"), "blue", "red"),)


async def test_a_failed_reconcile_posts_a_warning_event_unless_turned_off(
    env: Environment, api: Client
) -> None:
    async def failing(request: Request) -> None:
        raise RuntimeError(f"cannot handle {request.name}")

    mgr = make_manager(env)
    mgr.builder().for_(Widget).complete(failing)
    quiet = make_manager(env)
    quiet.builder().for_(Widget).named("quiet").with_options(error_events=False).complete(failing)
    async with mgr.running(), quiet.running():
        await api.create(widget("w"))

        async def warned() -> list[dict[str, Any]]:  # events.k8s.io/v1, as mgr.get_event_recorder writes
            raw = await api.transport.request("GET", "/apis/events.k8s.io/v1/namespaces/default/events")
            return [e for e in json.loads(raw)["items"] if e["reason"] == "ReconcileError"]

        found = await eventually(warned)
    event = found[0]
    assert event["type"] == "Warning" and event["action"] == "Reconcile"
    assert event["regarding"]["name"] == "w" and event["regarding"]["kind"] == "Widget"
    assert event["note"] == "Reconciler error: cannot handle w"
    assert {e["reportingController"] for e in found} == {"widget-controller"}
    # the core/v1 view of the same Event (kubectl describe)
    [core] = [e for e in await api.list(Event, namespace="default") if e.reason == "ReconcileError"]
    assert core.reporting_component == "widget-controller" and core.message == event["note"]


async def test_a_role_without_events_is_said_once_with_the_fix(caplog: pytest.LogCaptureFixture) -> None:
    from pyscaffold_op.runtime import Forbidden, LegacyEventRecorder

    class NoEvents:
        async def request(self, *args: Any, **kwargs: Any) -> bytes:
            raise Forbidden('events is forbidden: User "system:serviceaccount:x:y" cannot create resource')

    recorder = LegacyEventRecorder(NoEvents(), "widget-controller")
    for n in range(3):  # a reconcile error that keeps failing posts an Event each time
        recorder.event(widget("w"), "Warning", "ReconcileError", f"Reconciler error: {n}")
        await recorder.flush()
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1 and "resources=events,verbs=create;patch" in warned[0]
