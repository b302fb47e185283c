"""Clocks for the simulated controllers: the real one, and a fake one tests move by hand (CronJob
schedules, Job deadlines, TTLs, minReadySeconds)."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta


class Timer:
    def __init__(self) -> None:
        self.cancelled = False
        self._handle: asyncio.TimerHandle | None = None

    def cancel(self) -> None:
        self.cancelled = True
        if self._handle is not None:
            self._handle.cancel()


class Clock:
    """Wall-clock time; timers on the running event loop."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def call_later(self, seconds: float, fn: Callable[[], None]) -> Timer:
        timer = Timer()
        timer._handle = asyncio.get_running_loop().call_later(max(seconds, 0.0), fn)
        return timer


class FakeClock(Clock):
    """Time that moves only when a test calls `advance` (from any thread): due timers fire then."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime.now(UTC).replace(microsecond=0)
        self._timers: list[tuple[datetime, int, Timer, Callable[[], None]]] = []
        self._seq = itertools.count()
        self._lock = threading.Lock()

    def now(self) -> datetime:
        return self._now

    def call_later(self, seconds: float, fn: Callable[[], None]) -> Timer:
        timer = Timer()
        with self._lock:
            when = self._now + timedelta(seconds=max(seconds, 0.0))
            heapq.heappush(self._timers, (when, next(self._seq), timer, fn))
        return timer

    def advance(self, seconds: float) -> None:
        """Move time forward and run the timers that came due, in order."""
        with self._lock:
            self._now += timedelta(seconds=seconds)
            due = []
            while self._timers and self._timers[0][0] <= self._now:
                due.append(heapq.heappop(self._timers))
        for _when, _seq, timer, fn in due:
            if not timer.cancelled:
                fn()


def rfc3339(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
