"""The watch liveness monitor on a fake clock, with client-go's figures (issue 38; the faults it fixes
are in tests/faults/test_dead_watch.py and test_server_restart.py)."""

from __future__ import annotations

import asyncio

import pytest

from pyscaffold_op.runtime import WatchLiveness
from pyscaffold_op.runtime.cache.liveness import ALIVE, Finding, Verdict, WatchMonitor
from pyscaffold_op.testing import FakeClock

DEAD = Finding(Verdict.DEAD, "missed a change")
RESET = Finding(Verdict.RESET, "the server went back")


class Watch:
    """A watch's byte count, the probes asked and a scripted answer."""

    def __init__(self, clock: FakeClock, answer: Finding = ALIVE, lifetime: float = 400) -> None:
        self.received = 0
        self.probed_at: list[float] = []
        self.answer = answer
        self.during_probe: int = 0  # bytes that arrive while a probe is out
        self.cuts = 0
        self.clock = clock
        self.monitor = WatchMonitor(WatchLiveness(), clock, lambda: self.received, self.probe, lifetime)
        self.monitor.start(self.cut)

    async def probe(self) -> Finding:
        self.probed_at.append(self.clock.monotonic())
        self.received += self.during_probe
        return self.answer

    def cut(self) -> None:
        self.cuts += 1


async def run(clock: FakeClock, seconds: int, watch: Watch | None = None, traffic: int = 0) -> None:
    """Move the clock a second at a time, letting probes run; `traffic` bytes a second on `watch`."""
    for _ in range(seconds):
        if watch is not None:
            watch.received += traffic
        clock.advance(1)
        for _ in range(3):
            await asyncio.sleep(0)


def test_the_defaults_are_client_go_s() -> None:
    live = WatchLiveness()
    assert (live.probe_after, live.probe_timeout, live.min_watch_timeout) == (30.0, 15.0, 300.0)
    assert live.bound == 50.0
    assert live.watch_timeout(lambda: 0.0) == 300 and live.watch_timeout(lambda: 0.999) == 599
    with pytest.raises(ValueError, match="probe_after must be positive"):
        WatchLiveness(probe_after=0)


async def test_a_quiet_watch_is_probed_after_30s_and_every_30s_of_quiet_after() -> None:
    clock = FakeClock(monotonic=0.0)
    watch = Watch(clock)
    await run(clock, 100)
    assert watch.probed_at == [30.0, 60.0, 90.0]  # checked every 5 s; quiet counts again from a probe
    assert watch.cuts == 0 and watch.monitor.finding is None


async def test_a_watch_that_carries_bytes_is_never_probed() -> None:
    clock = FakeClock(monotonic=0.0)
    watch = Watch(clock, answer=DEAD)
    await run(clock, 200, watch, traffic=1)
    assert watch.probed_at == [] and watch.cuts == 0


async def test_quiet_is_counted_from_the_last_byte() -> None:
    clock = FakeClock(monotonic=0.0)
    watch = Watch(clock)
    await run(clock, 20, watch, traffic=1)  # bytes until 20 s, seen at the check at 20 s
    await run(clock, 60)
    assert watch.probed_at == [50.0, 80.0]


async def test_a_dead_or_reset_verdict_cuts_the_watch_once() -> None:
    for finding in (DEAD, RESET):
        clock = FakeClock(monotonic=0.0)
        watch = Watch(clock, answer=finding)
        await run(clock, 100)
        assert watch.cuts == 1 and watch.monitor.finding == finding and watch.probed_at == [30.0]


async def test_bytes_during_the_probe_overrule_a_dead_verdict() -> None:
    clock = FakeClock(monotonic=0.0)
    watch = Watch(clock, answer=DEAD)
    watch.during_probe = 1
    await run(clock, 70)
    assert watch.cuts == 0 and len(watch.probed_at) == 2


async def test_a_watch_the_server_never_ends_is_cut_past_its_timeout() -> None:
    clock = FakeClock(monotonic=0.0)
    watch = Watch(clock, lifetime=400)  # asked the server for timeoutSeconds=400
    await run(clock, 429, watch, traffic=1)
    assert watch.cuts == 0
    await run(clock, 1, watch, traffic=1)
    assert watch.cuts == 1 and watch.monitor.finding is not None
    assert "did not end the watch after its timeoutSeconds (400s)" in watch.monitor.finding.why


async def test_stop_cancels_timers_and_a_probe_in_flight() -> None:
    clock = FakeClock(monotonic=0.0)
    gate = asyncio.Event()

    async def probe() -> Finding:
        await gate.wait()
        return DEAD

    cuts: list[int] = []
    monitor = WatchMonitor(WatchLiveness(), clock, lambda: 0, probe, 400)
    monitor.start(lambda: cuts.append(1))
    await run(clock, 31)
    assert monitor.probing
    monitor.stop()
    await asyncio.sleep(0)
    assert not monitor.probing and clock.pending() == 0
    gate.set()
    await run(clock, 500)
    assert cuts == []


async def test_a_watch_reopened_after_a_break_is_probed_at_once() -> None:
    clock = FakeClock(monotonic=0.0)
    probed: list[float] = []

    async def probe() -> Finding:
        probed.append(clock.monotonic())
        return RESET

    cuts: list[int] = []
    monitor = WatchMonitor(WatchLiveness(), clock, lambda: 0, probe, 400)
    monitor.start(lambda: cuts.append(1), probe_now=True)
    await asyncio.sleep(0)
    assert probed == [0.0] and cuts == [1] and monitor.finding == RESET
    monitor.stop()
