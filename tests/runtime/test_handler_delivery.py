"""Each handler's initial delivery (runtime/cache/registration.py): a handler added once the informer
has synced gets the store's objects from a task of its own, a slice at a time, with later events
queued behind them; its registration syncs once it had them all, and a controller's `Kind` source
waits for that before the workers start. And the manager's start: servers built only when bound,
the caches' lists sent before the health server pays for aiohttp. No server for the informer tests:
objects go straight into an informer."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import EnqueueRequestForObject, Request
from pyscaffold_op.runtime.cache import registration
from pyscaffold_op.runtime.cache.informer import Informer
from pyscaffold_op.runtime.controller.controller import Controller
from pyscaffold_op.runtime.controller.predicate import Predicate
from pyscaffold_op.runtime.controller.source import Kind
from pyscaffold_op.runtime.manager.manager import Manager
from pyscaffold_op.runtime.objects.kinds import info_for
from pyscaffold_op.runtime.objects.rawobj import RawObject
from pyscaffold_op.runtime.servers.health import HealthChecks

from .conftest import make_manager
from .widgets import Widget


def wire(name: str, rv: str, size: int = 1) -> bytes:
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": rv}
    obj = {"apiVersion": "test.pyop.io/v1", "kind": "Widget", "metadata": meta, "spec": {"size": size}}
    return json.dumps(obj).encode()


def line(kind: str, raw: bytes) -> bytes:
    return b'{"type":"%s","object":%s}' % (kind.encode(), raw)


def listed(informer: Informer, count: int) -> None:
    """The informer's list answered `count` Widgets: the store is filled and it says synced."""
    decode = informer.info.decode
    raws = [wire(f"w{i:05d}", str(i + 1)) for i in range(count)]
    informer._replace([(RawObject(raw, decode), raw) for raw in raws])


class Recorder:
    """A handler that records what it gets; `raw_objects` as the runtime's own sources set it."""

    def __init__(self, raw: bool = True) -> None:
        self.raw_objects = raw
        self.seen: list[tuple[str, str, Any]] = []

    @staticmethod
    def _name(obj: Any) -> str:
        return obj.meta.name if isinstance(obj, RawObject) else obj.metadata.name

    def on_add(self, obj: Any, initial: bool) -> None:
        self.seen.append(("add", self._name(obj), initial))

    def on_update(self, old: Any, new: Any) -> None:
        self.seen.append(("update", self._name(new), type(new).__name__))

    def on_delete(self, obj: Any, unknown: bool) -> None:
        self.seen.append(("delete", self._name(obj), unknown))


def informer() -> Informer:
    return Informer(None, info_for(Widget))  # type: ignore[arg-type]  # no transport: objects by hand


async def test_late_handlers_get_the_initial_list_each_in_its_own_task() -> None:
    """Two handlers joined after the sync: neither is handed 1,200 adds in line; their deliveries
    interleave, a slice at a time, and each registration syncs once its handler had them all."""
    inf = informer()
    listed(inf, 1200)
    assert inf.has_synced()
    a, b = Recorder(), Recorder()
    reg_a, reg_b = inf.add_event_handler(a), inf.add_event_handler(b)
    assert a.seen == [] and not reg_a.has_synced()  # nothing in line: the caller goes on at once
    await asyncio.sleep(0)  # one turn of the loop: each delivery hands over one slice
    assert len(a.seen) == len(b.seen) == registration.SLICE
    assert await reg_a.wait_for_sync(5) and await reg_b.wait_for_sync(5)
    expected = [("add", f"w{i:05d}", True) for i in range(1200)]
    assert a.seen == expected and b.seen == expected


async def test_events_during_a_delivery_queue_behind_it_in_order() -> None:
    inf = informer()
    listed(inf, 1000)
    late = Recorder()
    reg = inf.add_event_handler(late)
    inf._handle_line(line("MODIFIED", wire("w00000", "2000", size=5)))
    inf._handle_line(line("ADDED", wire("new", "2001")))
    inf._handle_line(line("DELETED", wire("w00001", "2002")))
    assert late.seen == []
    assert await reg.wait_for_sync(5)
    await asyncio.sleep(0)  # the drain's last slice may still be on its way
    assert late.seen[:1000] == [("add", f"w{i:05d}", True) for i in range(1000)]
    assert late.seen[1000:] == [
        ("update", "w00000", "RawObject"),
        ("add", "new", False),
        ("delete", "w00001", False),
    ]
    inf._handle_line(line("MODIFIED", wire("new", "2003")))  # backlog empty: in line again
    assert late.seen[-1] == ("update", "new", "RawObject")


async def test_a_typed_late_handler_gets_typed_objects() -> None:
    inf = informer()
    listed(inf, 3)
    typed = Recorder(raw=False)
    got: list[Any] = []
    typed.on_add = lambda obj, initial: got.append((obj, initial))  # type: ignore[method-assign]
    reg = inf.add_event_handler(typed)
    assert await reg.wait_for_sync(5)
    assert [type(o) for o, _ in got] == [Widget] * 3 and all(initial for _, initial in got)


async def test_a_handler_removed_mid_delivery_gets_nothing_more() -> None:
    inf = informer()
    listed(inf, 1200)
    rec = Recorder()
    reg = inf.add_event_handler(rec)
    await asyncio.sleep(0)
    inf.remove_event_handler(reg)
    for _ in range(5):
        await asyncio.sleep(0)
    inf._handle_line(line("ADDED", wire("after", "5000")))
    assert len(rec.seen) == registration.SLICE


async def test_a_paused_delivery_resumes_where_it_stopped() -> None:
    """The informer pauses deliveries when it stops and resumes them when it starts again."""
    inf = informer()
    listed(inf, 1200)
    rec = Recorder()
    reg = inf.add_event_handler(rec)
    await asyncio.sleep(0)
    reg.pause()
    for _ in range(5):
        await asyncio.sleep(0)
    assert len(rec.seen) == registration.SLICE and not reg.has_synced()
    reg.resume()
    assert await reg.wait_for_sync(5)
    assert rec.seen == [("add", f"w{i:05d}", True) for i in range(1200)]


def test_an_early_handler_gets_the_first_list_in_line() -> None:
    """Added before the first list: its adds come in line, flagged initial, and it syncs with the
    informer (no running loop needed: a test may drive an informer by hand)."""
    inf = informer()
    rec = Recorder()
    reg = inf.add_event_handler(rec)
    assert not reg.has_synced()
    listed(inf, 3)
    assert rec.seen == [("add", f"w{i:05d}", True) for i in range(3)] and reg.has_synced()


def test_a_late_handler_without_a_running_loop_gets_the_list_in_line() -> None:
    inf = informer()
    listed(inf, 3)
    rec = Recorder()
    assert inf.add_event_handler(rec).has_synced()
    assert rec.seen == [("add", f"w{i:05d}", True) for i in range(3)]


class _Cache:
    def __init__(self, inf: Informer) -> None:
        self.inf = inf

    def get_informer(self, _kind: type) -> Informer:
        return self.inf


class _Odd(Predicate):
    """Lets every other object through: predicates still run per object in the initial delivery."""

    def create(self, event: Any) -> bool:
        return int(event.object.metadata.name[1:]) % 2 == 1


async def test_a_controller_starts_its_workers_once_its_handler_had_the_initial_list() -> None:
    inf = informer()
    listed(inf, 1500)

    async def reconcile(_req: Request) -> None:
        await asyncio.Event().wait()  # holds its key: the queue's length counts what was delivered

    ctrl = Controller("c", reconcile, cache=_Cache(inf), max_concurrent_reconciles=1)
    ctrl.watch(Kind(Widget), EnqueueRequestForObject(), _Odd())
    try:
        await ctrl.start()
        assert len(ctrl.queue) == 750  # every odd object, none reconciled before the workers started
    finally:
        await ctrl.stop(timeout=0)


# -- the manager's start ---------------------------------------------------------------------------


async def noop(_req: Request) -> None:
    pass


async def test_no_server_app_is_built_when_its_address_is_0(
    env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "0" binds nothing: neither app is built (nor aiohttp's web imported for them)."""

    def refuse(*_args: Any) -> Any:
        raise AssertionError("an app built for a server that is not bound")

    monkeypatch.setattr(HealthChecks, "app", refuse)
    monkeypatch.setattr(Manager, "_metrics_app", refuse)
    mgr = make_manager(env)
    mgr.builder().for_(Widget).complete(noop)
    async with mgr.running(timeout=10):
        assert mgr.health_address is None and mgr.metrics_address is None


async def test_the_caches_list_before_the_health_server_starts(
    env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caches' first lists are in flight when the health server's app is built (aiohttp's import
    overlaps them); the probes still answer before the caches have synced."""
    started: list[bool] = []
    build = HealthChecks.app

    def app(self: HealthChecks) -> Any:
        started.append(mgr.cache._started)
        return build(self)

    monkeypatch.setattr(HealthChecks, "app", app)
    mgr = make_manager(env, health_probe_bind_address="127.0.0.1:0")
    mgr.builder().for_(Widget).complete(noop)
    async with mgr.running(timeout=10):
        assert started == [True]
        assert mgr.health_address is not None
