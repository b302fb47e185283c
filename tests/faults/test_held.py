"""Behaviours the issue-28 probes found holding, kept so (bounded in count and time): concurrent writers
lose no update, a failing key backs off without starving good ones, 1,000 watchers lose nothing and
keep order. Elsewhere: 410 relist (runtime/test_e2e.py, faults/test_server_restart.py), leadership
handed over on stop and released on SIGTERM (runtime/test_e2e.py, runtime/test_sigterm.py), loopback
binding (test_manager_explains_itself.py), metrics authz (runtime/test_metrics_auth.py), split brain
(faults/test_shutdown_faults.py), one Pod per At after SIGKILL (faults/test_sigkill_at.py), alias bombs
and deep nesting (faults/test_bodies.py)."""

from __future__ import annotations

import asyncio
import itertools
import json

import httpx2
from runtime.widgets import Widget, widget  # `tests/` is on sys.path: the runtime tests are package `runtime`

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Client, Manager, ManagerOptions, Request
from pyscaffold_op.runtime.client.errors import Conflict
from pyscaffold_op.runtime.clock import FakeClock
from pyscaffold_op.testing import eventually

from .conftest import CMS


async def test_twenty_concurrent_writers_lose_no_update(api: Client) -> None:
    await api.create(widget("counter", size=0))
    conflicts = 0

    async def writer() -> None:
        nonlocal conflicts
        for _ in range(5):
            while True:  # read, modify, write; a stale resourceVersion is a 409 and a retry
                w = await api.get(Widget, "counter", namespace="default")
                w.spec.size += 1
                try:
                    await api.update(w)
                    break
                except Conflict:
                    conflicts += 1

    await asyncio.wait_for(asyncio.gather(*(writer() for _ in range(20))), 60)
    assert (await api.get(Widget, "counter", namespace="default")).spec.size == 100
    assert conflicts > 0  # they did race: optimistic concurrency refused the stale writes


async def test_a_failing_key_backs_off_without_starving_good_ones(env: Environment, api: Client) -> None:
    clock = FakeClock()  # the queue's backoff runs on it: nothing is retried until the test says so
    bad: list[float] = []
    good: list[str] = []

    async def reconcile(request: Request) -> None:
        if request.name == "bad":
            bad.append(clock.monotonic())
            raise RuntimeError("always fails")
        good.append(request.name)

    class R:
        async def reconcile(self, request: Request) -> None:
            await reconcile(request)

    mgr = Manager(env.config, ManagerOptions(health_probe_bind_address="0", clock=clock))
    mgr.builder().for_(Widget).complete(R())
    async with mgr.running():
        await api.create(widget("bad"))
        await eventually(lambda: len(bad) == 1)
        for i in range(30):
            await api.create(widget(f"good{i}"))
        await eventually(lambda: len(good) == 30, timeout=30)  # while "bad" waits out its backoff
        assert len(bad) == 1
        for n in range(2, 7):
            clock.advance(clock.next_deadline() - clock.monotonic())  # type: ignore[operator]
            await eventually(lambda n=n: len(bad) == n)
    assert [round(b - a, 3) for a, b in itertools.pairwise(bad)] == [0.005, 0.01, 0.02, 0.04, 0.08]
    assert sorted(good) == sorted(f"good{i}" for i in range(30))  # each once


async def test_a_thousand_watchers_lose_nothing_and_keep_order(env: Environment) -> None:
    n_watchers, n_events = 1_000, 20
    limits = httpx2.Limits(max_connections=n_watchers + 10, max_keepalive_connections=n_watchers + 10)
    async with httpx2.AsyncClient(base_url=env.url, timeout=60, limits=limits) as http:
        rv = (await http.get(CMS)).json()["metadata"]["resourceVersion"]
        connected = 0

        async def watch() -> list[str]:
            nonlocal connected
            names: list[str] = []
            params = {"watch": "true", "resourceVersion": rv, "timeoutSeconds": "60"}
            async with http.stream("GET", CMS, params=params) as r:
                assert r.status_code == 200
                connected += 1
                async for line in r.aiter_lines():
                    if not line:
                        continue
                    event = json.loads(line)
                    if event["type"] == "ADDED":
                        names.append(event["object"]["metadata"]["name"])
                    if len(names) == n_events:
                        break
            return names

        tasks = [asyncio.create_task(watch()) for _ in range(n_watchers)]
        await eventually(lambda: connected == n_watchers, timeout=60)
        for i in range(n_events):
            r = await http.post(CMS, json={"metadata": {"name": f"w{i:02}"}, "data": {"i": str(i)}})
            assert r.status_code == 201
        results = await asyncio.wait_for(asyncio.gather(*tasks), 120)
    expected = [f"w{i:02}" for i in range(n_events)]
    assert all(names == expected for names in results)
