"""Thread CPU time spent in a few hot functions of the pyop operator, counted where they run.

A sampling profiler (cpusampler.py) counts a signal only between bytecodes, so a long call into C
(pydantic-core's decoding, OpenSSL) is under-sampled; cProfile inflates code made of many small calls.
These counters wrap a handful of named functions and add up the calling thread's CPU time
(`time.thread_time`, which costs ~1 µs a read: the figures are upper bounds, a few µs high per call)
and their calls, so a per-object cost of each path can be read from one benchmark run:

    counters = HotCounters.install()   # before the manager starts
    ...
    counters.write(path, objects=n)    # "name calls µs/call µs/object" rows

Nested wrapped functions are each counted whole (the HTTP parser's time includes the body callbacks
it makes).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# (module, class, method, label): the paths the issue-37 accounting names
TARGETS = (
    ("pyscaffold_op.runtime.objects.kinds", "ResourceInfo", "decode", "typed decode (pydantic-core)"),
    ("pyscaffold_op.runtime.objects.kinds", "ResourceInfo", "encode", "typed encode"),
    ("pyscaffold_op.runtime.client.http1", "ResponseParser", "feed", "HTTP/1.1 parse (with body callbacks)"),
    ("pyscaffold_op.runtime.client.http1", "ResponseParser", "_on_header", "HTTP/1.1 header callbacks"),
)


class HotCounters:
    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        self.seconds: dict[str, float] = {}

    @classmethod
    def install(cls) -> HotCounters:
        import importlib

        counters = cls()
        for module, owner, name, label in TARGETS:
            klass = getattr(importlib.import_module(module), owner)
            setattr(klass, name, counters._wrap(getattr(klass, name), label))
        return counters

    def _wrap(self, func: Callable[..., Any], label: str) -> Callable[..., Any]:
        self.calls[label], self.seconds[label] = 0, 0.0
        clock = time.thread_time
        calls, seconds = self.calls, self.seconds

        @functools.wraps(func)
        def counted(*args: Any, **kwargs: Any) -> Any:
            start = clock()
            try:
                return func(*args, **kwargs)
            finally:
                seconds[label] += clock() - start
                calls[label] += 1

        return counted

    def rows(self, objects: int, process_seconds: float) -> list[str]:
        out = [f"process CPU {process_seconds:.3f} s (start-up included), {objects} objects"]
        out.append(f"{'path':40s} {'calls':>8s} {'µs/call':>8s} {'µs/object':>10s}")
        for label, calls in self.calls.items():
            total = self.seconds[label]
            per_call = total * 1e6 / calls if calls else 0.0
            out.append(f"{label:40s} {calls:8d} {per_call:8.1f} {total * 1e6 / max(objects, 1):10.1f}")
        return out

    def write(self, path: Path, objects: int) -> None:
        path.write_text("\n".join(self.rows(objects, time.process_time())) + "\n")
