"""Counters and histograms for the per-reconcile hot path, exposed exactly as prometheus_client's.

prometheus_client's `inc` and `observe` take a lock and go through three Python calls each (a
histogram: a lock for its sum and another for its bucket, found by a Python loop over the bounds). A
reconcile makes six of them (the work queue's add, wait and work time, the reconcile's count and
time): a fifth of the operator's Python calls per object in `make bench-go`. Here a child is a plain
float or a list of counts, updated where the manager's loop runs (the runtime updates its metrics on
that one thread), and read when scraped: `collect()` yields the same families, samples, labels and
`le` strings as prometheus_client's Counter and Histogram, so a scrape cannot tell them apart
(tests/runtime/test_fastmetrics.py compares both, sample for sample).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from typing import Any

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.utils import floatToGoString


class _Family:
    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], registry: Any) -> None:
        self.name, self.documentation, self.labelnames = name, documentation, tuple(labelnames)
        self._children: dict[tuple[str, ...], Any] = {}
        if registry is not None:
            registry.register(self)

    def _key(self, values: tuple[Any, ...], named: dict[str, Any]) -> tuple[str, ...]:
        if named:
            if values:
                raise ValueError("labels() takes label values by position or by name, not both")
            if set(named) != set(self.labelnames):
                raise ValueError(f"labels() needs exactly {self.labelnames}, got {sorted(named)}")
            values = tuple(named[n] for n in self.labelnames)
        if len(values) != len(self.labelnames):
            raise ValueError(f"labels() needs {len(self.labelnames)} values ({self.labelnames})")
        return tuple(str(v) for v in values)


class CounterChild:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1) -> None:
        if amount < 0:
            raise ValueError("counters can only be incremented by non-negative amounts")
        self.value += amount


class FastCounter(_Family):
    """prometheus_client's labelled Counter, without locks (see the module's docstring)."""

    def labels(self, *values: Any, **named: Any) -> CounterChild:
        key = self._key(values, named)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = CounterChild()
        return child

    def collect(self) -> Iterator[CounterMetricFamily]:
        family = CounterMetricFamily(self.name, self.documentation, labels=list(self.labelnames))
        for key, child in self._children.items():
            family.add_metric(list(key), child.value)
        yield family


class HistogramChild:
    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds  # with +Inf last, as prometheus_client keeps them
        self.counts = [0.0] * len(bounds)
        self.sum = 0.0

    def observe(self, amount: float) -> None:
        self.sum += amount
        # the first bucket whose bound is >= amount, as prometheus_client's `amount <= bound` loop
        self.counts[bisect_left(self.bounds, amount)] += 1


class FastHistogram(_Family):
    """prometheus_client's labelled Histogram, without locks (see the module's docstring)."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: Sequence[str],
        registry: Any,
        buckets: Sequence[float],
    ) -> None:
        super().__init__(name, documentation, labelnames, registry)
        bounds = tuple(float(b) for b in buckets)
        if bounds and bounds[-1] != float("inf"):
            bounds += (float("inf"),)
        self.bounds = bounds
        self._le = [floatToGoString(b) for b in bounds]

    def labels(self, *values: Any, **named: Any) -> HistogramChild:
        key = self._key(values, named)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = HistogramChild(self.bounds)
        return child

    def collect(self) -> Iterator[HistogramMetricFamily]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=list(self.labelnames))
        for key, child in self._children.items():
            cumulative, running = [], 0.0
            for le, count in zip(self._le, child.counts, strict=True):
                running += count
                cumulative.append((le, running))
            family.add_metric(list(key), cumulative, sum_value=child.sum)
        yield family
