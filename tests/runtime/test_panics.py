"""Issue 28 item 1: a reconcile that raises anything a handler does not expect (a CancelledError of its
own, SystemExit, KeyboardInterrupt, an exception whose __str__ raises) is recovered as controller-
runtime recovers a panic: logged, counted, retried with backoff; every worker lives on."""

from __future__ import annotations

import asyncio
import io
import json
import logging

import pytest

from pyscaffold_op.runtime import (
    Channel,
    Controller,
    EnqueueRequestsFromMapFunc,
    ItemExponentialFailureRateLimiter,
    Request,
    RuntimeMetrics,
    setup_logging,
)
from pyscaffold_op.runtime.panics import own_cancellation, panic_message, safe_str
from pyscaffold_op.testing import FakeClock, eventually


class BadStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str for you")


def _raise(kind: str) -> None:
    if kind == "cancel":
        raise asyncio.CancelledError()
    if kind == "exit":
        raise SystemExit(0)
    if kind == "interrupt":
        raise KeyboardInterrupt
    if kind == "badstr":
        raise BadStr()


def test_safe_str_and_panic_message() -> None:
    assert safe_str(BadStr()) == "<BadStr: str() failed>"
    assert safe_str(ValueError("x")) == "x"
    assert panic_message(SystemExit(3)) == "panic: SystemExit: 3 [recovered]"
    assert panic_message(asyncio.CancelledError()) == "panic: CancelledError [recovered]"


async def test_own_cancellation_told_apart() -> None:
    seen: list[bool] = []

    async def victim() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            seen.append(own_cancellation())
            raise

    t = asyncio.create_task(victim())
    await asyncio.sleep(0)
    t.cancel()
    with pytest.raises(asyncio.CancelledError):
        await t
    assert seen == [True] and not own_cancellation()


@pytest.mark.parametrize("kind", ["cancel", "exit", "interrupt", "badstr"])
async def test_workers_survive_whatever_reconcile_raises(kind: str) -> None:
    stream = io.StringIO()
    handler = setup_logging("info", "json", stream)
    clock = FakeClock()
    calls: list[str] = []

    async def reconcile(req: Request) -> None:
        calls.append(req.name)
        if req.name.startswith("bad") and calls.count(req.name) == 1:
            _raise(kind)

    metrics = RuntimeMetrics()
    ctrl = Controller(
        "t",
        reconcile,
        metrics=metrics,
        max_concurrent_reconciles=2,
        rate_limiter=ItemExponentialFailureRateLimiter(0.01, 1.0),
        clock=clock,
    )
    source: asyncio.Queue[str] = asyncio.Queue()
    ctrl.watch(Channel(source), EnqueueRequestsFromMapFunc(lambda name: [Request("ns", name)]))
    try:
        await ctrl.start()
        for i in range(10):  # more faults than workers: each used to kill one
            await source.put(f"bad{i}")
        await eventually(lambda: len(calls) == 10 and ctrl.queue.waiting() == 10)
        assert all(not w.done() for w in ctrl._workers)
        clock.advance(0.01)  # the rate limiter's first delay: every faulty key is retried, and passes
        await source.put("good")
        await eventually(lambda: len(calls) == 21 and not ctrl.queue.processing())
        assert sorted(set(calls)) == sorted({f"bad{i}" for i in range(10)} | {"good"})

        def value(name: str, **labels: str) -> float:
            return metrics.value(name, {"controller": "t", **labels})

        panics = 0 if kind == "badstr" else 10
        assert value("controller_runtime_reconcile_panics_total") == panics
        assert value("controller_runtime_reconcile_errors_total") == 10
        assert value("controller_runtime_reconcile_total", result="error") == 10
        assert value("controller_runtime_reconcile_total", result="success") == 11
        lines = [json.loads(line) for line in stream.getvalue().splitlines() if line.startswith("{")]
        errors = [x for x in lines if x["level"] == "error"]
        assert len(errors) == 10
        want = "Reconciler error" if kind == "badstr" else "Observed a panic"
        assert {x["msg"] for x in errors} == {want}
        if kind == "badstr":
            assert {x["error"] for x in errors} == {"<BadStr: str() failed>"}
        else:
            assert all(x["error"].startswith("panic: ") and "[recovered]" in x["error"] for x in errors)
    finally:
        assert await ctrl.stop(timeout=1)
        logging.getLogger().removeHandler(handler)


async def test_shutdown_cancellation_still_stops_a_worker() -> None:
    started = asyncio.Event()

    async def reconcile(req: Request) -> None:
        started.set()
        await asyncio.sleep(3600)

    ctrl = Controller("t", reconcile, max_concurrent_reconciles=1)
    source: asyncio.Queue[str] = asyncio.Queue()
    ctrl.watch(Channel(source), EnqueueRequestsFromMapFunc(lambda name: [Request("ns", name)]))
    await ctrl.start()
    await source.put("x")
    await asyncio.wait_for(started.wait(), 5)
    assert not await ctrl.stop(timeout=0)  # did not drain: the worker was cancelled, and ended
    assert ctrl._workers == []
