"""15-timers: each timer waits for the object to be quiet for `idle` seconds, then pings every
`interval` seconds while it stays quiet (the manager's clock is a FakeClock: the test moves time)."""

from __future__ import annotations

import asyncio
from typing import Any

import timers
from kopfexample import KopfExample, kopf_example

from pyscaffold_op.runtime import Client
from pyscaffold_op.testing import FakeClock, eventually


async def test_timers_ping_once_the_object_is_quiet(client: Client, running: Any, lines_of: Any) -> None:
    clock = FakeClock()
    logged = lines_of("timers", clock)

    def seen() -> list[tuple[str, str, float]]:
        """(timer, spec.field, seconds since the start) of each ping: its `daemon` key names the timer."""
        return [
            (line.keys["daemon"].split("_")[-1], line.message.split("field=")[1].strip("'"), line.at - start)
            for line in logged.lines
        ]

    async with running(timers.setup, clock=clock) as mgr:
        start = clock.monotonic()
        await client.create(kopf_example("kex-1"))
        await clock.wait_for_timers(2)
        await ticks(clock, 12)
        assert seen() == [
            ("sync", "value", 5), ("sync", "value", 7), ("sync", "value", 9),
            ("async", "value", 10), ("sync", "value", 11),
        ]  # fmt: skip
        kex = await client.get(KopfExample, "kex-1", namespace="default")
        kex.spec.field = "changed"
        await client.update(kex)
        cached = mgr.cache.get_informer(KopfExample).store
        await eventually(lambda: cached.get("default/kex-1").spec.field == "changed")
        await ticks(clock, 6)  # the change at 12 restarts both quiet periods
        assert seen()[5:] == [("sync", "changed", 17)]


async def ticks(clock: FakeClock, seconds: int) -> None:
    """Advance one second at a time, letting each due timer run and re-arm before the next."""
    for _ in range(seconds):
        clock.advance(1)
        await asyncio.sleep(0.05)
        await clock.wait_for_timers(2)
