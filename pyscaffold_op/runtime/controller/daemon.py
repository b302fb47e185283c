"""Per-object daemons and timers (kopf's `@kopf.daemon` and `@kopf.timer`), on a controller's informer.

    mgr.builder().for_(Widget).daemon(watch_widget, grace_period=1).timer(ping, interval=60, idle=30)

This module holds what a daemon's author meets (`DaemonContext`, `Stopped`, the stop reasons) and what
the builder records (`DaemonSpec`); `daemonset.Daemons` runs them: an event handler on the
controller's `for_()` kind that sees every add, update and delete from the manager's shared informer
(no watch of its own) and keeps one asyncio task per object and daemon (or timer) while the object
exists, matches the daemon's filter and the controller runs. The controller starts it with its other
watches, after the manager won the election (so only the leader runs daemons), and stops it with
itself: on shutdown, and at once when leadership is lost.

A daemon function is called with a `DaemonContext` (the request, `stopped`, `attempt`, the cached
object) and runs as long as it likes; a timer function is called the same way on its schedule.
Semantics, point by point against kopf's, are in docs/runtime.md ("Daemons and timers"):

* start: on the object's first event (its add, or the initial list when the manager starts), after
  `initial_delay` (seconds, or a function of the object);
* stop: when the object is deleted or marked for deletion, stops matching the filter, or the
  controller stops (shutdown, lost leadership): `ctx.stopped` is set, the function gets
  `grace_period` seconds to return, then an `async def` one is cancelled; if it has not ended
  `cancellation_timeout` seconds later it is abandoned with a warning (a plain `def` one, in its own
  thread, cannot be cancelled: it must check `ctx.stopped`);
* failure: an exception is logged (with the reconcile's log keys) and counted, and the function is
  called again after `backoff` (seconds; by default 1 s doubling to 5 min per object), with
  `ctx.attempt` one higher; `TerminalError` ends it for the object's life in this process;
* a daemon that returns is done for the object (kopf: not restarted), unless it returned
  `Result(requeue_after=t)`: then it runs again after `t`;
* a timer runs every `interval` seconds after its last call ended (`sharp=True`: on an
  `interval` grid from its first call), and with `idle=` only once the object has not changed for
  `idle` seconds (every event of the object is a change, as in kopf); a timer never overlaps itself;
* `finalizer=`: the runtime puts that finalizer on each object that has the daemon and removes it
  once the daemon stopped after a deletion, so the object outlives its daemon (kopf always does
  this for daemons; pyop only when asked, since most daemons need not delay a deletion).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pyscaffold_op.runtime.clock import Clock
from pyscaffold_op.runtime.controller.predicate import ObjectFilter
from pyscaffold_op.runtime.controller.request import Request, Result

# Stop reasons, as `ctx.stopped.reason` says them (kopf's DaemonStoppingReason).
DELETED = "object deleted"
FILTERED_OUT = "filter no longer matches"
SHUTDOWN = "controller stopping"
LEADERSHIP_LOST = "leadership lost"

DaemonFunction = Callable[["DaemonContext"], Awaitable[Result | None] | Result | None]
Delay = float | Callable[[Any], float] | None


class Stopped:
    """Whether the daemon (timer) should end, and why: kopf's `stopped` flag.

    `if ctx.stopped:` tests it; `await ctx.stopped.wait(5)` sleeps at most 5 s on the controller's
    clock and returns True at once when stopped; a plain `def` daemon, in its own thread, sleeps with
    `ctx.stopped.wait_blocking(5)` (real time)."""

    __slots__ = ("_clock", "_event", "_thread_event", "reason")

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._event = asyncio.Event()
        self._thread_event = threading.Event()
        self.reason: str | None = None

    def __bool__(self) -> bool:
        return self.reason is not None

    def __repr__(self) -> str:
        return f"Stopped({self.reason!r})" if self.reason else "Stopped(False)"

    def is_set(self) -> bool:
        return self.reason is not None

    def set(self, reason: str) -> None:
        """Ask the daemon to stop (the event loop's thread only); the first reason is kept."""
        if self.reason is None:
            self.reason = reason
            self._event.set()
            self._thread_event.set()

    async def wait(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Wait until stopped or `timeout` seconds (the controller's clock) passed; True when stopped."""
        if self.reason is not None:
            return True
        if timeout is None:
            await self._event.wait()
            return True
        with contextlib.suppress(TimeoutError):
            async with self._clock.timeout(max(0.0, timeout)):
                await self._event.wait()
        return self.reason is not None

    def wait_blocking(self, timeout: float | None = None) -> bool:
        """`wait` for a plain `def` daemon's thread (real time); True when stopped."""
        return self._thread_event.wait(timeout)


@dataclass
class DaemonContext:
    """What a daemon or timer function is called with."""

    request: Request
    stopped: Stopped
    attempt: int
    """Failed calls since the last one that succeeded (kopf's `retry`): 0 on a first call."""
    daemon: str
    """The function's name (the `daemon` key of its log lines and metrics)."""
    _read: Callable[[], Any] = field(repr=False)

    @property
    def name(self) -> str:
        return self.request.name

    @property
    def namespace(self) -> str:
        return self.request.namespace

    @property
    def object(self) -> Any:
        """The object as the cache holds it now (a new copy per read), None once deleted: kopf's live
        `body`, read when needed rather than kept."""
        return self._read()

    async def sleep(self, seconds: float) -> bool:
        """Sleep `seconds` unless stopped first; True when stopped (`if await ctx.sleep(5): return`)."""
        return await self.stopped.wait(seconds)


@dataclass(frozen=True, kw_only=True)
class DaemonSpec:
    """One `builder.daemon(...)` or `builder.timer(...)`."""

    fn: DaemonFunction
    name: str
    timer: bool = False
    interval: float | None = None
    idle: float | None = None
    sharp: bool = False
    initial_delay: Delay = None
    backoff: float | None = None
    grace_period: float = 5.0
    cancellation_timeout: float = 5.0
    filter: ObjectFilter | None = None
    finalizer: str | None = None

    def __post_init__(self) -> None:
        what = f"{'timer' if self.timer else 'daemon'} {self.name}"
        for key in ("interval", "idle", "backoff", "grace_period", "cancellation_timeout"):
            value = getattr(self, key)
            if value is not None and value < 0:
                raise ValueError(f"{what}: {key} must not be negative, got {value}")
        if isinstance(self.initial_delay, int | float) and self.initial_delay < 0:
            raise ValueError(f"{what}: initial_delay must not be negative, got {self.initial_delay}")
        if self.timer and self.interval is not None and self.interval <= 0:
            raise ValueError(f"{what}: interval must be positive, got {self.interval}")
        if self.timer and self.sharp and self.interval is None:
            raise ValueError(f"{what}: sharp=True needs an interval")
        if not self.timer and (self.interval is not None or self.idle is not None or self.sharp):
            raise ValueError(f"{what}: interval, idle and sharp are a timer's")

    @property
    def kind(self) -> str:
        return "timer" if self.timer else "daemon"

    @property
    def is_async(self) -> bool:
        fn = self.fn
        return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004
