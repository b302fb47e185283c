"""14-daemons: per object, a daemon that checks `ctx.stopped` and one that is cancelled, both restarted
after failures, the second only for annotated objects; a deleted object waits for the first."""

from __future__ import annotations

import asyncio
from typing import Any

import daemons
from kopfexample import KopfExample, kopf_example

from pyscaffold_op.runtime import Client, NotFound
from pyscaffold_op.testing import FakeClock, eventually


async def test_daemons_accompany_each_example(client: Client, running: Any, lines_of: Any) -> None:
    clock = FakeClock()
    logged = lines_of("daemons")

    def pings(name: str, which: str) -> int:
        """Ping lines of one daemon for one object: the line's log keys name the object."""
        prefix = f"=> Ping from {which}"
        return len([x for x in logged.lines if x.keys.get("name_") == name and x.message.startswith(prefix)])

    async def message(name: str) -> str | None:
        kex = await client.get(KopfExample, name, namespace="default")
        return kex.status.message if kex.status else None

    async def until(check: Any, step: float) -> None:
        """Move the clock `step` seconds at a time until `check()` holds (a step made before a daemon
        armed its timer is made again, so a slow machine only takes longer)."""

        async def moved() -> bool:
            if await check():
                return True
            await asyncio.sleep(0.05)
            clock.advance(step)
            return False

        await eventually(moved, timeout=20)

    async def pinged_both() -> bool:
        return pings("kex-1", "a checked daemon") == 1 and pings("kex-2", "a checked daemon") == 1

    quiet = kopf_example("kex-2")
    quiet.metadata.annotations = {}
    async with running(daemons.setup, clock=clock) as mgr:
        await client.create(kopf_example("kex-1"))
        await client.create(quiet)
        await until(pinged_both, 1)  # three failures, each restarted after backoff=1 s; the fourth runs
        assert await all_equal(message, "Failed 3 times.")  # kopf's `retry`: ctx.attempt 0, 1, 2
        failed = {"controller": "kopfexample-daemons", "daemon": "background_checked", "result": "error"}
        assert mgr.metrics.value("pyop_daemon_runs_total", failed) == 6  # three per object
        await eventually(lambda: pings("kex-1", "an async daemon") == 1)
        assert pings("kex-2", "an async daemon") == 0  # annotations={"someannotation": "somevalue"}
        kex = await client.get(KopfExample, "kex-1", namespace="default")
        assert "kopf.dev/daemons" in (kex.metadata.finalizers or [])

        await client.delete(KopfExample, "kex-1", namespace="default")  # both stop; the object waits

        async def gone() -> bool:  # the async daemon's grace period and cancellation run on the clock
            try:
                await client.get(KopfExample, "kex-1", namespace="default")
            except NotFound:
                return True
            return False

        await until(gone, 0.5)
        runs = {"controller": "kopfexample-daemons", "daemon": "background_checked", "result": "success"}
        assert mgr.metrics.value("pyop_daemon_runs_total", runs) == 1  # it reported before it went

        # kex-2's checked daemon accompanies it for 30 s, then reports
        await until(lambda: all_equal(message, "Accompanying is finished.", names=("kex-2",)), daemons.PING)
        assert pings("kex-2", "a checked daemon") == 7  # at 0, 5, ... 30 s


async def all_equal(message: Any, want: str, names: tuple[str, ...] = ("kex-1", "kex-2")) -> bool:
    return all([await message(name) == want for name in names])
