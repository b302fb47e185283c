"""`mgr.get_event_recorder(name)`: events.k8s.io/v1 Events as controller-runtime v0.23+ records them
(client-go `tools/events`), judged by the emulator and the real kube-apiserver: what the server stores,
and the series a repeat becomes (a second occurrence patches `series.count`, later ones are counted
and written when the series ends, at a refresh or at flush; past 6 minutes a repeat is a new Event).
The recorder's clock is a FakeClock: the 6-minute window is logic, not a wait."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Client, EventRecorder, Forbidden, ServerError, new_client
from pyscaffold_op.runtime.controller.events import FINISH_TIME, RETRY_SLEEP
from pyscaffold_op.testing import FakeClock, consistently, eventually
from tests.faults.servers import MODES, environment

from .widgets import widget

MICRO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


@pytest.fixture(params=MODES)
async def server(request: pytest.FixtureRequest) -> AsyncIterator[Environment]:
    async with environment(request.param) as e:
        yield e


@pytest.fixture
async def api(server: Environment) -> AsyncIterator[Client]:
    c = new_client(server.config)
    try:
        yield c
    finally:
        await c.close()


async def events(api: Client, about: str) -> list[dict[str, Any]]:
    """The events.k8s.io/v1 Events in default about the object named `about`, oldest first (the real
    server writes some of its own)."""
    raw = await api.transport.request("GET", "/apis/events.k8s.io/v1/namespaces/default/events")
    items: list[dict[str, Any]] = json.loads(raw)["items"]
    return sorted((e for e in items if e["regarding"].get("name") == about), key=lambda e: e["eventTime"])


async def test_an_event_as_client_go_writes_it(server: Environment, api: Client) -> None:
    w = await api.create(widget("ev1"))
    other = await api.create(widget("ev1-related"))
    recorder = EventRecorder(api.transport, "widget-controller", host="node-1", clock=FakeClock())
    recorder.annotated_eventf(
        w, other, {"example.com/why": "test"}, "Warning", "Deleting", "DeleteCR", "%s is being deleted", "ev1"
    )
    await recorder.flush()
    [event] = await events(api, "ev1")
    assert event["reportingController"] == "widget-controller"
    assert event["reportingInstance"] == "widget-controller-node-1"
    assert (event["type"], event["reason"], event["action"]) == ("Warning", "Deleting", "DeleteCR")
    assert event["note"] == "ev1 is being deleted"
    assert MICRO.fullmatch(event["eventTime"])
    assert event["metadata"]["name"].startswith("ev1.")
    assert event["metadata"]["annotations"] == {"example.com/why": "test"}
    assert event["regarding"] == {
        "apiVersion": "test.pyop.io/v1",
        "kind": "Widget",
        "namespace": "default",
        "name": "ev1",
        "uid": w.metadata.uid,
        "resourceVersion": w.metadata.resource_version,
    }
    assert event["related"]["name"] == "ev1-related" and event["related"]["uid"] == other.metadata.uid
    assert "series" not in event and "deprecatedCount" not in event
    await recorder.close()


async def test_repeats_become_a_series_and_a_repeat_after_six_minutes_a_new_event(
    server: Environment, api: Client
) -> None:
    w = await api.create(widget("ev2"))
    clock = FakeClock()
    recorder = EventRecorder(api.transport, "widget-controller", clock=clock)

    def fire(action: str = "Reconcile", note: str = "boom") -> None:
        recorder.eventf(w, None, "Warning", "ReconcileError", action, note)

    fire()
    await recorder.flush()
    fire(note="a different note: the same event (client-go does not compare notes)")
    await recorder.flush()
    [event] = await events(api, "ev2")
    assert event["series"]["count"] == 2 and MICRO.fullmatch(event["series"]["lastObservedTime"])
    assert event["note"] == "boom"
    # later repeats are counted in memory, not written one by one
    writes: list[str] = []
    real_request = api.transport.request

    async def counting(method: str, path: str, **kw: Any) -> bytes:
        writes.append(method)
        return await real_request(method, path, **kw)

    recorder.transport = type("T", (), {"request": staticmethod(counting)})()
    clock.advance(10)
    fire()
    fire()
    assert writes == []
    await recorder.flush()  # the manager's stop: the count not written yet is written
    assert writes == ["PATCH"]
    [event] = await events(api, "ev2")
    assert event["series"]["count"] == 4
    # another action: another event
    fire(action="Delete")
    await recorder.flush()
    assert len(await events(api, "ev2")) == 2
    # six minutes without an occurrence end the series: the sweeper writes nothing new (count written)
    clock.advance(FINISH_TIME + 1)
    fire()
    await recorder.flush()
    assert len(await events(api, "ev2")) == 3
    await recorder.close()


async def test_a_series_count_is_written_when_the_series_ends_and_at_each_refresh(
    server: Environment, api: Client
) -> None:
    w = await api.create(widget("ev3"))
    clock = FakeClock()
    recorder = EventRecorder(api.transport, "widget-controller", clock=clock)

    async def counted(n: int) -> bool:
        return [e.get("series", {}).get("count") for e in await events(api, "ev3")] == [n]

    for _ in range(3):  # created, then a series written at once with the count of its write: 3
        recorder.eventf(w, None, "Normal", "Synced", "Reconcile", "ok")
    await eventually(lambda: counted(3), timeout=10)
    await clock.wait_for_timers()  # the sweeper sleeps
    # the series goes on: an occurrence every 5 minutes; its count is written at the 30-minute refresh
    for step in range(1, 8):
        clock.advance(300)
        recorder.eventf(w, None, "Normal", "Synced", "Reconcile", "ok")
        await clock.wait_for_timers()
        if step == 5:  # 25 minutes: counted in memory only
            assert await counted(3)
        if step == 6:
            await eventually(lambda: counted(9), timeout=10)
    # it stops: 6 minutes later the sweeper ends it and writes the last count
    clock.advance(FINISH_TIME)
    await clock.wait_for_timers()
    clock.advance(FINISH_TIME)
    await eventually(lambda: counted(10), timeout=10)
    await recorder.close()


async def test_an_idle_recorder_keeps_no_timer_armed(server: Environment, api: Client) -> None:
    """Once every series has ended the sweeper stops (a test on a FakeClock can then tell that
    nothing is pending); the next Event starts it again."""
    w = await api.create(widget("ev-idle"))
    clock = FakeClock()
    recorder = EventRecorder(api.transport, "widget-controller", clock=clock)
    recorder.eventf(w, None, "Warning", "Failed", "Reconcile", "once")
    await eventually(lambda: events(api, "ev-idle"), timeout=10)
    await clock.wait_for_timers()  # the sweeper sleeps
    clock.advance(FINISH_TIME)  # the series is FINISH_TIME old, not more: it goes on
    await clock.wait_for_timers()  # the sweeper sleeps again
    clock.advance(FINISH_TIME)  # now it has ended, and nothing else is left to sweep
    await consistently(lambda: clock.pending() == 0, duration=0.3, interval=0.02)
    recorder.eventf(w, None, "Warning", "Failed", "Reconcile", "again")
    await clock.wait_for_timers()
    assert clock.pending() == 1
    await recorder.close()
    assert clock.pending() == 0


async def test_a_series_whose_event_is_gone_is_created_again_with_its_series(
    server: Environment, api: Client
) -> None:
    w = await api.create(widget("ev4"))
    recorder = EventRecorder(api.transport, "widget-controller", clock=FakeClock())
    recorder.eventf(w, None, "Normal", "Synced", "Reconcile", "ok")
    await recorder.flush()
    [event] = await events(api, "ev4")
    await api.transport.request(
        "DELETE", f"/apis/events.k8s.io/v1/namespaces/default/events/{event['metadata']['name']}"
    )
    recorder.eventf(w, None, "Normal", "Synced", "Reconcile", "ok")
    await recorder.flush()
    [again] = await events(api, "ev4")
    assert again["metadata"]["name"] == event["metadata"]["name"] and again["series"]["count"] == 2
    await recorder.close()


async def test_cluster_scoped_objects_get_their_events_in_default(server: Environment, api: Client) -> None:
    from pyscaffold_op.models.core_v1 import Namespace

    ns = await api.get(Namespace, "default")
    recorder = EventRecorder(api.transport, "ns-controller", clock=FakeClock())
    recorder.eventf(ns, None, "Normal", "Seen", "Observe", "a cluster-scoped object")
    await recorder.flush()
    [event] = await events(api, "default")
    assert event["regarding"]["kind"] == "Namespace" and "namespace" not in event["regarding"]
    await recorder.close()


def test_the_name_is_a_qualified_name_and_the_instance_fits_the_servers_limit() -> None:
    with pytest.raises(ValueError, match="must be a qualified name"):
        EventRecorder(None, "Widget Controller!")
    long = EventRecorder(None, "widget-controller", host="h" * 200)
    assert len(long.reporting_instance) == 128 and long.reporting_instance.startswith("widget-controller-hh")


async def test_writes_the_server_did_not_take_are_retried_refusals_are_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[str] = []

    class Flaky:
        def __init__(self, failures: list[Exception]) -> None:
            self.failures = failures

        async def request(self, method: str, path: str, **kw: Any) -> bytes:
            calls.append(method)
            if self.failures:
                raise self.failures.pop(0)
            return b"{}"

    clock = FakeClock()
    recorder = EventRecorder(Flaky([ServerError("503"), ServerError("503")]), "w", clock=clock)
    recorder.eventf(widget("w"), None, "Normal", "Synced", "Reconcile", "ok")
    for _ in range(2):
        await clock.wait_for_timers(2)  # the sweeper and the retry's sleep
        clock.advance(RETRY_SLEEP * 1.25)
    await recorder.flush()
    assert calls == ["POST", "POST", "POST"]
    calls.clear()
    refused = EventRecorder(Flaky([Forbidden("events is forbidden")] * 3), "w", clock=clock)
    for n in range(3):  # a reconcile error that keeps failing posts an Event each time
        refused.eventf(widget("w"), None, "Warning", "ReconcileError", "Reconcile", f"error {n}")
        await refused.flush()
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1 and "groups=events.k8s.io,resources=events,verbs=create;patch" in warned[0]
    await recorder.close()
    await refused.close()
