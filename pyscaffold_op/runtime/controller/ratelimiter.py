"""Rate limiters for the work queue, with client-go's semantics (k8s.io/client-go/util/workqueue).

`when(item)` returns how long to wait before the item may be processed again and records a failure;
`forget(item)` clears the item's history; `num_requeues(item)` is how many failures were recorded.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol

from pyscaffold_op.runtime.clock import REAL_CLOCK, Clock


class RateLimiter(Protocol):
    def when(self, item: Hashable) -> float: ...
    def forget(self, item: Hashable) -> None: ...
    def num_requeues(self, item: Hashable) -> int: ...


class ItemExponentialFailureRateLimiter:
    """Per-item exponential backoff: base * 2**failures, capped at max_delay (5 ms doubling to 1000 s)."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        if exp > 62:  # 2**exp would overflow the float range long after hitting the cap
            return self.max_delay
        return min(self.base_delay * (2**exp), self.max_delay)

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class ItemFastSlowRateLimiter:
    """`fast_delay` for the first `max_fast_attempts` failures of an item, then `slow_delay`."""

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        self.fast_delay, self.slow_delay, self.max_fast_attempts = fast_delay, slow_delay, max_fast_attempts
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        self._failures[item] = self._failures.get(item, 0) + 1
        return self.fast_delay if self._failures[item] <= self.max_fast_attempts else self.slow_delay

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class BucketRateLimiter:
    """Overall token bucket (golang.org/x/time/rate `Reserve` semantics): `qps` tokens a second, at most
    `burst` saved. Every `when` takes a token; when none is left the caller is told how long until its
    reservation matures (tokens may go negative, so reservations queue up fairly)."""

    def __init__(self, qps: float = 10.0, burst: int = 100, clock: Clock | None = None) -> None:
        self.qps, self.burst, self._clock = qps, burst, clock or REAL_CLOCK
        self._tokens = float(burst)
        self._last = self._clock.monotonic()

    def when(self, item: Hashable) -> float:
        now = self._clock.monotonic()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def forget(self, item: Hashable) -> None:
        """The bucket is shared by all items: nothing to forget."""

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest delay of several limiters (client-go's default controller limiter is one)."""

    def __init__(self, *limiters: RateLimiter) -> None:
        self.limiters = limiters

    def when(self, item: Hashable) -> float:
        return max(limiter.when(item) for limiter in self.limiters)

    def forget(self, item: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)


def default_controller_rate_limiter(clock: Clock | None = None) -> MaxOfRateLimiter:
    """Per-item exponential 5 ms -> 1000 s combined with an overall 10 qps / burst 100 bucket."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0), BucketRateLimiter(10.0, 100, clock=clock)
    )
