"""The work queue, with client-go's semantics, on asyncio.

Three layers as in k8s.io/client-go/util/workqueue:

* `Queue`: FIFO of keys with a *dirty* set (keys waiting) and a *processing* set (keys handed to a
  worker). A key is never handed to two workers at once: adding a key that is being processed only
  marks it dirty, and `done()` puts it back in the queue. Adding a key that is already waiting is a
  no-op, so a burst of events for one object becomes one reconcile.
* `DelayingQueue`: `add_after(key, delay)` keeps keys in a heap ordered by ready time, one timer armed
  for the earliest; a key already waiting keeps the earlier of its two ready times.
* `RateLimitingQueue`: `add_rate_limited(key)` = `add_after(key, limiter.when(key))`, plus `forget` and
  `num_requeues`.

All methods except `get` and `shut_down_with_drain` are synchronous and must run on the queue's event
loop thread (event handlers call `add` from the informer's task).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import deque
from collections.abc import Hashable
from typing import Protocol

from pyscaffold_op.runtime.clock import REAL_CLOCK, Clock, Timer
from pyscaffold_op.runtime.controller.ratelimiter import RateLimiter, default_controller_rate_limiter
from pyscaffold_op.runtime.waits import event_set_within


class QueueMetrics(Protocol):
    """Hooks the queue calls; `pyscaffold_op.runtime.servers.metrics` implements them with Prometheus."""

    def on_add(self) -> None: ...
    def on_get(self, queued_seconds: float) -> None: ...
    def on_done(self, work_seconds: float) -> None: ...
    def on_retry(self) -> None: ...
    def set_depth(self, depth: int) -> None: ...


class _NoMetrics:
    def on_add(self) -> None: ...
    def on_get(self, queued_seconds: float) -> None: ...
    def on_done(self, work_seconds: float) -> None: ...
    def on_retry(self) -> None: ...
    def set_depth(self, depth: int) -> None: ...


class ShutDown(Exception):
    """Raised by `Queue.get_nowait` on a shut-down, empty queue."""


class Queue:
    def __init__(
        self, name: str = "", metrics: QueueMetrics | None = None, *, clock: Clock | None = None
    ) -> None:
        self.name = name
        self.clock: Clock = clock or REAL_CLOCK
        self._metrics: QueueMetrics = metrics or _NoMetrics()
        self._queue: deque[Hashable] = deque()
        self._dirty: set[Hashable] = set()
        self._processing: set[Hashable] = set()
        self._added_at: dict[Hashable, float] = {}
        self._started_at: dict[Hashable, float] = {}
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._shutting_down = False
        self._drained: asyncio.Event | None = None

    # -- producer side ----------------------------------------------------------------------------
    def add(self, item: Hashable) -> None:
        if self._shutting_down or item in self._dirty:
            return  # waiting already: one processing covers both adds
        self._metrics.on_add()
        self._dirty.add(item)
        self._added_at[item] = self.clock.monotonic()
        if item in self._processing:
            return  # deferred: done() re-queues it, so no two workers hold one key
        self._queue.append(item)
        self._metrics.set_depth(len(self._queue))
        self._wake_one()

    def __len__(self) -> int:
        return len(self._queue)

    def shutting_down(self) -> bool:
        return self._shutting_down

    # -- consumer side ----------------------------------------------------------------------------
    async def get(self) -> tuple[Hashable | None, bool]:
        """Wait for a key. Returns `(key, False)`, or `(None, True)` once shut down and empty.

        The caller must call `done(key)` when finished with it.
        """
        while not self._queue and not self._shutting_down:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake_one()  # we were woken but will not take the key: pass it on
                else:
                    self._waiters.remove(waiter)
                raise
        if not self._queue:
            return None, True
        return self._take(), False

    def get_nowait(self) -> Hashable | None:
        """A key if one is ready, None if not; ShutDown when shut down and empty."""
        if self._queue:
            return self._take()
        if self._shutting_down:
            raise ShutDown(self.name)
        return None

    def _take(self) -> Hashable:
        item = self._queue.popleft()
        now = self.clock.monotonic()
        self._metrics.set_depth(len(self._queue))
        self._metrics.on_get(now - self._added_at.pop(item, now))
        self._processing.add(item)
        self._started_at[item] = now
        self._dirty.discard(item)
        return item

    def done(self, item: Hashable) -> None:
        """Mark `item` finished. If it was added again while processing, it goes back in the queue."""
        if item not in self._processing:
            return
        self._processing.discard(item)
        started = self._started_at.pop(item, None)
        if started is not None:
            self._metrics.on_done(self.clock.monotonic() - started)
        if item in self._dirty:
            self._queue.append(item)
            self._metrics.set_depth(len(self._queue))
            self._wake_one()
        if not self._processing and self._drained is not None:
            self._drained.set()

    # -- shutdown ---------------------------------------------------------------------------------
    def shut_down(self) -> None:
        """Stop accepting adds; `get` returns (None, True) once the queue is empty."""
        self._shutting_down = True
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    async def shut_down_with_drain(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Shut down and wait until no key is being processed. False when `timeout` ran out first."""
        self.shut_down()
        if not self._processing:
            return True
        self._drained = asyncio.Event()
        return await event_set_within(self._drained, timeout)

    # -- introspection (metrics, tests) ---------------------------------------------------------------
    def processing(self) -> frozenset[Hashable]:
        return frozenset(self._processing)

    def unfinished_work_seconds(self) -> float:
        now = self.clock.monotonic()
        return sum(now - t for t in self._started_at.values())

    def longest_running_processor_seconds(self) -> float:
        if not self._started_at:
            return 0.0
        return self.clock.monotonic() - min(self._started_at.values())

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return


class DelayingQueue(Queue):
    def __init__(
        self, name: str = "", metrics: QueueMetrics | None = None, *, clock: Clock | None = None
    ) -> None:
        super().__init__(name, metrics, clock=clock)
        self._heap: list[tuple[float, int, Hashable]] = []
        self._waiting: dict[Hashable, tuple[float, int]] = {}  # key -> (ready_at, seq) of its live entry
        self._seq = itertools.count()
        self._timer: Timer | None = None
        self._timer_at: float | None = None

    def add_after(self, item: Hashable, delay: float) -> None:
        """Add `item` once `delay` seconds have passed. The earlier ready time wins for a waiting key."""
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(item)
            return
        ready = self.clock.monotonic() + delay
        existing = self._waiting.get(item)
        if existing is not None and existing[0] <= ready:
            return
        seq = next(self._seq)
        self._waiting[item] = (ready, seq)
        heapq.heappush(self._heap, (ready, seq, item))  # a superseded entry stays, skipped when popped
        self._arm()

    def waiting(self) -> int:
        """Keys waiting for their delay to pass (tests, debugging)."""
        return len(self._waiting)

    def _arm(self) -> None:
        while self._heap and self._waiting.get(self._heap[0][2]) != self._heap[0][:2]:
            heapq.heappop(self._heap)  # stale: the key was re-scheduled earlier or already fired
        if not self._heap:
            self._cancel_timer()
            return
        when = self._heap[0][0]
        if self._timer is not None and self._timer_at == when:
            return
        self._cancel_timer()
        self._timer_at = when
        self._timer = self.clock.call_later(when - self.clock.monotonic(), self._fire)

    def _fire(self) -> None:
        self._timer = self._timer_at = None
        now = self.clock.monotonic()
        while self._heap and self._heap[0][0] <= now:
            ready, seq, item = heapq.heappop(self._heap)
            if self._waiting.get(item) == (ready, seq):
                del self._waiting[item]
                self.add(item)
        self._arm()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._timer_at = None

    def shut_down(self) -> None:
        self._cancel_timer()
        self._heap.clear()
        self._waiting.clear()
        super().shut_down()


class RateLimitingQueue(DelayingQueue):
    def __init__(
        self,
        rate_limiter: RateLimiter | None = None,
        name: str = "",
        metrics: QueueMetrics | None = None,
        *,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(name, metrics, clock=clock)
        self.rate_limiter: RateLimiter = rate_limiter or default_controller_rate_limiter(self.clock)

    def add_rate_limited(self, item: Hashable) -> None:
        """Add `item` after the rate limiter says it may run again (and count a retry)."""
        if self._shutting_down:
            return
        self._metrics.on_retry()
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: Hashable) -> None:
        """The item succeeded: clear its failure history so its next failure starts at the base delay."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return self.rate_limiter.num_requeues(item)
