"""Controller semantics without a server: requests come from a Channel source."""

from __future__ import annotations

import asyncio
import itertools
import time

from pyscaffold_op.runtime import (
    Channel,
    Controller,
    EnqueueRequestsFromMapFunc,
    ItemExponentialFailureRateLimiter,
    Request,
    Result,
    RuntimeMetrics,
    TerminalError,
)
from pyscaffold_op.testing import eventually


def make(reconciler: object, **kwargs: object) -> tuple[Controller, asyncio.Queue[str], RuntimeMetrics]:
    metrics = RuntimeMetrics()
    ctrl = Controller(
        "t", reconciler, metrics=metrics, rate_limiter=ItemExponentialFailureRateLimiter(0.01, 1.0), **kwargs
    )  # type: ignore[arg-type]
    source: asyncio.Queue[str] = asyncio.Queue()
    ctrl.watch(Channel(source), EnqueueRequestsFromMapFunc(lambda name: [Request("ns", name)]))
    return ctrl, source, metrics


async def _true(v: bool) -> bool:
    return v


async def test_result_kinds_and_metrics() -> None:
    calls: list[str] = []

    async def reconcile(req: Request) -> Result | None:
        calls.append(req.name)
        n = calls.count(req.name)
        if req.name == "requeue" and n == 1:
            return Result(requeue=True)
        if req.name == "after" and n == 1:
            return Result(requeue_after=0.05)
        if req.name == "terminal":
            raise TerminalError(ValueError("bad spec"))
        return None

    ctrl, source, m = make(reconcile)
    await ctrl.start()
    for name in ("ok", "requeue", "after", "terminal"):
        await source.put(name)
    await eventually(lambda: _true(calls.count("requeue") == 2 and calls.count("after") == 2))
    await asyncio.sleep(0.1)
    assert calls.count("terminal") == 1 and calls.count("ok") == 1  # terminal errors are not retried
    assert await ctrl.stop(timeout=1)

    def total(result: str) -> float:
        return m.value("controller_runtime_reconcile_total", {"controller": "t", "result": result})

    assert (total("success"), total("requeue"), total("requeue_after"), total("error")) == (3, 1, 1, 1)
    assert m.value("controller_runtime_terminal_reconcile_errors_total", {"controller": "t"}) == 1
    assert m.value("workqueue_adds_total", {"name": "t", "controller": "t"}) == 6
    assert m.value("controller_runtime_reconcile_time_seconds_count", {"controller": "t"}) == 6


async def test_exceptions_back_off_and_success_forgets() -> None:
    times: list[float] = []

    async def reconcile(req: Request) -> None:
        times.append(time.monotonic())
        if len(times) < 5:
            raise RuntimeError("not yet")

    ctrl, source, m = make(reconcile)
    await ctrl.start()
    await source.put("x")
    await eventually(lambda: _true(len(times) == 5))
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert gaps[0] >= 0.009 and gaps[3] >= 0.079  # 10, 20, 40, 80 ms
    assert m.value("controller_runtime_reconcile_errors_total", {"controller": "t"}) == 4
    await asyncio.sleep(0.01)
    assert ctrl.queue.num_requeues(Request("ns", "x")) == 0
    await ctrl.stop()


async def test_max_concurrency_and_no_overlap_per_key() -> None:
    active: set[str] = set()
    peak = 0
    overlap = False
    calls: list[str] = []

    async def reconcile(req: Request) -> None:
        nonlocal peak, overlap
        overlap |= req.name in active
        active.add(req.name)
        peak = max(peak, len(active))
        calls.append(req.name)
        await asyncio.sleep(0.03)
        active.discard(req.name)

    ctrl, source, _m = make(reconcile, max_concurrent_reconciles=3)
    await ctrl.start()
    for i in range(6):
        await source.put(f"k{i}")
    await asyncio.sleep(0.01)
    for _ in range(50):
        await source.put("k0")  # while k0 is in flight
    await eventually(lambda: _true(len(calls) == 7))
    await asyncio.sleep(0.1)
    assert peak == 3 and not overlap and calls.count("k0") == 2
    await ctrl.stop()


async def test_stop_waits_for_in_flight_then_cancels_after_timeout() -> None:
    finished: list[str] = []

    async def reconcile(req: Request) -> None:
        await asyncio.sleep(0.1 if req.name == "short" else 10)
        finished.append(req.name)

    ctrl, source, _m = make(reconcile, max_concurrent_reconciles=2)
    await ctrl.start()
    await source.put("short")
    await source.put("long")
    await asyncio.sleep(0.02)
    t0 = time.monotonic()
    assert await ctrl.stop(timeout=0.3) is False  # "long" had to be cancelled
    assert finished == ["short"] and time.monotonic() - t0 < 1


async def test_reconciler_must_be_async() -> None:
    import pytest

    class Sync:
        def reconcile(self, req: Request) -> None: ...

    with pytest.raises(TypeError, match="async"):
        Controller("x", Sync())
