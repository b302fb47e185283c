"""Controller semantics without a server: requests come from a Channel source."""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import logging

import pytest

from pyscaffold_op.runtime import (
    AlreadyExists,
    ApiError,
    Channel,
    Conflict,
    Controller,
    EnqueueRequestsFromMapFunc,
    ItemExponentialFailureRateLimiter,
    NotFound,
    Request,
    Result,
    RuntimeMetrics,
    TerminalError,
    setup_logging,
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


async def test_default_workers_overlap_keys_but_never_share_one() -> None:
    """Eight workers by default: ten blocked keys keep eight in flight; a key re-added while in flight
    waits for its own reconcile to finish."""
    active: set[str] = set()
    overlap = False
    release = asyncio.Event()

    async def reconcile(req: Request) -> None:
        nonlocal overlap
        overlap |= req.name in active
        active.add(req.name)
        await release.wait()
        active.discard(req.name)

    ctrl, source, metrics = make(reconcile)
    assert ctrl.max_concurrent_reconciles == 8
    assert metrics.value("controller_runtime_max_concurrent_reconciles", {"controller": "t"}) == 8
    await ctrl.start()
    for i in range(10):
        await source.put(f"k{i}")
    await eventually(lambda: len(active) == 8 and len(ctrl.queue) == 2)
    await source.put("k0")
    await eventually(lambda: source.empty())
    release.set()
    await eventually(lambda: idle(ctrl))
    assert not overlap
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


async def _fail_once_with(
    err: Exception, caplog: pytest.LogCaptureFixture
) -> tuple[Controller, RuntimeMetrics]:
    calls: list[str] = []

    async def reconcile(req: Request) -> None:
        calls.append(req.name)
        raise err

    ctrl, source, m = make(reconcile, clock=FakeClock())
    ctrl.group_kind = ("test.pyop.io", "Widget")  # what the builder sets from for_(Widget)
    await ctrl.start()
    await source.put("w")
    await eventually(lambda: calls == ["w"] and ctrl.queue.waiting() == 1)
    await ctrl.stop()
    return ctrl, m


def _errors(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name == "pyscaffold_op.runtime.controller" and r.levelno >= logging.ERROR
    ]


async def test_an_unexpected_exception_logs_one_structured_line_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    _ctrl, m = await _fail_once_with(RuntimeError("boom"), caplog)
    [record] = _errors(caplog)
    assert record.getMessage() == "Reconciler error"
    fields = {k: getattr(record, k) for k in ("controller", "controllerGroup", "controllerKind", "namespace")}
    assert fields == {
        "controller": "t",
        "controllerGroup": "test.pyop.io",
        "controllerKind": "Widget",
        "namespace": "ns",
    }
    assert (record.name_, record.error, record.errorType) == ("w", "boom", "RuntimeError")  # type: ignore[attr-defined]
    assert record.Widget == {"name": "w", "namespace": "ns"}  # type: ignore[attr-defined]
    assert len(record.reconcileID) == 12  # type: ignore[attr-defined]
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError
    assert m.value("pyop_reconcile_errors_by_reason_total", {"controller": "t", "reason": "Error"}) == 1


@pytest.mark.parametrize(
    "err", [Conflict("the object has been modified"), AlreadyExists("exists"), NotFound("gone")]
)
async def test_api_status_errors_log_one_line_without_traceback_and_count_by_reason(
    err: ApiError, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    _ctrl, m = await _fail_once_with(err, caplog)
    [record] = _errors(caplog)
    assert record.getMessage() == "Reconciler error" and record.exc_info is None
    assert record.errorType == type(err).__name__  # type: ignore[attr-defined]
    assert m.value("pyop_reconcile_errors_by_reason_total", {"controller": "t", "reason": err.reason}) == 1
    assert m.value("controller_runtime_reconcile_errors_total", {"controller": "t"}) == 1


async def test_at_debug_level_api_errors_keep_their_traceback(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="pyscaffold_op.runtime.controller")
    await _fail_once_with(Conflict("the object has been modified"), caplog)
    [record] = _errors(caplog)
    assert record.exc_info is not None and record.exc_info[0] is Conflict


async def test_the_json_and_text_lines(caplog: pytest.LogCaptureFixture) -> None:
    stream = io.StringIO()
    handler = setup_logging("info", "json", stream=stream)
    try:
        await _fail_once_with(Conflict("the object has been modified"), caplog)
        setup_logging("info", "text", stream=stream)
        await _fail_once_with(Conflict("again"), caplog)
    finally:
        logging.getLogger().removeHandler(handler)
        for h in list(logging.getLogger().handlers):
            if getattr(h, "_pyop", False):
                logging.getLogger().removeHandler(h)
    json_line, text_line = [line for line in stream.getvalue().splitlines() if "Reconciler error" in line]
    record = json.loads(json_line)
    assert {k: record[k] for k in ("level", "msg", "controller", "controllerKind", "name", "error")} == {
        "level": "error",
        "msg": "Reconciler error",
        "controller": "t",
        "controllerKind": "Widget",
        "name": "w",
        "error": "409 Conflict: the object has been modified",
    }
    assert "stacktrace" not in record
    assert (
        " ERROR pyscaffold_op.runtime.controller Reconciler error controller=t controllerGroup=test.pyop.io"
        in text_line
    )
    assert "error=409 Conflict: again" in text_line and "Traceback" not in stream.getvalue()


async def test_a_reconciler_that_never_awaits_leaves_the_loop_turns() -> None:
    """Workers yield between queued items, so other tasks (informers, probes) run during a backlog."""
    order: list[str] = []

    async def reconcile(req: Request) -> None:
        order.append("r")  # no await at all

    ctrl = Controller("busy", reconcile, max_concurrent_reconciles=1)
    for i in range(20):
        ctrl.queue.add(Request("ns", f"o{i}"))

    async def other_task() -> None:
        while len(order) < 20:
            order.append("t")
            await asyncio.sleep(0)

    ticker = asyncio.create_task(other_task())
    await ctrl.start()
    await eventually(lambda: order.count("r") == 20)
    await ticker
    assert "t" in order[order.index("r") : len(order) - order[::-1].index("r")]  # interleaved
    await ctrl.stop()


async def test_depth_and_active_workers_are_read_when_scraped() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def reconcile(req: Request) -> None:
        started.set()
        await release.wait()

    ctrl, _source, metrics = make(reconcile, max_concurrent_reconciles=2)
    for name in ("a", "b", "c"):
        ctrl.queue.add(Request("ns", name))
    labels = {"name": "t", "controller": "t", "priority": ""}
    assert metrics.value("workqueue_depth", labels) == 3
    await ctrl.start()
    await started.wait()
    await eventually(lambda: len(ctrl.queue.processing()) == 2)
    assert metrics.value("workqueue_depth", labels) == 1
    assert metrics.value("controller_runtime_active_workers", {"controller": "t"}) == 2
    release.set()
    await eventually(lambda: idle(ctrl))
    assert metrics.value("controller_runtime_active_workers", {"controller": "t"}) == 0
    assert metrics.value("workqueue_depth", labels) == 0
    await ctrl.stop()


async def test_at_debug_level_each_reconcile_says_how_it_ended(caplog: pytest.LogCaptureFixture) -> None:
    """controller-runtime's words (its V(5) lines), with the reconcile's keys: `make run
    ARGS=--zap-log-level=debug` shows every reconcile, not only the failed ones."""
    caplog.set_level(logging.DEBUG, logger="pyscaffold_op.runtime.controller")
    seen: list[str] = []

    async def reconcile(req: Request) -> Result | None:
        seen.append(req.name)
        if req.name == "after" and seen.count("after") == 1:
            return Result(requeue_after=90)
        if req.name == "again" and seen.count("again") == 1:
            return Result(requeue=True)
        return None

    clock = FakeClock()
    ctrl, source, _m = make(reconcile, clock=clock)
    await ctrl.start()
    for name in ("ok", "after", "again"):
        await source.put(name)
    await eventually(lambda: len(seen) == 3 and ctrl.queue.waiting() == 2)
    clock.advance(1)  # past the rate limiter's first delay (0.01 s), short of the 90 s one
    await eventually(lambda: sorted(seen) == ["after", "again", "again", "ok"])
    await ctrl.stop()
    done = {
        (r.getMessage(), getattr(r, "name_", None))
        for r in caplog.records
        if r.name == "pyscaffold_op.runtime.controller" and r.levelno == logging.DEBUG
    }
    assert ("Reconcile done, requeueing after 1m30s", "after") in done
    assert ("Reconcile done, requeueing", "again") in done
    assert ("Reconcile successful", "ok") in done
    assert ("Reconcile successful", "again") in done
