"""Controller semantics without a server: requests come from a Channel source."""

from __future__ import annotations

import asyncio
import itertools

import pytest

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
from pyscaffold_op.testing import FakeClock, eventually


def make(reconciler: object, **kwargs: object) -> tuple[Controller, asyncio.Queue[str], RuntimeMetrics]:
    metrics = RuntimeMetrics()
    ctrl = Controller(
        "t",
        reconciler,
        metrics=metrics,
        rate_limiter=ItemExponentialFailureRateLimiter(0.01, 1.0),
        **kwargs,  # type: ignore[arg-type]
    )
    source: asyncio.Queue[str] = asyncio.Queue()
    ctrl.watch(Channel(source), EnqueueRequestsFromMapFunc(lambda name: [Request("ns", name)]))
    return ctrl, source, metrics


def idle(ctrl: Controller) -> bool:
    """Nothing queued, waiting out a delay, or in flight."""
    return len(ctrl.queue) == 0 and ctrl.queue.waiting() == 0 and not ctrl.queue.processing()


async def test_result_kinds_and_metrics() -> None:
    calls: list[str] = []
    clock = FakeClock()

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

    ctrl, source, m = make(reconcile, clock=clock)
    await ctrl.start()
    for name in ("ok", "requeue", "after", "terminal"):
        await source.put(name)
    await eventually(lambda: len(calls) == 4 and ctrl.queue.waiting() == 2 and not ctrl.queue.processing())
    assert clock.next_deadline() == pytest.approx(
        clock.monotonic() + 0.01
    )  # requeue: the rate limiter's first delay
    clock.advance(0.05)  # requeue_after: exact
    await eventually(lambda: calls.count("requeue") == 2 and calls.count("after") == 2 and idle(ctrl))
    clock.advance(3600)
    assert idle(ctrl) and calls.count("terminal") == 1 and calls.count("ok") == 1  # terminal: no retry
    assert await ctrl.stop(timeout=1)

    def total(result: str) -> float:
        return m.value("controller_runtime_reconcile_total", {"controller": "t", "result": result})

    assert (total("success"), total("requeue"), total("requeue_after"), total("error")) == (3, 1, 1, 1)
    assert m.value("controller_runtime_terminal_reconcile_errors_total", {"controller": "t"}) == 1
    assert m.value("workqueue_adds_total", {"name": "t", "controller": "t"}) == 6
    assert m.value("controller_runtime_reconcile_time_seconds_count", {"controller": "t"}) == 6


async def test_exceptions_back_off_and_success_forgets() -> None:
    clock = FakeClock()
    times: list[float] = []

    async def reconcile(req: Request) -> None:
        times.append(clock.monotonic())
        if len(times) < 5:
            raise RuntimeError("not yet")

    ctrl, source, m = make(reconcile, clock=clock)
    await ctrl.start()
    await source.put("x")
    for failures in range(1, 5):
        await eventually(lambda n=failures: len(times) == n and ctrl.queue.waiting() == 1)
        clock.advance(clock.next_deadline() - clock.monotonic())  # type: ignore[operator]
    await eventually(lambda: len(times) == 5 and idle(ctrl))
    assert [b - a for a, b in itertools.pairwise(times)] == pytest.approx([0.01, 0.02, 0.04, 0.08])
    assert m.value("controller_runtime_reconcile_errors_total", {"controller": "t"}) == 4
    assert ctrl.queue.num_requeues(Request("ns", "x")) == 0
    await ctrl.stop()


async def test_max_concurrency_and_no_overlap_per_key() -> None:
    active: set[str] = set()
    peak = 0
    overlap = False
    calls: list[str] = []
    release = asyncio.Event()

    async def reconcile(req: Request) -> None:
        nonlocal peak, overlap
        overlap |= req.name in active
        active.add(req.name)
        peak = max(peak, len(active))
        calls.append(req.name)
        await release.wait()
        active.discard(req.name)

    ctrl, source, _m = make(reconcile, max_concurrent_reconciles=3)
    await ctrl.start()
    for i in range(6):
        await source.put(f"k{i}")
    # three in flight, three ready but not taken: the limit holds while every worker is busy
    await eventually(lambda: active == {"k0", "k1", "k2"} and len(ctrl.queue) == 3)
    for _ in range(50):
        await source.put("k0")  # while k0 is in flight
    await eventually(
        lambda: source.empty() and ctrl.queue.processing() == {Request("ns", f"k{i}") for i in range(3)}
    )
    release.set()
    await eventually(lambda: len(calls) == 7 and idle(ctrl))
    assert peak == 3 and not overlap and calls.count("k0") == 2
    await ctrl.stop()


async def test_stop_waits_for_an_in_flight_reconcile() -> None:
    started, release, finished = asyncio.Event(), asyncio.Event(), []

    async def reconcile(req: Request) -> None:
        started.set()
        await release.wait()
        finished.append(req.name)

    ctrl, source, _m = make(reconcile)
    await ctrl.start()
    await source.put("short")
    await started.wait()
    stopping = asyncio.create_task(ctrl.stop(timeout=60))
    await eventually(lambda: ctrl.queue.shutting_down())
    assert not stopping.done()
    release.set()
    assert await stopping is True and finished == ["short"]


async def test_stop_cancels_what_runs_past_the_timeout() -> None:
    started, cancelled = asyncio.Event(), []

    async def reconcile(req: Request) -> None:
        started.set()
        try:
            await asyncio.Event().wait()  # never finishes on its own
        except asyncio.CancelledError:
            cancelled.append(req.name)
            raise

    ctrl, source, _m = make(reconcile)
    await ctrl.start()
    await source.put("long")
    await started.wait()
    assert await ctrl.stop(timeout=0.01) is False  # the timeout is what is tested
    assert cancelled == ["long"]


async def test_reconciler_must_be_async() -> None:
    class Sync:
        def reconcile(self, req: Request) -> None: ...

    with pytest.raises(TypeError, match="async"):
        Controller("x", Sync())
