"""Issue 38: a watch whose connection stops carrying bytes but stays open (a frozen proxy, a load balancer
or NAT that dropped its state) is noticed and replaced, on the emulator and on the real kube-apiserver;
a healthy idle watch is never cut.

Before: the informer read the frozen connection for ever; an object created a second after the freeze
was never seen (90 s in the issue's probe; client-go's informer, through the same proxy, 40.9 s)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from runtime.widgets import Widget, widget  # `tests/` is on sys.path: the runtime tests are `runtime`

from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.core_v1 import ConfigMap
from pyscaffold_op.runtime import Manager, ManagerOptions, WatchLiveness, new_client
from pyscaffold_op.runtime.cache.informer import Informer
from pyscaffold_op.runtime.client.rest import RestTransport
from pyscaffold_op.runtime.objects.kinds import info_for
from pyscaffold_op.testing import FakeClock, eventually

from .servers import MODES, environment, proxied, through
from .tcpproxy import FreezableProxy

# probes after 1 s of silence, 2 s for an answer: the same logic as the defaults, in seconds, not minutes
FAST = WatchLiveness(probe_after=1.0, probe_timeout=2.0, catch_up=0.2)


@pytest.fixture
async def emulator() -> AsyncIterator[Environment]:
    async with environment("emulator") as env:
        yield env


async def _watching(informer: Informer, proxy: FreezableProxy) -> None:
    """Wait until the informer listed and its watch is open through the proxy."""
    assert await informer.wait_for_sync(30)
    await eventually(lambda: informer.stats["watches"] >= 1)
    before = proxy.connections
    await eventually(lambda: proxy.connections >= before and informer._monitor is not None)
    await asyncio.sleep(0.3)  # the watch's response head is through: it is reading


@pytest.mark.parametrize("mode", MODES)
async def test_an_object_created_after_the_watch_froze_is_cached_within_the_bound(mode: str) -> None:
    async with environment(mode) as env, proxied(env) as proxy:
        transport = RestTransport(through(env.config, proxy))
        informer = Informer(transport, info_for(Widget), liveness=FAST)
        informer.start()
        api = new_client(env.config)  # straight to the server, not through the proxy
        try:
            await _watching(informer, proxy)
            assert proxy.freeze() >= 2  # the watch and the list's kept-alive connection
            await api.create(widget("after-freeze"))
            began = time.monotonic()
            await eventually(lambda: informer.store.get("default/after-freeze") is not None, timeout=30)
            took = time.monotonic() - began
            print(f"{mode}: in the cache {took:.1f}s after its create (bound {FAST.bound:g}s)")
            assert informer.stats["watches_cut"] >= 1
            assert took <= FAST.bound + 2  # the re-watch and the replay after the cut take a moment
        finally:
            await api.close()
            await informer.stop()
            await transport.close()


async def test_with_client_go_s_figures_the_dead_watch_is_cut_within_50_seconds(
    emulator: Environment,
) -> None:
    """The defaults' logic on an injected clock: 30 s of silence (checked every 5 s), then a probe that
    the frozen path leaves unanswered for 15 s."""
    liveness = WatchLiveness()
    assert (liveness.probe_after, liveness.probe_timeout, liveness.bound) == (30.0, 15.0, 50.0)
    clock = FakeClock()
    async with proxied(emulator) as proxy:
        transport = RestTransport(through(emulator.config, proxy))
        informer = Informer(transport, info_for(Widget), clock=clock)
        informer.start()
        api = new_client(emulator.config)
        try:
            await _watching(informer, proxy)
            proxy.freeze()
            await api.create(widget("after-freeze"))
            waited = 0
            while informer.stats["watches_cut"] == 0:
                assert waited < liveness.bound, f"not cut after {waited}s: {informer.stats}"
                clock.advance(1.0)
                waited += 1
                await asyncio.sleep(0.02)  # the probe's requests (real time) run meanwhile
            print(f"cut {waited}s after the freeze on client-go's figures (bound {liveness.bound:g}s)")
            assert waited > liveness.probe_after
            await eventually(lambda: informer.store.get("default/after-freeze") is not None)
        finally:
            await api.close()
            await informer.stop()
            await transport.close()


async def test_with_client_go_s_figures_a_healthy_idle_watch_is_probed_never_cut(
    emulator: Environment,
) -> None:
    clock = FakeClock()
    transport = RestTransport(emulator.config)
    informer = Informer(transport, info_for(Widget), clock=clock)
    informer.start()
    api = new_client(emulator.config)
    try:
        assert await informer.wait_for_sync(30)
        await eventually(lambda: informer._monitor is not None)
        for second in range(280):  # under the watch's own timeoutSeconds (300 s at least)
            if second % 60 == 30:  # the server's version moves on, for other kinds only
                await api.create(ConfigMap.model_validate({"metadata": {"name": f"cm{second}"}}))
            clock.advance(1.0)
            await asyncio.sleep(0)
            await eventually(lambda: not informer.probing, timeout=10)  # answered in real time
        assert informer.stats["probes"] >= 4, informer.stats
        assert informer.stats["watches_cut"] == 0 and informer.stats["watches"] == 1, informer.stats
    finally:
        await api.close()
        await informer.stop()
        await transport.close()


@pytest.mark.parametrize("mode", MODES)
async def test_a_healthy_idle_watch_is_never_cut_however_often_it_is_probed(mode: str) -> None:
    """The real server sends an idle watch a bookmark about once a minute at most, so it is probed at
    every second of silence here: each probe must find that the watch missed nothing."""
    async with environment(mode, **({} if mode == "real" else {"bookmark_interval": 30.0})) as env:
        transport = RestTransport(env.config)
        informer = Informer(transport, info_for(Widget), liveness=FAST)
        informer.start()
        api = new_client(env.config)
        try:
            assert await informer.wait_for_sync(30)
            await api.create(widget("before"))
            for i in range(6):  # other kinds change: the server's version moves past the watch's
                await asyncio.sleep(1.5)
                await api.create(ConfigMap.model_validate({"metadata": {"name": f"cm{i}"}}))
            await eventually(lambda: informer.stats["probes"] >= 5, timeout=20)
            await api.create(widget("after"))
            await eventually(lambda: informer.store.get("default/after") is not None)
            assert informer.stats["watches_cut"] == 0 and informer.stats["watches"] == 1, informer.stats
        finally:
            await api.close()
            await informer.stop()
            await transport.close()


async def test_the_managers_option_reaches_its_informers(emulator: Environment) -> None:
    mgr = Manager(emulator.config, ManagerOptions(health_probe_bind_address="0", watch_liveness=FAST))
    assert mgr.cache.get_informer(Widget).liveness is FAST
    assert Manager(emulator.config).cache.get_informer(Widget).liveness == WatchLiveness()
    await mgr.transport.close()
