"""Time for every part of pyop: a `Clock` protocol, the real clock, and the one `FakeClock`.

Like k8s.io/utils/clock: code that waits or stamps times reads them only through a `Clock`, so a test
can say "advance 5 ms" (the runtime's work queue, rate limiters, leader election) or "advance 60 s"
(the emulator's CronJob schedules, Job deadlines, TTLs, minReadySeconds) and assert what happened,
instead of sleeping and hoping the machine was fast enough. A bottom-layer module (stdlib only), so
the runtime and the emulator share one fake: one `FakeClock` can drive both a `Manager` and the
emulator's `Workloads` in the same test.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Timer(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> datetime:
        """Wall-clock time, timezone-aware UTC (what goes into API objects: Lease renewTime)."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (what durations and deadlines are measured on)."""
        ...

    async def sleep(self, seconds: float) -> None: ...

    def call_later(self, delay: float, callback: Callable[[], object]) -> Timer:
        """Run `callback` after `delay` seconds (on the running event loop for the real clock, inside
        `advance` for the fake one); `cancel()` the returned timer."""
        ...

    def timeout(self, seconds: float | None) -> AbstractAsyncContextManager[object]:
        """`asyncio.timeout` on this clock: the body is cancelled and TimeoutError raised after `seconds`."""
        ...


class RealClock:
    """The machine's clocks and the running event loop's timers."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def call_later(self, delay: float, callback: Callable[[], object]) -> Timer:
        return asyncio.get_running_loop().call_later(max(0.0, delay), callback)

    def timeout(self, seconds: float | None) -> AbstractAsyncContextManager[object]:
        return asyncio.timeout(seconds)


REAL_CLOCK: Clock = RealClock()


class _FakeTimer:
    __slots__ = ("callback", "cancelled", "when")

    def __init__(self, when: float, callback: Callable[[], object]) -> None:
        self.when, self.callback, self.cancelled = when, callback, False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A clock that moves only when told (`advance`, from any thread). Timers fire, in order, inside
    `advance`, each seeing the time it fell due.

    It starts at `start` (default: the wall-clock time of its creation in whole seconds, so it agrees
    with the timestamps an emulator writes) and `monotonic` (default 1000.0).
    `await clock.wait_for_timers(n)` waits (on real time, bounded) until code under test has armed at
    least `n` timers, e.g. a queue waiting out a backoff, so a test advances only once it is waiting.
    """

    def __init__(self, start: datetime | None = None, monotonic: float = 1000.0) -> None:
        self._wall0 = start or datetime.now(UTC).replace(microsecond=0)
        self._mono0 = self._mono = monotonic
        self._timers: list[tuple[float, int, _FakeTimer]] = []
        self._seq = itertools.count()
        self._armed: asyncio.Event | None = None
        self._lock = threading.Lock()  # timers are armed on an event loop and fired from a test thread

    def now(self) -> datetime:
        return self._wall0 + timedelta(seconds=self._mono - self._mono0)

    def monotonic(self) -> float:
        return self._mono

    def call_later(self, delay: float, callback: Callable[[], object]) -> Timer:
        timer = _FakeTimer(self._mono + max(0.0, delay), callback)
        with self._lock:
            heapq.heappush(self._timers, (timer.when, next(self._seq), timer))
        if self._armed is not None:
            self._armed.set()
        return timer

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not fut.done():
                fut.set_result(None)

        timer = self.call_later(seconds, wake)
        try:
            await fut
        finally:
            timer.cancel()

    @contextlib.asynccontextmanager
    async def timeout(self, seconds: float | None) -> AsyncIterator[None]:
        # asyncio's own Timeout does the cancel/uncancel bookkeeping; the fake timer only tells it when.
        async with asyncio.timeout(None) as scope:
            timer = None
            if seconds is not None:
                loop = asyncio.get_running_loop()
                timer = self.call_later(seconds, lambda: scope.reschedule(loop.time()))
            try:
                yield
            finally:
                if timer is not None:
                    timer.cancel()

    def pending(self) -> int:
        """How many timers are armed and not cancelled."""
        return sum(1 for _, _, t in self._timers if not t.cancelled)

    def next_deadline(self) -> float | None:
        """When the earliest armed timer fires (monotonic seconds), None when there is none."""
        live = [t.when for _, _, t in self._timers if not t.cancelled]
        return min(live) if live else None

    def advance(self, seconds: float) -> None:
        """Move time forward by `seconds`, firing every timer that falls due, earliest first."""
        if seconds < 0:
            raise ValueError("a clock does not go back")
        target = self._mono + seconds
        while True:
            with self._lock:
                if not self._timers or self._timers[0][0] > target:
                    break
                when, _, timer = heapq.heappop(self._timers)
            if timer.cancelled:
                continue
            self._mono = max(self._mono, when)
            timer.callback()
        self._mono = target

    async def wait_for_timers(self, count: int = 1, timeout: float = 5.0) -> None:  # noqa: ASYNC109
        """Wait until at least `count` timers are armed (a real-time bound: a hang fails the test)."""
        if self._armed is None:
            self._armed = asyncio.Event()
        async with asyncio.timeout(timeout):
            while self.pending() < count:
                self._armed.clear()
                await self._armed.wait()


__all__ = ["REAL_CLOCK", "Clock", "FakeClock", "RealClock", "Timer"]
