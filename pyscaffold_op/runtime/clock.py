"""Time for the runtime: a `Clock` protocol, the real clock, and a fake one tests move by hand.

Like k8s.io/utils/clock: the work queue, rate limiters and leader election read time only through a
`Clock`, so a test can say "advance 5 ms" and assert what happened, instead of sleeping and hoping the
machine was fast enough. `RealClock` is the default everywhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
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
        """Run `callback` on the event loop after `delay` seconds; `cancel()` the returned timer."""
        ...

    def timeout(self, seconds: float | None) -> AbstractAsyncContextManager[None]:
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

    def timeout(self, seconds: float | None) -> AbstractAsyncContextManager[None]:
        return asyncio.timeout(seconds)


REAL_CLOCK: Clock = RealClock()


class _FakeTimer:
    __slots__ = ("callback", "cancelled", "when")

    def __init__(self, when: float, callback: Callable[[], object]) -> None:
        self.when, self.callback, self.cancelled = when, callback, False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A clock that moves only when told (`advance`). Timers fire, in order, inside `advance`.

    `await clock.wait_for_timers(n)` waits (on real time, bounded) until code under test has armed at
    least `n` timers, e.g. a queue waiting out a backoff, so a test advances only once it is waiting.
    """

    def __init__(self, start: datetime | None = None, monotonic: float = 1000.0) -> None:
        self._wall0 = start or datetime(2024, 1, 1, tzinfo=UTC)
        self._mono0 = self._mono = monotonic
        self._timers: list[tuple[float, int, _FakeTimer]] = []
        self._seq = itertools.count()
        self._armed: asyncio.Event | None = None

    def now(self) -> datetime:
        return self._wall0 + timedelta(seconds=self._mono - self._mono0)

    def monotonic(self) -> float:
        return self._mono

    def call_later(self, delay: float, callback: Callable[[], object]) -> Timer:
        timer = _FakeTimer(self._mono + max(0.0, delay), callback)
        heapq.heappush(self._timers, (timer.when, next(self._seq), timer))
        if self._armed is not None:
            self._armed.set()
        return timer

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        timer = self.call_later(seconds, lambda: fut.done() or fut.set_result(None))
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
        while self._timers and self._timers[0][0] <= target:
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
