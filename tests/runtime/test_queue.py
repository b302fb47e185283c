"""Work-queue semantics, as client-go's workqueue tests check them."""

from __future__ import annotations

import asyncio

import pytest

from pyscaffold_op.runtime.clock import FakeClock
from pyscaffold_op.runtime.controller.queue import DelayingQueue, Queue, RateLimitingQueue, ShutDown
from pyscaffold_op.runtime.controller.ratelimiter import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    default_controller_rate_limiter,
)
from pyscaffold_op.testing import eventually


async def test_fifo_and_dedupe_while_waiting() -> None:
    q = Queue()
    for item in ["a", "b", "a", "c", "b"]:
        q.add(item)
    assert len(q) == 3
    got = [(await q.get())[0] for _ in range(3)]
    assert got == ["a", "b", "c"]


async def test_add_while_processing_is_deferred_until_done() -> None:
    q = Queue()
    q.add("a")
    item, _ = await q.get()
    q.add("a")  # dirty, but not handed out: the worker still holds it
    assert len(q) == 0
    assert q.get_nowait() is None
    q.done(item)
    assert len(q) == 1
    assert (await q.get())[0] == "a"


async def test_done_without_readd_does_not_requeue() -> None:
    q = Queue()
    q.add("a")
    item, _ = await q.get()
    q.done(item)
    assert len(q) == 0


async def test_never_two_workers_on_one_key_and_many_adds_give_one_more_run() -> None:
    q = Queue()
    running: set[str] = set()
    runs: list[str] = []
    overlap = False
    started = [asyncio.Event(), asyncio.Event()]
    release = asyncio.Event()

    async def worker() -> None:
        nonlocal overlap
        while True:
            item, shutdown = await q.get()
            if shutdown:
                return
            if item in running:
                overlap = True
            running.add(item)
            runs.append(item)
            started[min(len(runs), 2) - 1].set()
            await release.wait()  # the first run lasts until the whole storm has been added
            running.discard(item)
            q.done(item)

    workers = [asyncio.create_task(worker()) for _ in range(8)]
    q.add("k")
    await started[0].wait()
    for _ in range(1000):  # a storm of events for the key being processed, other workers idle
        q.add("k")
        await asyncio.sleep(0)  # a yield (not a wait): let idle workers try to take the key
    assert runs == ["k"] and len(q) == 0
    release.set()
    await started[1].wait()  # done() put the key back once
    q.shut_down()
    await asyncio.gather(*workers)
    assert not overlap
    assert runs == ["k", "k"]  # exactly one more reconcile


async def test_distinct_keys_run_concurrently() -> None:
    q = Queue()
    all_in = asyncio.Event()
    active = 0

    async def worker() -> None:
        nonlocal active
        while True:
            item, shutdown = await q.get()
            if shutdown:
                return
            active += 1
            if active == 4:
                all_in.set()
            await all_in.wait()  # only ends if all four keys are processed at the same time
            q.done(item)

    for i in range(4):
        q.add(i)
    workers = [asyncio.create_task(worker()) for _ in range(4)]
    await asyncio.wait_for(all_in.wait(), 5)
    q.shut_down()
    await asyncio.gather(*workers)


async def _until_waiting(q: Queue, getters: int) -> None:
    """Wait until `getters` tasks block in q.get() (the queue's own record of waiting getters)."""
    await eventually(lambda: len(q._waiters) >= getters, interval=0)


async def test_shutdown_wakes_waiting_getters() -> None:
    q = Queue()
    getter = asyncio.create_task(q.get())
    await _until_waiting(q, 1)
    q.shut_down()
    assert await asyncio.wait_for(getter, 1) == (None, True)
    q.add("x")  # ignored after shutdown
    assert len(q) == 0
    with pytest.raises(ShutDown):
        q.get_nowait()


async def test_shutdown_still_hands_out_queued_items_then_reports_shutdown() -> None:
    q = Queue()
    q.add("a")
    q.shut_down()
    assert await q.get() == ("a", False)
    assert await q.get() == (None, True)


async def test_shut_down_with_drain_waits_for_processing() -> None:
    q = Queue()
    q.add("a")
    item, _ = await q.get()
    drain = asyncio.create_task(q.shut_down_with_drain(timeout=5))
    await asyncio.sleep(0)  # a yield: the drain starts waiting
    assert q.shutting_down() and not drain.done()
    q.done(item)
    assert await drain is True


async def test_shut_down_with_drain_times_out() -> None:
    q = Queue()
    q.add("a")
    await q.get()
    assert await q.shut_down_with_drain(timeout=0.01) is False  # the timeout is what is tested


async def test_cancelled_getter_passes_wakeup_on() -> None:
    q = Queue()
    g1 = asyncio.create_task(q.get())
    g2 = asyncio.create_task(q.get())
    await _until_waiting(q, 2)
    g1.cancel()
    q.add("a")
    assert await asyncio.wait_for(g2, 1) == ("a", False)


async def test_add_after_delays_and_orders_by_ready_time() -> None:
    clock = FakeClock()
    q = DelayingQueue(clock=clock)
    q.add_after("late", 0.12)
    q.add_after("early", 0.04)
    q.add_after("now", 0)
    assert q.get_nowait() == "now"
    clock.advance(0.039)
    assert q.get_nowait() is None and q.waiting() == 2
    clock.advance(0.002)  # 41 ms
    assert q.get_nowait() == "early"
    clock.advance(0.078)  # 119 ms
    assert q.get_nowait() is None
    clock.advance(0.002)
    assert q.get_nowait() == "late" and q.waiting() == 0 and clock.pending() == 0


async def test_a_getter_wakes_when_the_delay_passes() -> None:
    clock = FakeClock()
    q = DelayingQueue(clock=clock)
    getter = asyncio.create_task(q.get())
    q.add_after("k", 1.0)
    await _until_waiting(q, 1)
    clock.advance(1.0)
    assert await asyncio.wait_for(getter, 5) == ("k", False)


async def test_add_after_keeps_earlier_ready_time_for_waiting_key() -> None:
    clock = FakeClock()
    q = DelayingQueue(clock=clock)
    q.add_after("k", 5.0)
    q.add_after("k", 0.03)  # earlier wins
    q.add_after("k", 10.0)  # later is ignored
    assert q.waiting() == 1
    clock.advance(0.03)
    assert q.get_nowait() == "k"
    q.done("k")
    assert q.waiting() == 0
    clock.advance(10.0)
    assert len(q) == 0  # the superseded entries did not fire again


async def test_add_after_dedupes_with_queued_key() -> None:
    clock = FakeClock()
    q = DelayingQueue(clock=clock)
    q.add("k")
    q.add_after("k", 0.01)
    clock.advance(0.01)
    assert len(q) == 1


async def test_add_after_ignored_after_shutdown() -> None:
    clock = FakeClock()
    q = DelayingQueue(clock=clock)
    q.shut_down()
    q.add_after("k", 0.01)
    assert clock.pending() == 0
    clock.advance(0.01)
    assert len(q) == 0


async def test_rate_limited_adds_back_off_per_item_and_forget_resets() -> None:
    clock = FakeClock()
    q = RateLimitingQueue(ItemExponentialFailureRateLimiter(0.01, 1.0), clock=clock)
    q.add_rate_limited("k")  # 10 ms
    q.add_rate_limited("k")  # 20 ms (still waiting: earliest wins)
    assert q.num_requeues("k") == 2
    clock.advance(0.0099)
    assert q.get_nowait() is None
    clock.advance(0.0002)
    assert q.get_nowait() == "k"
    q.done("k")
    q.add_rate_limited("k")  # third failure: 40 ms
    clock.advance(0.039)
    assert q.get_nowait() is None
    clock.advance(0.002)
    assert q.get_nowait() == "k"
    q.forget("k")
    assert q.num_requeues("k") == 0


def test_item_exponential_backoff_5ms_to_1000s() -> None:
    rl = ItemExponentialFailureRateLimiter()
    delays = [rl.when("a") for _ in range(20)]
    assert delays[:4] == [0.005, 0.01, 0.02, 0.04]
    assert delays[-1] == 1000.0
    assert max(rl.when("a") for _ in range(200)) == 1000.0  # no overflow
    assert rl.when("b") == 0.005  # per item
    rl.forget("a")
    assert rl.when("a") == 0.005


def test_bucket_limiter_burst_then_qps() -> None:
    clock = FakeClock()
    rl = BucketRateLimiter(qps=10, burst=100, clock=clock)
    assert all(rl.when(i) == 0 for i in range(100))
    assert rl.when("x") == pytest.approx(0.1)
    assert rl.when("y") == pytest.approx(0.2)
    clock.advance(0.1)  # one token back, two are reserved already
    assert rl.when("z") == pytest.approx(0.2)
    clock.advance(10.0)  # refilled up to the burst, no more
    assert rl.when("w") == 0.0


def test_default_limiter_is_max_of_item_and_bucket() -> None:
    rl = default_controller_rate_limiter(FakeClock())
    assert rl.when("a") == 0.005
    assert rl.when("a") == 0.01
    for i in range(200):
        rl.when(f"x{i}")  # drain the bucket
    assert rl.when("b") > 0.005  # the bucket now dominates
    assert rl.num_requeues("a") == 2
    rl.forget("a")
    assert rl.num_requeues("a") == 0


def test_default_limiter_delays_on_the_fake_clock() -> None:
    # what the controller test used to measure with wall-clock gaps: 5 ms doubling per failure
    clock = FakeClock()
    rl = default_controller_rate_limiter(clock)
    assert [rl.when("k") for _ in range(8)] == [0.005 * 2**i for i in range(8)]
    clock.advance(3600)
    assert rl.when("k") == 0.005 * 2**8  # per-item history is kept until forget, whatever the time


def test_fast_slow_and_max_of() -> None:
    fs = ItemFastSlowRateLimiter(0.001, 1.0, 2)
    assert [fs.when("a") for _ in range(3)] == [0.001, 0.001, 1.0]
    m = MaxOfRateLimiter(fs, ItemExponentialFailureRateLimiter(0.5, 10))
    assert m.when("b") == 0.5


class _Recorder:
    def __init__(self) -> None:
        self.adds = self.retries = 0
        self.depths: list[int] = []
        self.queued: list[float] = []
        self.work: list[float] = []

    def on_add(self) -> None:
        self.adds += 1

    def on_get(self, s: float) -> None:
        self.queued.append(s)

    def on_done(self, s: float) -> None:
        self.work.append(s)

    def on_retry(self) -> None:
        self.retries += 1

    def set_depth(self, d: int) -> None:
        self.depths.append(d)


async def test_metrics_hooks() -> None:
    m = _Recorder()
    clock = FakeClock()
    q = RateLimitingQueue(ItemExponentialFailureRateLimiter(0.001, 1), metrics=m, clock=clock)
    q.add("a")
    q.add("a")
    clock.advance(0.5)
    item, _ = await q.get()
    q.add("b")
    clock.advance(0.25)
    assert q.get_nowait() == "b"
    clock.advance(0.25)
    assert q.unfinished_work_seconds() == 0.75 and q.longest_running_processor_seconds() == 0.5
    q.done(item)
    q.done("b")
    q.add_rate_limited("a")  # 1 ms
    clock.advance(0.25)
    await q.get()
    assert m.adds == 3 and m.retries == 1
    # queued time counts from when the delay let the item in (1 ms after the failure)
    assert m.queued == pytest.approx([0.5, 0.25, 0.249]) and m.work == [0.5, 0.25]
    assert m.depths[-1] == 0
