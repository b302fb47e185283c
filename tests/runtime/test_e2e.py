"""Controllers end to end against the envtest emulator: every "Done means" bullet of issue 6."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from typing import Any

import httpx2
import pytest

from pyscaffold_op.apimachinery import ObjectMeta
from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.core_v1 import ConfigMap, Event
from pyscaffold_op.runtime import (
    Channel,
    Client,
    Conflict,
    EnqueueRequestsFromMapFunc,
    GenerationChanged,
    Kind,
    NotFound,
    Request,
    Result,
    controllerutil,
)
from pyscaffold_op.testing import FakeClock, eventually

from .conftest import make_manager
from .widgets import Widget, WidgetStatus, widget


class Recorder:
    """A reconciler that records every call (time, request) and optionally does more."""

    def __init__(self, client: Any = None) -> None:
        self.client = client
        self.calls: list[tuple[float, Request]] = []

    def count(self, name: str) -> int:
        return sum(1 for _, r in self.calls if r.name == name)

    def times(self, name: str) -> list[float]:
        return [t for t, r in self.calls if r.name == name]

    async def reconcile(self, request: Request) -> Result | None:
        self.calls.append((time.monotonic(), request))
        return await self.work(request)

    async def work(self, request: Request) -> Result | None:
        return None


async def test_create_triggers_reconcile_which_writes_status(env: Environment, api: Client) -> None:
    mgr = make_manager(env)

    class StatusWriter(Recorder):
        async def work(self, request: Request) -> None:
            try:
                obj = await self.client.get(Widget, request.name, namespace=request.namespace)
            except NotFound:
                return
            obj.status = WidgetStatus(observed_size=obj.spec.size, reconciles=self.count(request.name))
            await self.client.status().update(obj)

    rec = StatusWriter(mgr.client)
    mgr.builder().for_(Widget, GenerationChanged()).complete(rec)
    async with mgr.running():
        await api.create(widget("w1", size=4))

        async def reconciled() -> bool:
            w = await api.get(Widget, "w1")
            return w.status is not None and w.status.observed_size == 4

        await eventually(reconciled)
        await api.patch(Widget, "w1", {"spec": {"size": 6}})

        async def resized() -> bool:
            w = await api.get(Widget, "w1")
            return w.status is not None and w.status.observed_size == 6

        await eventually(resized)
        # Status writes do not bump generation, so GenerationChanged kept them from re-triggering:
        # once the cache has seen the last status write, its event was filtered, and nothing is queued.
        latest = (await api.get(Widget, "w1")).metadata.resource_version

        async def cache_caught_up() -> bool:
            return (await mgr.client.get(Widget, "w1")).metadata.resource_version == latest

        await eventually(cache_caught_up)
        queue = mgr.controllers[0].queue
        await eventually(lambda: len(queue) == 0 and not queue.processing())
        assert rec.count("w1") == 2
    assert (
        mgr.metrics.value("controller_runtime_reconcile_total", {"controller": "widget", "result": "success"})
        == 2
    )


@pytest.mark.parametrize("status_events", [False, True])
async def test_own_status_write_reconciles_again_only_with_status_events(
    env: Environment, api: Client, status_events: bool
) -> None:
    """for_() without predicates: the controller's status write comes back as an update event, which
    is dropped by default and reconciles once more with with_status_events()."""
    mgr = make_manager(env)

    class StatusWriter(Recorder):
        async def work(self, request: Request) -> None:
            obj = await self.client.get(Widget, request.name, namespace=request.namespace)
            if obj.status is None or obj.status.observed_size != obj.spec.size:
                obj.status = WidgetStatus(observed_size=obj.spec.size)
                await self.client.status().update(obj)

    rec = StatusWriter(mgr.client)
    builder = mgr.builder().for_(Widget)
    if status_events:
        builder = builder.with_status_events()
    builder.complete(rec)
    async with mgr.running():
        await api.create(widget("w1", size=4))

        async def written() -> bool:
            w = await api.get(Widget, "w1")
            return w.status is not None and w.status.observed_size == 4

        await eventually(written)
        latest = (await api.get(Widget, "w1")).metadata.resource_version

        async def cache_caught_up() -> bool:
            return (await mgr.client.get(Widget, "w1")).metadata.resource_version == latest

        await eventually(cache_caught_up)
        queue = mgr.controllers[0].queue
        await eventually(lambda: len(queue) == 0 and not queue.processing())
        assert rec.count("w1") == (2 if status_events else 1)
        await api.patch(Widget, "w1", {"metadata": {"labels": {"x": "y"}}})  # metadata still counts
        await eventually(lambda: rec.count("w1") == (3 if status_events else 2))


@pytest.mark.parametrize("unsafe", [False, True])
async def test_cache_reads_are_the_readers_own_unless_unsafe(
    env: Environment, api: Client, unsafe: bool
) -> None:
    mgr = make_manager(env, unsafe_disable_deep_copy=unsafe)
    mgr.builder().for_(Widget).complete(Recorder())
    await api.create(widget("w1", size=4, app="x"))
    async with mgr.running():
        await eventually(lambda: mgr.client.get(Widget, "w1"))
        read = await mgr.client.get(Widget, "w1")
        read.spec.size = 99
        read.metadata.labels["app"] = "changed"
        listed = await mgr.client.list(Widget, labels={"app": "x"})
        if unsafe:  # shared objects: the mutation is visible to every later reader (that is the risk)
            assert listed == [] and (await mgr.client.get(Widget, "w1")) is read
        else:
            assert [w.spec.size for w in listed] == [4]
            listed[0].spec.size = 7
            again = await mgr.client.get(Widget, "w1")
            assert again.spec.size == 4 and again.metadata.labels == {"app": "x"} and again is not read


async def test_owned_object_change_reconciles_owner(env: Environment, api: Client) -> None:
    mgr = make_manager(env)

    class Owner(Recorder):
        async def work(self, request: Request) -> None:
            owner = await self.client.get(Widget, request.name, namespace=request.namespace)
            cm = ConfigMap(metadata=ObjectMeta(name=f"{request.name}-cm", namespace=request.namespace))

            def mutate(obj: ConfigMap) -> None:
                obj.data = {"size": str(owner.spec.size)}
                controllerutil.set_controller_reference(owner, obj)

            await controllerutil.create_or_update(self.client, cm, mutate)

    rec = Owner(mgr.client)
    mgr.builder().for_(Widget).owns(ConfigMap).complete(rec)
    async with mgr.running():
        await api.create(widget("w2", size=3))

        async def cm_made() -> ConfigMap | None:
            try:
                return await api.get(ConfigMap, "w2-cm")
            except NotFound:
                return None

        cm = await eventually(cm_made)
        assert cm.data == {"size": "3"} and cm.metadata.owner_references[0].name == "w2"
        await eventually(lambda: _true(rec.count("w2") >= 2))  # its own ConfigMap event came back
        before = rec.count("w2")
        await api.patch(ConfigMap, "w2-cm", {"data": {"size": "tampered"}})

        async def repaired() -> bool:
            return (await api.get(ConfigMap, "w2-cm")).data == {"size": "3"}

        await eventually(repaired)
        assert rec.count("w2") > before


async def _true(value: bool) -> bool:
    return value


async def test_requeue_after_is_honoured_exactly(env: Environment, api: Client) -> None:
    clock = FakeClock()
    mgr = make_manager(env, clock=clock)

    class Ticker(Recorder):
        async def reconcile(self, request: Request) -> Result | None:
            self.calls.append((clock.monotonic(), request))
            return Result(requeue_after=0.2) if self.count(request.name) < 4 else None

    rec = Ticker()
    mgr.builder().for_(Widget).complete(rec)
    queue = mgr.controllers[0].queue
    async with mgr.running():
        await api.create(widget("tick"))
        for n in range(1, 4):
            await eventually(lambda n=n: rec.count("tick") == n and queue.waiting() == 1)
            clock.advance(0.2 - 1e-6)
            assert queue.waiting() == 1  # not a moment early
            clock.advance(1e-6)
        await eventually(lambda: rec.count("tick") == 4 and queue.waiting() == 0)
    gaps = [b - a for a, b in itertools.pairwise(rec.times("tick"))]
    assert gaps == pytest.approx([0.2, 0.2, 0.2])


async def test_conflicts_are_retried_until_the_write_succeeds(env: Environment, api: Client) -> None:
    mgr = make_manager(env)

    class Racer(Recorder):
        async def work(self, request: Request) -> None:
            obj = await self.client.get(Widget, request.name, namespace=request.namespace)
            if self.count(request.name) == 1:
                # Another writer changes the object between our read and our write.
                await api.patch(Widget, request.name, {"metadata": {"labels": {"touched": "yes"}}})
            obj.status = WidgetStatus(reconciles=self.count(request.name))
            await self.client.status().update(obj)  # the first attempt: 409 Conflict

    rec = Racer(mgr.api_reader)
    mgr.builder().for_(Widget, GenerationChanged()).complete(rec)
    async with mgr.running():
        await api.create(widget("race"))

        async def written() -> bool:
            w = await api.get(Widget, "race")
            return w.status is not None and w.status.reconciles == 2

        await eventually(written)
        assert mgr.metrics.value("controller_runtime_reconcile_errors_total", {"controller": "widget"}) == 1
        assert mgr.controllers[0].queue.num_requeues(Request("default", "race")) == 0  # forgotten on success


async def test_reconcile_exception_backs_off_exponentially_visible_in_metrics(
    env: Environment, api: Client
) -> None:
    clock = FakeClock()  # the work queue's backoff runs on it: the test moves time, it does not wait
    mgr = make_manager(env, metrics_bind_address="127.0.0.1:0", clock=clock)

    class Failing(Recorder):
        async def reconcile(self, request: Request) -> Result | None:
            self.calls.append((clock.monotonic(), request))
            raise RuntimeError(f"boom {self.count(request.name)}")

    rec = Failing()
    mgr.builder().for_(Widget).complete(rec)
    queue = mgr.controllers[0].queue
    async with mgr.running():
        await api.create(widget("bad"))
        for failures in range(1, 9):
            await eventually(lambda n=failures: rec.count("bad") == n and queue.waiting() == 1)
            delay = clock.next_deadline() - clock.monotonic()  # type: ignore[operator]
            assert delay == pytest.approx(0.005 * 2 ** (failures - 1))  # 5 ms, 10 ms, 20 ms ...
            assert queue.num_requeues(Request("default", "bad")) == failures
            clock.advance(delay)
        await eventually(lambda: rec.count("bad") == 9)
        assert mgr.metrics_address is not None
        host, port = mgr.metrics_address
        async with httpx2.AsyncClient() as http:
            text = (await http.get(f"http://{host}:{port}/metrics")).text
    gaps = [b - a for a, b in itertools.pairwise(rec.times("bad"))]
    assert gaps == pytest.approx([0.005 * 2**i for i in range(8)])
    errors = [
        line for line in text.splitlines() if line.startswith("controller_runtime_reconcile_errors_total{")
    ]
    assert errors and float(errors[0].split()[-1]) >= 8
    retries = [line for line in text.splitlines() if line.startswith("workqueue_retries_total{")]
    assert retries and float(retries[0].split()[-1]) >= 8
    assert 'controller_runtime_reconcile_total{controller="widget",result="error"}' in text
    assert "workqueue_depth" in text and "workqueue_queue_duration_seconds_bucket" in text


async def test_watch_dropped_and_410_relist_keeps_state_exact(env: Environment, api: Client) -> None:
    mgr = make_manager(env)
    seen: dict[str, int] = {}

    class Tracker(Recorder):
        async def work(self, request: Request) -> None:
            try:
                obj = await self.client.get(Widget, request.name, namespace=request.namespace)
                seen[request.name] = obj.spec.size
            except NotFound:
                seen.pop(request.name, None)

    rec = Tracker(mgr.client)
    mgr.builder().for_(Widget).complete(rec)
    for i in range(5):
        await api.create(widget(f"r{i}", size=i))
    async with mgr.running():
        informer = mgr.cache.get_informer(Widget)
        await eventually(lambda: _true(len(seen) == 5))
        env.drop_watches()
        await api.patch(Widget, "r0", {"spec": {"size": 100}})
        await api.delete(Widget, "r1")
        await api.create(widget("r5", size=5))
        await eventually(lambda: _true(seen.get("r0") == 100 and "r1" not in seen and "r5" in seen))
        env.compact()
        env.drop_watches()
        await api.patch(Widget, "r2", {"spec": {"size": 200}})
        await api.delete(Widget, "r3")
        await eventually(lambda: _true(seen.get("r2") == 200 and "r3" not in seen), timeout=8)
        assert informer.stats["watches"] >= 3
        server = {w.metadata.name: w.spec.size for w in await api.list(Widget)}
        cached = {w.metadata.name: w.spec.size for w in await mgr.client.list(Widget)}
        assert server == cached == seen


async def test_informer_relist_after_missed_events_emits_each_change_once(
    env: Environment, api: Client
) -> None:
    from pyscaffold_op.runtime.cache.informer import Informer
    from pyscaffold_op.runtime.client.rest import RestTransport
    from pyscaffold_op.runtime.objects.kinds import info_for

    events: list[tuple[str, str]] = []

    class H:
        def on_add(self, obj: Widget, initial: bool) -> None:
            events.append(("add", obj.metadata.name))

        def on_update(self, old: Widget, new: Widget) -> None:
            events.append(("update", new.metadata.name))

        def on_delete(self, obj: Widget, unknown: bool) -> None:
            events.append(("delete" + ("?" if unknown else ""), obj.metadata.name))

    for name in ("keep", "change", "gone"):
        await api.create(widget(name))
    transport = RestTransport(env.config)
    informer = Informer(transport, info_for(Widget))
    informer.add_event_handler(H())
    informer.start()
    try:
        assert await informer.wait_for_sync(5)
        assert sorted(events) == [("add", "change"), ("add", "gone"), ("add", "keep")]
        await informer.stop()  # disconnected: the next three changes are missed ...
        events.clear()
        await api.patch(Widget, "change", {"spec": {"size": 9}})
        await api.delete(Widget, "gone")
        await api.create(widget("new"))
        env.compact()  # ... and compacted away, so the re-watch gets 410 and must relist
        informer.start()
        # the relist dispatches every difference before it marks the store as replaced
        relisted = ["default/change", "default/keep", "default/new"]
        await eventually(lambda: sorted(informer.store.list_keys()) == relisted)
        assert sorted(events) == [("add", "new"), ("delete?", "gone"), ("update", "change")]
        assert informer.stats["relists_on_gone"] == 1
        assert sorted(informer.store.list_keys()) == ["default/change", "default/keep", "default/new"]
    finally:
        await informer.stop()
        await transport.close()


@pytest.mark.slow
async def test_two_managers_leader_election_and_takeover(
    env: Environment, api: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="pyscaffold_op.runtime.leader")
    # a long lease: m2 can take over quickly only if m1 released it
    fast = {"lease_duration": 60.0, "renew_deadline": 1.5, "retry_period": 0.1}
    m1 = make_manager(
        env, leader_election=True, leader_election_id="widgets.test.pyop.io", leader_identity="m1", **fast
    )
    m2 = make_manager(
        env, leader_election=True, leader_election_id="widgets.test.pyop.io", leader_identity="m2", **fast
    )
    r1, r2 = Recorder(), Recorder()
    m1.builder().for_(Widget).complete(r1)
    m2.builder().for_(Widget).complete(r2)
    from pyscaffold_op.models.coordination_v1 import Lease

    async with m1.running(), m2.running(wait_for_leadership=False):
        await api.create(widget("le1"))
        await eventually(lambda: _true(r1.count("le1") == 1))
        assert m2.elector is not None
        await eventually(lambda: _true(m2.elector.get_leader() == "m1"))  # m2 looked, and stands by
        assert r2.calls == [] and not m2.elected.is_set()
        # the standby says it waits (it used to log nothing at all until it became leader)
        waiting = [r for r in caplog.records if r.getMessage() == "attempting to acquire leader lease"]
        assert {getattr(r, "identity", None) for r in waiting} == {"m1", "m2"}
        lease = await api.get(Lease, "widgets.test.pyop.io", namespace="default")
        assert lease.spec.holder_identity == "m1"
        assert m1.metrics.value("leader_election_master_status", {"name": "widgets.test.pyop.io"}) == 1
        # m1 stops (releasing the lease) while m2 keeps running: m2 takes over long before the lease
        # would have expired
        m1.stop()
        await asyncio.wait_for(m2.elected.wait(), 30)
        await eventually(lambda: _true(r2.count("le1") == 1))  # m2's cache replays the object
        await api.create(widget("le2"))
        await eventually(lambda: _true(r2.count("le2") == 1))
        assert r1.count("le2") == 0
        lease = await api.get(Lease, "widgets.test.pyop.io", namespace="default")
        assert lease.spec.holder_identity == "m2" and lease.spec.lease_transitions == 1
    lease = await api.get(Lease, "widgets.test.pyop.io", namespace="default")
    assert lease.spec.holder_identity is None  # released on shutdown


async def test_map_func_watch_channel_source_and_max_concurrency(env: Environment, api: Client) -> None:
    mgr = make_manager(env)
    external: asyncio.Queue[Any] = asyncio.Queue()
    running = 0
    peak = 0

    release = asyncio.Event()

    class Slow(Recorder):
        async def work(self, request: Request) -> None:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            await release.wait()
            running -= 1

    rec = Slow()

    def cm_to_widget(cm: ConfigMap) -> list[Request]:
        target = (cm.metadata.labels or {}).get("widget")
        return [Request(cm.metadata.namespace, target)] if target else []

    (
        mgr.builder()
        .for_(Widget)
        .watches(Kind(ConfigMap), EnqueueRequestsFromMapFunc(cm_to_widget))
        .watches(Channel(external), EnqueueRequestsFromMapFunc(lambda o: [Request("default", o["name"])]))
        .with_options(max_concurrent_reconciles=3)
        .named("widgets")
        .complete(rec)
    )
    async with mgr.running():
        for i in range(6):
            await api.create(widget(f"c{i}"))
        queue = mgr.controllers[0].queue
        await eventually(lambda: running == 3 and len(queue) == 3)  # all workers busy, three wait
        release.set()
        await eventually(lambda: len(rec.calls) == 6)
        assert peak == 3
        await api.create(
            ConfigMap(metadata=ObjectMeta(name="cm", namespace="default", labels={"widget": "c0"}))
        )
        await eventually(lambda: _true(rec.count("c0") == 2))
        await external.put({"name": "c5"})
        await eventually(lambda: _true(rec.count("c5") == 2))
    assert mgr.metrics.value("controller_runtime_max_concurrent_reconciles", {"controller": "widgets"}) == 3


async def test_cached_client_reads_copies_and_serves_selectors(env: Environment, api: Client) -> None:
    mgr = make_manager(env)
    mgr.builder().for_(Widget).complete(Recorder())
    mgr.get_field_indexer().index_field(Widget, "spec.color", lambda w: [w.spec.color])
    await api.create(widget("a", app="x"))
    await api.create(widget("b", app="y"))
    async with mgr.running():
        got = await mgr.client.get(Widget, "a")
        got.spec.size = 99  # a copy: the cache is untouched
        assert (await mgr.client.get(Widget, "a")).spec.size == 1
        assert [w.metadata.name for w in await mgr.client.list(Widget, labels={"app": "y"})] == ["b"]
        assert [w.metadata.name for w in await mgr.client.list(Widget, labels="app in (x,y)")] == ["a", "b"]
        assert len(await mgr.client.list(Widget, fields={"spec.color": "blue"})) == 2
        # one grammar with the server's: `!=` and `==`, through the index or evaluated on the object
        assert [w.metadata.name for w in await mgr.client.list(Widget, fields="metadata.name!=a")] == ["b"]
        assert [
            w.metadata.name for w in await mgr.client.list(Widget, fields="spec.color==blue,metadata.name=b")
        ] == ["b"]
        assert await mgr.client.list(Widget, namespace="other") == []
        with pytest.raises(NotFound):
            await mgr.client.get(Widget, "zzz")
        # ConfigMaps are not watched: served by the API server.
        await mgr.client.create(ConfigMap(metadata=ObjectMeta(name="direct", namespace="default")))
        assert (await mgr.client.get(ConfigMap, "direct")).metadata.name == "direct"
        assert not mgr.cache.has_informer(ConfigMap)


async def test_health_probes_and_event_recorder(env: Environment, api: Client) -> None:
    mgr = make_manager(env, health_probe_bind_address="127.0.0.1:0")
    mgr.add_healthz_check("ping", lambda: None)
    ready = {"ok": False}
    mgr.add_readyz_check("flag", lambda: ready["ok"])
    recorder = mgr.get_event_recorder_for("widget-controller")

    class Eventful(Recorder):
        async def work(self, request: Request) -> None:
            obj = await mgr.client.get(Widget, request.name)
            recorder.event(obj, "Normal", "Seen", f"reconciled {request.name}")
            recorder.event(obj, "Normal", "Seen", f"reconciled {request.name}")

    mgr.builder().for_(Widget).complete(Eventful())
    async with mgr.running():
        host, port = mgr.health_address
        async with httpx2.AsyncClient(base_url=f"http://{host}:{port}") as http:
            assert (await http.get("/healthz")).text == "ok"
            r = await http.get("/readyz")
            assert r.status_code == 500 and "[-]flag failed" in r.text
            ready["ok"] = True
            assert (await http.get("/readyz")).status_code == 200
            assert (await http.get("/readyz/flag")).status_code == 200
            assert (await http.get("/healthz/nope")).status_code == 404
        await api.create(widget("ev"))

        async def counted() -> bool:
            events = [e for e in await api.list(Event, namespace="default") if e.involved_object.name == "ev"]
            return len(events) == 1 and events[0].count == 2

        await eventually(counted)
        events = [e for e in await api.list(Event, namespace="default") if e.involved_object.name == "ev"]
        e = events[0]
        assert (e.reason, e.type, e.source.component, e.involved_object.kind) == (
            "Seen",
            "Normal",
            "widget-controller",
            "Widget",
        )


async def test_conflict_error_type_from_the_server(env: Environment, api: Client) -> None:
    w = await api.create(widget("stale"))
    fresh = await api.get(Widget, "stale")
    fresh.spec.size = 2
    await api.update(fresh)
    w.spec.size = 3
    with pytest.raises(Conflict):
        await api.update(w)
