"""Per-object daemons and timers (builder.daemon / builder.timer) against the emulator: kopf's
semantics point by point (docs/runtime.md, "Daemons and timers")."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import threading
from datetime import UTC, datetime
from typing import Any

import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.coordination_v1 import Lease
from pyscaffold_op.runtime import (
    ABSENT,
    Client,
    DaemonContext,
    LeaderElectionLost,
    NotFound,
    Request,
    Result,
    TerminalError,
)
from pyscaffold_op.runtime.controller.daemon import (
    DELETED,
    FILTERED_OUT,
    LEADERSHIP_LOST,
    SHUTDOWN,
    DaemonSpec,
)
from pyscaffold_op.runtime.log import setup_logging
from pyscaffold_op.testing import FakeClock, eventually

from .conftest import make_manager
from .widgets import Widget, widget


class Log:
    """What daemons and timers did, in order."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, ...]] = []

    def add(self, *what: Any) -> None:
        self.lines.append(tuple(str(w) for w in what))

    def count(self, *prefix: str) -> int:
        return sum(1 for line in self.lines if line[: len(prefix)] == prefix)


async def test_a_daemon_runs_per_object_sees_it_and_stops_when_it_is_deleted(
    env: Environment, api: Client
) -> None:
    seen = Log()

    async def watch_widget(ctx: DaemonContext) -> None:
        seen.add("start", ctx.name, ctx.object.spec.size, ctx.attempt)
        await ctx.stopped.wait()
        seen.add("stop", ctx.name, ctx.stopped.reason, ctx.object is None)

    mgr = make_manager(env)
    await api.create(widget("before", size=2))  # exists when the manager starts: resumed
    ctrl = mgr.builder().for_(Widget).daemon(watch_widget).complete()
    async with mgr.running():
        await eventually(lambda: seen.count("start", "before") == 1)
        await api.create(widget("after", size=3))
        await eventually(lambda: seen.count("start", "after") == 1)
        assert ("start", "before", "2", "0") in seen.lines and ("start", "after", "3", "0") in seen.lines
        await api.patch(Widget, "after", {"spec": {"size": 4}}, namespace="default")
        await api.delete(Widget, "after", namespace="default")
        await eventually(lambda: seen.count("stop", "after") == 1)
        assert ("stop", "after", DELETED, "True") in seen.lines
        assert seen.count("start", "after") == 1  # an update does not restart it
        await eventually(lambda: ctrl.daemons.running(Request("default", "after")) == [])
        assert ctrl.daemons.running(Request("default", "before")) == ["watch_widget"]
    # the manager's stop stops the rest
    assert ("stop", "before", SHUTDOWN, "False") in seen.lines


async def test_a_failing_daemon_restarts_with_backoff_and_a_terminal_error_ends_it(
    env: Environment, api: Client
) -> None:
    clock = FakeClock()
    seen = Log()

    async def flaky(ctx: DaemonContext) -> None:
        seen.add("call", ctx.attempt)
        if ctx.attempt < 2:
            raise RuntimeError(f"boom {ctx.attempt}")
        if ctx.attempt == 2:
            raise TerminalError("enough")

    mgr = make_manager(env, clock=clock)
    mgr.builder().for_(Widget).daemon(flaky, backoff=10).complete()
    async with mgr.running():
        await api.create(widget("w"))
        await eventually(lambda: seen.count("call") == 1)
        await clock.wait_for_timers()
        clock.advance(9)
        await asyncio.sleep(0.05)
        assert seen.count("call") == 1  # the backoff is 10 s, on the manager's clock
        clock.advance(1)
        await eventually(lambda: seen.count("call") == 2)
        await clock.wait_for_timers()
        clock.advance(10)
        await eventually(lambda: seen.count("call") == 3)
        await api.patch(Widget, "w", {"spec": {"size": 5}}, namespace="default")
        clock.advance(100)
        await asyncio.sleep(0.1)
        assert seen.lines == [("call", "0"), ("call", "1"), ("call", "2")]  # not restarted after terminal
    m = mgr.metrics
    assert (
        m.value("pyop_daemon_runs_total", {"controller": "widget", "daemon": "flaky", "result": "error"}) == 2
    )
    assert (
        m.value("pyop_daemon_runs_total", {"controller": "widget", "daemon": "flaky", "result": "terminal"})
        == 1
    )


async def test_a_daemon_that_returns_is_done_unless_it_asks_to_run_again(
    env: Environment, api: Client
) -> None:
    clock = FakeClock()
    seen = Log()

    async def once(ctx: DaemonContext) -> None:
        seen.add("once")

    async def again(ctx: DaemonContext) -> Result:
        seen.add("again")
        return Result(requeue_after=30)

    mgr = make_manager(env, clock=clock)
    mgr.builder().for_(Widget).daemon(once).daemon(again).complete()
    async with mgr.running():
        await api.create(widget("w"))
        await eventually(lambda: seen.count("once") == 1 and seen.count("again") == 1)
        await api.patch(Widget, "w", {"spec": {"size": 2}}, namespace="default")
        await clock.wait_for_timers()
        clock.advance(30)
        await eventually(lambda: seen.count("again") == 2)
        assert seen.count("once") == 1
    assert (
        mgr.metrics.value(
            "pyop_daemon_runs_total", {"controller": "widget", "daemon": "again", "result": "success"}
        )
        == 2
    )


async def test_a_daemon_ignoring_its_stop_is_cancelled_after_the_grace_period(
    env: Environment, api: Client
) -> None:
    clock = FakeClock()
    seen = Log()

    async def stubborn(ctx: DaemonContext) -> None:
        try:
            await asyncio.Event().wait()  # never looks at ctx.stopped
        except asyncio.CancelledError:
            seen.add("cancelled", ctx.stopped.reason, clock.monotonic())
            raise

    mgr = make_manager(env, clock=clock)
    ctrl = mgr.builder().for_(Widget).daemon(stubborn, grace_period=3).complete()
    async with mgr.running():
        await api.create(widget("w"))
        await eventually(lambda: ctrl.daemons.running(Request("default", "w")) == ["stubborn"])
        start = clock.monotonic()
        await api.delete(Widget, "w", namespace="default")
        await clock.wait_for_timers()
        clock.advance(2.9)
        await asyncio.sleep(0.05)
        assert seen.lines == []
        clock.advance(0.1)
        await eventually(lambda: seen.count("cancelled") == 1)
        assert seen.lines == [("cancelled", DELETED, str(start + 3))]


async def test_a_daemon_that_never_ends_is_abandoned_with_a_warning(
    env: Environment, api: Client, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    release = asyncio.Event()

    async def unkillable(ctx: DaemonContext) -> None:
        while not release.is_set():
            try:
                await release.wait()
            except asyncio.CancelledError:
                continue  # swallows every cancellation

    mgr = make_manager(env, clock=clock)
    ctrl = mgr.builder().for_(Widget).daemon(unkillable, grace_period=1, cancellation_timeout=2).complete()
    try:
        async with mgr.running():
            await api.create(widget("w"))
            await eventually(lambda: ctrl.daemons.running(Request("default", "w")) == ["unkillable"])
            await api.delete(Widget, "w", namespace="default")
            await clock.wait_for_timers()
            clock.advance(1)
            await clock.wait_for_timers()
            clock.advance(2)
            await eventually(lambda: ctrl.daemons.running(Request("default", "w")) == [])
            assert (
                "daemon unkillable did not stop in time (stopped: object deleted); abandoned" in caplog.text
            )
    finally:
        release.set()


async def test_a_label_filter_starts_and_stops_the_daemon_as_the_object_changes(
    env: Environment, api: Client
) -> None:
    seen = Log()

    async def picky(ctx: DaemonContext) -> None:
        seen.add("start", ctx.name)
        await ctx.stopped.wait()
        seen.add("stop", ctx.name, ctx.stopped.reason)

    mgr = make_manager(env)
    mgr.builder().for_(Widget).daemon(picky, labels={"watch": "yes", "skip": ABSENT}).complete()
    async with mgr.running():
        await api.create(widget("plain"))
        await api.create(widget("marked", watch="yes"))
        await eventually(lambda: seen.count("start", "marked") == 1)
        await api.patch(Widget, "marked", {"metadata": {"labels": {"skip": "1"}}}, namespace="default")
        await eventually(lambda: seen.count("stop", "marked") == 1)
        assert ("stop", "marked", FILTERED_OUT) in seen.lines
        await api.patch(Widget, "marked", {"metadata": {"labels": {"skip": None}}}, namespace="default")
        await eventually(lambda: seen.count("start", "marked") == 2)
        assert seen.count("start", "plain") == 0


async def test_daemons_run_on_the_leader_only_and_stop_when_leadership_is_lost(
    env: Environment, api: Client
) -> None:
    seen = Log()

    async def leader_only(ctx: DaemonContext) -> None:
        seen.add("start", ctx.name)
        await ctx.stopped.wait()
        seen.add("stop", ctx.name, ctx.stopped.reason)

    await api.create(widget("w"))
    await api.create(
        Lease.model_validate(
            {
                "metadata": {"name": "daemons-lease", "namespace": "default"},
                "spec": {
                    "holderIdentity": "someone-else",
                    "leaseDurationSeconds": 1,
                    "renewTime": datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z"),
                },
            }
        )
    )
    mgr = make_manager(
        env,
        leader_election=True,
        leader_election_id="daemons-lease",
        lease_duration=1.0,
        renew_deadline=0.6,
        retry_period=0.1,
    )
    mgr.builder().for_(Widget).daemon(leader_only).complete()
    task = asyncio.create_task(mgr.start(install_signal_handlers=False))
    await asyncio.sleep(0.3)
    assert seen.lines == []  # another holder's lease has not expired: not leading, no daemon
    await asyncio.wait_for(mgr.elected.wait(), 10)
    await eventually(lambda: seen.count("start", "w") == 1)
    lease = await api.get(Lease, "daemons-lease", namespace="default")
    lease.spec.holder_identity = "thief"
    lease.spec.renew_time = datetime.now(UTC)
    await api.update(lease)
    with pytest.raises(LeaderElectionLost):
        await asyncio.wait_for(task, 10)
    assert ("stop", "w", LEADERSHIP_LOST) in seen.lines


async def test_a_timer_runs_on_its_interval_and_never_overlaps_itself(env: Environment, api: Client) -> None:
    clock = FakeClock()
    calls: list[float] = []

    async def tick(ctx: DaemonContext) -> None:
        calls.append(clock.monotonic())

    mgr = make_manager(env, clock=clock)
    mgr.builder().for_(Widget).timer(tick, interval=10, initial_delay=5).complete()
    async with mgr.running():
        await api.create(widget("w"))
        await clock.wait_for_timers()
        t0 = clock.monotonic()
        clock.advance(5)
        await eventually(lambda: len(calls) == 1)
        for n in range(2, 5):
            await clock.wait_for_timers()
            clock.advance(10)
            await eventually(lambda n=n: len(calls) == n)
        assert calls == [t0 + 5, t0 + 15, t0 + 25, t0 + 35]


async def test_a_sharp_timer_keeps_its_grid_when_a_call_takes_time(env: Environment, api: Client) -> None:
    clock = FakeClock()
    calls: list[float] = []

    async def slow(ctx: DaemonContext) -> None:
        calls.append(clock.monotonic())
        clock.advance(3)  # the call "takes" 3 s

    mgr = make_manager(env, clock=clock)
    mgr.builder().for_(Widget).timer(slow, interval=10, sharp=True).complete()
    async with mgr.running():
        await api.create(widget("w"))
        await eventually(lambda: len(calls) == 1)
        await clock.wait_for_timers()
        clock.advance(7)  # 10 s after the first call began, not 10 s after it ended
        await eventually(lambda: len(calls) == 2)
        assert calls[1] - calls[0] == 10


async def test_an_idle_timer_waits_for_the_object_to_be_quiet(env: Environment, api: Client) -> None:
    clock = FakeClock()
    calls: list[tuple[float, int]] = []

    async def quiet(ctx: DaemonContext) -> None:
        calls.append((clock.monotonic(), ctx.object.spec.size))

    mgr = make_manager(env, clock=clock)
    mgr.builder().for_(Widget).timer(quiet, idle=5, interval=2).complete()
    async with mgr.running():
        await api.create(widget("w", size=1))
        await clock.wait_for_timers()
        t0 = clock.monotonic()
        clock.advance(3)
        await api.patch(Widget, "w", {"spec": {"size": 2}}, namespace="default")  # a change at t0+3
        await eventually(lambda: _size_seen(mgr, 2))
        await clock.wait_for_timers()
        clock.advance(4)  # t0+7: only 4 s since the change
        await asyncio.sleep(0.05)
        assert calls == []
        await clock.wait_for_timers()
        clock.advance(1)  # t0+8: quiet for 5 s
        await eventually(lambda: len(calls) == 1)
        await clock.wait_for_timers()
        clock.advance(2)  # interval while quiet
        await eventually(lambda: len(calls) == 2)
        assert calls == [(t0 + 8, 2), (t0 + 10, 2)]


def _size_seen(mgr: Any, size: int) -> bool:
    obj = mgr.cache.get_informer(Widget).store.get("default/w")
    return obj is not None and obj.spec.size == size


async def test_a_plain_def_daemon_runs_in_its_own_thread_and_checks_stopped(
    env: Environment, api: Client
) -> None:
    seen = Log()
    main = threading.get_ident()

    def sync_watch(ctx: DaemonContext) -> None:
        seen.add("start", threading.get_ident() != main)
        while not ctx.stopped:
            ctx.stopped.wait_blocking(0.05)
        seen.add("stop", ctx.stopped.reason)

    mgr = make_manager(env)
    mgr.builder().for_(Widget).daemon(sync_watch).complete()
    async with mgr.running():
        await api.create(widget("w"))
        await eventually(lambda: ("start", "True") in seen.lines)
        await api.delete(Widget, "w", namespace="default")
        await eventually(lambda: ("stop", DELETED) in seen.lines)


async def test_a_daemon_finalizer_holds_the_object_until_the_daemon_ended(
    env: Environment, api: Client
) -> None:
    seen = Log()
    finalizer = "test.pyop.io/daemons"

    async def careful(ctx: DaemonContext) -> None:
        await ctx.stopped.wait()
        assert ctx.object is not None  # still there while the daemon winds down
        seen.add("cleaned up", ctx.object.metadata.deletion_timestamp is not None)

    mgr = make_manager(env)
    mgr.builder().for_(Widget).daemon(careful, finalizer=finalizer).complete()
    async with mgr.running():
        await api.create(widget("w"))

        async def finalized() -> bool:
            return finalizer in ((await api.get(Widget, "w", namespace="default")).metadata.finalizers or [])

        await eventually(finalized)
        await api.delete(Widget, "w", namespace="default")

        async def gone() -> bool:
            try:
                await api.get(Widget, "w", namespace="default")
            except NotFound:
                return True
            return False

        await eventually(gone)
        assert seen.lines == [("cleaned up", "True")]


async def test_daemon_logs_carry_the_reconcile_keys_and_the_daemon(env: Environment, api: Client) -> None:
    async def chatty(ctx: DaemonContext) -> None:
        logging.getLogger("user.daemon").info("hello from %s", ctx.name)
        raise RuntimeError("broken")

    out = io.StringIO()
    handler = setup_logging("info", "json", out)  # the lines as a manager writes them
    try:
        mgr = make_manager(env)
        mgr.builder().for_(Widget).daemon(chatty, backoff=60).complete()
        async with mgr.running():
            await api.create(widget("w"))
            await eventually(lambda: '"msg": "daemon error"' in out.getvalue())
    finally:
        logging.getLogger().removeHandler(handler)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    hello = next(x for x in lines if x["msg"] == "hello from w")
    failed = next(x for x in lines if x["msg"] == "daemon error")
    for line in (hello, failed):
        assert (line["controller"], line["daemon"], line["namespace"], line["name"]) == (
            "widget",
            "chatty",
            "default",
            "w",
        )
        assert line["Widget"] == {"name": "w", "namespace": "default"} and line["reconcileID"]
    assert hello["reconcileID"] == failed["reconcileID"]  # one run, one id
    assert (failed["error"], failed["errorType"], failed["logger"]) == (
        "broken",
        "RuntimeError",
        "pyscaffold_op.runtime.daemon",
    )
    running = {"controller": "widget", "daemon": "chatty"}
    assert mgr.metrics.value("pyop_daemons_running", running) == 0  # stopped with the manager


def test_daemon_options_are_checked_when_declared() -> None:
    async def fn(ctx: DaemonContext) -> None: ...

    with pytest.raises(ValueError, match="interval, idle and sharp are a timer's"):
        DaemonSpec(fn=fn, name="fn", interval=5)
    with pytest.raises(ValueError, match="sharp=True needs an interval"):
        DaemonSpec(fn=fn, name="fn", timer=True, idle=5, sharp=True)
    with pytest.raises(ValueError, match="grace_period must not be negative"):
        DaemonSpec(fn=fn, name="fn", grace_period=-1)


async def test_a_managers_stop_is_bounded_in_real_time_even_on_a_fake_clock(
    env: Environment, api: Client
) -> None:
    clock = FakeClock()  # nobody moves it while the manager stops
    seen = Log()

    async def deaf(ctx: DaemonContext) -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen.add("cancelled", ctx.stopped.reason)
            raise

    mgr = make_manager(env, clock=clock)
    ctrl = mgr.builder().for_(Widget).daemon(deaf, grace_period=0.2, cancellation_timeout=0.2).complete()
    async with mgr.running():
        await api.create(widget("w"))
        await eventually(lambda: ctrl.daemons.running(Request("default", "w")) == ["deaf"])
    assert seen.lines == [("cancelled", SHUTDOWN)]  # within its grace period, in real time
