"""`Daemons`: the daemons and timers of one controller at work (the types and their semantics are in
`daemon.py`): per object, a task per daemon and timer, started, stopped and restarted as the object's
events, its filter and the controller say; the finalizers of `daemon(finalizer=...)`."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from pyscaffold_op.runtime.clock import Clock
from pyscaffold_op.runtime.controller.daemon import (
    DELETED,
    FILTERED_OUT,
    DaemonContext,
    DaemonSpec,
    Stopped,
)
from pyscaffold_op.runtime.controller.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent, raw_of
from pyscaffold_op.runtime.controller.handler import Enqueuer, EventHandler
from pyscaffold_op.runtime.controller.ratelimiter import ItemExponentialFailureRateLimiter
from pyscaffold_op.runtime.controller.request import Request, Result, TerminalError
from pyscaffold_op.runtime.log import reconcile_context, reconcile_fields
from pyscaffold_op.runtime.objects import objmeta
from pyscaffold_op.runtime.objects.rawobj import RawObject
from pyscaffold_op.runtime.panics import own_cancellation, safe_str

log = logging.getLogger("pyscaffold_op.runtime.daemon")

_BACKOFF_BASE, _BACKOFF_MAX = 1.0, 300.0  # a daemon's default backoff: 1 s doubling to 5 min


class _Meta(msgspec.Struct):
    name: str = ""
    namespace: str = ""
    resourceVersion: str = ""
    deletionTimestamp: str | None = None
    finalizers: list[str] | None = None


class _Envelope(msgspec.Struct):
    metadata: _Meta | None = None


_meta_decoder = msgspec.json.Decoder(_Envelope)


def _meta(obj: Any) -> _Meta:
    """The metadata a daemon set needs, from the JSON of a RawObject or from a typed object."""
    if type(obj) is RawObject:
        return _meta_decoder.decode(obj.raw).metadata or _Meta()
    deleting = objmeta.deletion_timestamp(obj)
    return _Meta(
        objmeta.name(obj),
        objmeta.namespace(obj),
        objmeta.resource_version(obj),
        str(deleting) if deleting else None,
        list(objmeta.finalizers(obj) or []),
    )


@dataclass
class _Runner:
    spec: DaemonSpec
    stopped: Stopped
    task: asyncio.Task[None] | None = None
    stopping: asyncio.Task[None] | None = None


@dataclass
class _Object:
    """What the daemon set knows of one object."""

    request: Request
    latest: Any
    meta: _Meta
    changed_at: float
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    runners: dict[str, _Runner] = field(default_factory=dict)
    finished: set[str] = field(default_factory=set)  # returned or failed terminally: not restarted
    gone: bool = False
    finalizer_busy: bool = False

    def touched(self, obj: Any, meta: _Meta, now: float) -> None:
        self.latest, self.meta, self.changed_at = obj, meta, now
        self.changed.set()  # wakes idle-only timers waiting for a change
        self.changed = asyncio.Event()

    @property
    def deleting(self) -> bool:
        return self.gone or self.meta.deletionTimestamp is not None


class Daemons(EventHandler):
    """The daemons and timers of one controller (its `for_()` kind), as one event handler."""

    def __init__(
        self,
        specs: list[DaemonSpec],
        *,
        controller: str,
        group_kind: tuple[str, str] | None,
        clock: Clock,
        read: Callable[[Request], Any],
        client: Any = None,
        kind: type | None = None,
        metrics: Any = None,
    ) -> None:
        names = [s.name for s in specs]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"daemons and timers of one controller need distinct names: {dupes}")
        if any(s.finalizer for s in specs) and (client is None or kind is None):
            raise ValueError("a daemon with a finalizer needs the manager's client")
        self.specs, self.controller, self.group_kind = specs, controller, group_kind
        self.clock, self._read, self.client, self.kind = clock, read, client, kind
        self.metrics = metrics
        self._objects: dict[Request, _Object] = {}
        self._stopping: set[asyncio.Task[None]] = set()
        self._backoff = {
            s.name: ItemExponentialFailureRateLimiter(_BACKOFF_BASE, _BACKOFF_MAX) for s in specs
        }
        self._closed: str | None = None  # the reason once the controller stopped: nothing new starts
        self._closing = asyncio.Event()  # set with _closed: a finalizer write's retry wait ends
        self._running: dict[str, int] = dict.fromkeys(names, 0)
        if metrics is not None:
            for spec in specs:
                metrics.daemons_running.labels(controller, spec.name).set_function(
                    lambda n=spec.name: self._running[n]
                )
                for result in ("success", "error", "terminal"):
                    metrics.daemon_runs.labels(controller, spec.name, result)

    # -- events (from the informer, through the controller's Kind source) -----------------------------
    def create(self, event: CreateEvent, queue: Enqueuer) -> None:
        self._seen(_held(event, "object"), deleted=False)

    def update(self, event: UpdateEvent, queue: Enqueuer) -> None:
        self._seen(_held(event, "object_new"), deleted=False)

    def delete(self, event: DeleteEvent, queue: Enqueuer) -> None:
        self._seen(_held(event, "object"), deleted=True)

    def generic(self, event: GenericEvent, queue: Enqueuer) -> None:
        """Generic events carry no object state of the kind: ignored."""

    def running(self, request: Request) -> list[str]:
        """The names of the daemons and timers running (or stopping) for `request` (tests, debugging)."""
        state = self._objects.get(request)
        return sorted(state.runners) if state else []

    def _seen(self, obj: Any, *, deleted: bool) -> None:
        meta = _meta(obj)
        req = Request(meta.namespace, meta.name)
        state = self._objects.get(req)
        if state is None:
            if deleted:
                return
            state = self._objects[req] = _Object(req, obj, meta, self.clock.monotonic())
        state.touched(obj, meta, self.clock.monotonic())
        state.gone = state.gone or deleted
        self._evaluate(state)

    def _evaluate(self, state: _Object) -> None:
        """Start what should run, stop what should not, keep the finalizers in step; forget a deleted
        object once nothing of it runs."""
        for spec in self.specs:
            runner = state.runners.get(spec.name)
            wanted = not state.deleting and self._closed is None and self._matches(spec, state.latest)
            if wanted and runner is None and spec.name not in state.finished:
                self._spawn(state, spec)
            elif not wanted and runner is not None:
                reason = self._closed or (DELETED if state.deleting else FILTERED_OUT)
                self._stop(state, runner, reason)
        self._sync_finalizers(state)
        if state.gone and not state.runners:
            self._objects.pop(state.request, None)

    @staticmethod
    def _matches(spec: DaemonSpec, obj: Any) -> bool:
        try:
            return spec.filter is None or spec.filter.matches(obj)
        except Exception:
            log.exception("daemon filter failed", extra={"daemon": spec.name})
            return False

    # -- one runner per object and spec ----------------------------------------------------------------
    def _spawn(self, state: _Object, spec: DaemonSpec) -> None:
        runner = _Runner(spec, Stopped(self.clock))
        state.runners[spec.name] = runner
        self._running[spec.name] += 1
        runner.task = asyncio.create_task(
            self._run(state, runner), name=f"{spec.kind} {spec.name} {state.request}"
        )
        runner.task.add_done_callback(lambda _t: self._ended(state, runner))

    def _ended(self, state: _Object, runner: _Runner) -> None:
        spec = runner.spec
        if state.runners.get(spec.name) is runner:
            del state.runners[spec.name]
            self._running[spec.name] -= 1
        if not runner.stopped:  # returned or failed terminally on its own: kopf does not restart it
            state.finished.add(spec.name)
        if self._objects.get(state.request) is state:
            # one stopped for a filter starts again if the object matched again while it stopped
            self._evaluate(state)

    def _stop(self, state: _Object, runner: _Runner, reason: str) -> None:
        runner.stopped.set(reason)
        if runner.stopping is None:
            runner.stopping = asyncio.create_task(
                self._terminate(state, runner), name=f"stopping {runner.spec.name}"
            )
            self._stopping.add(runner.stopping)
            runner.stopping.add_done_callback(self._stopping.discard)

    async def _terminate(self, state: _Object, runner: _Runner) -> None:
        """kopf's three stages: the stopped flag and `grace_period`; cancellation (async functions)
        and `cancellation_timeout`; then the task is abandoned with a warning."""
        task, spec = runner.task, runner.spec
        if task is None or await self._finished_within(task, spec.grace_period):
            return
        fields = self._fields(state.request, spec)
        if spec.is_async:
            log.debug(
                "%s %s did not stop within its grace period: cancelling", spec.kind, spec.name, extra=fields
            )
            task.cancel()
        if await self._finished_within(task, spec.cancellation_timeout):
            return
        log.warning(
            "%s %s did not stop in time (stopped: %s); abandoned",
            spec.kind,
            spec.name,
            runner.stopped.reason,
            extra=fields,
        )
        task.cancel()  # the thread of a plain `def` one runs on, orphaned: it must check ctx.stopped
        if state.runners.get(spec.name) is runner:  # let a deletion's finalizer go
            del state.runners[spec.name]
            self._running[spec.name] -= 1
            self._evaluate(state)

    async def _finished_within(self, task: asyncio.Task[None], seconds: float) -> bool:
        """Whether `task` ends within `seconds`: on the controller's clock (a FakeClock in tests) while
        it runs; once it stops, in real time, as its reconciles' drain is (a stop never waits on a
        fake clock nobody moves)."""
        if task.done():
            return True
        if self._closed is None:
            with contextlib.suppress(TimeoutError):
                async with self.clock.timeout(seconds):
                    await _first(asyncio.wait([task]), self._closing.wait())
            if task.done() or self._closed is None:
                return task.done()
        await asyncio.wait([task], timeout=seconds)
        return task.done()

    async def _run(self, state: _Object, runner: _Runner) -> None:
        spec, stopped, req = runner.spec, runner.stopped, state.request
        run_id = os.urandom(6).hex()
        with reconcile_context(self.controller, req, run_id, self.group_kind, daemon=spec.name):
            try:
                delay = spec.initial_delay
                if callable(delay):
                    delay = float(delay(self._read(req)))
                if delay and await stopped.wait(delay):
                    return
                if spec.timer:
                    await self._timer(state, runner)
                else:
                    await self._daemon(state, runner)
            except asyncio.CancelledError:
                if not stopped and not own_cancellation():
                    raise
                log.debug("%s %s cancelled: %s", spec.kind, spec.name, stopped.reason)

    async def _daemon(self, state: _Object, runner: _Runner) -> None:
        spec, stopped = runner.spec, runner.stopped
        attempt = 0
        while not stopped:
            outcome, result = await self._call(state, runner, attempt)
            if outcome == "terminal":
                return
            if outcome == "error":
                attempt += 1
                if await stopped.wait(self._retry_delay(spec, state.request)):
                    return
                continue
            self._backoff[spec.name].forget(state.request)
            attempt = 0
            after = result.requeue_after_seconds if result is not None else 0.0
            if after <= 0 or await stopped.wait(after):
                return  # returned: done for this object (kopf's daemons exit for good)

    async def _timer(self, state: _Object, runner: _Runner) -> None:
        spec, stopped, clock = runner.spec, runner.stopped, self.clock
        attempt = 0
        while not stopped:
            if spec.idle is not None:  # the quiet period moves with every change of the object
                while not stopped and clock.monotonic() - state.changed_at < spec.idle:
                    await stopped.wait(state.changed_at + spec.idle - clock.monotonic())
                if stopped:
                    return
            started = clock.monotonic()
            outcome, _result = await self._call(state, runner, attempt)
            if outcome == "terminal":
                return
            if outcome == "error":
                attempt += 1
                await stopped.wait(self._retry_delay(spec, state.request))
                continue
            self._backoff[spec.name].forget(state.request)
            attempt = 0
            if spec.interval is not None:
                wait = (
                    spec.interval - (clock.monotonic() - started) % spec.interval
                    if spec.sharp
                    else spec.interval
                )
                await stopped.wait(wait)
            elif spec.idle is not None:  # idle only: once per quiet period, then wait for a change
                while not stopped and state.changed_at <= started:
                    changed = state.changed
                    await _first(changed.wait(), stopped.wait())
            else:
                return  # neither interval nor idle: one call (kopf allows it too)

    def _retry_delay(self, spec: DaemonSpec, req: Request) -> float:
        if spec.backoff is not None:
            return spec.backoff
        return self._backoff[spec.name].when(req)

    async def _call(self, state: _Object, runner: _Runner, attempt: int) -> tuple[str, Result | None]:
        """One call of the function: ("success", its result), ("error", None) or ("terminal", None)."""
        spec, req = runner.spec, state.request
        ctx = DaemonContext(req, runner.stopped, attempt, spec.name, lambda: self._read(req))
        m = self.metrics
        try:
            if spec.is_async:
                result = await spec.fn(ctx)  # type: ignore[misc]
            else:
                result = await _in_own_thread(spec.fn, ctx)
            if inspect.isawaitable(result):
                result = await result
        except asyncio.CancelledError:
            raise
        except TerminalError as err:
            self._log_error(f"{spec.kind} error, terminal: not restarted", req, spec, err)
            if m is not None:
                m.daemon_runs.labels(self.controller, spec.name, "terminal").inc()
            return "terminal", None
        except Exception as err:
            self._log_error(f"{spec.kind} error", req, spec, err)
            if m is not None:
                m.daemon_runs.labels(self.controller, spec.name, "error").inc()
            return "error", None
        if m is not None:
            m.daemon_runs.labels(self.controller, spec.name, "success").inc()
        return "success", result if isinstance(result, Result) else None

    def _fields(self, req: Request, spec: DaemonSpec) -> dict[str, Any]:
        fields = reconcile_fields(self.controller, req, "", self.group_kind)
        fields.pop("reconcileID")
        fields["daemon"] = spec.name
        return fields

    def _log_error(self, msg: str, req: Request, spec: DaemonSpec, err: BaseException) -> None:
        """One line with the reconcile's keys (the context the runner set) and the error, as
        "Reconciler error" is logged."""
        log.error(msg, extra={"error": safe_str(err), "errorType": type(err).__name__}, exc_info=err)

    # -- finalizers (opt-in: `finalizer=`) ---------------------------------------------------------------
    def _sync_finalizers(self, state: _Object) -> None:
        wanted = {s.finalizer for s in self.specs if s.finalizer}
        if not wanted or state.gone or state.finalizer_busy:
            return
        have = list(state.meta.finalizers or [])
        if state.deleting:
            # released once no daemon holding that finalizer runs for the object
            held = {r.spec.finalizer for r in state.runners.values() if r.spec.finalizer}
            drop = [f for f in have if f in wanted and f not in held]
            target = [f for f in have if f not in drop]
        else:
            running = {r.spec.finalizer for r in state.runners.values() if r.spec.finalizer}
            target = have + sorted(f for f in running if f not in have)
        if target != have:
            state.finalizer_busy = True
            task = asyncio.create_task(
                self._write_finalizers(state, target), name=f"finalizers {state.request}"
            )
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)

    async def _write_finalizers(self, state: _Object, finalizers: list[str]) -> None:
        req, meta = state.request, state.meta
        patch = {"metadata": {"resourceVersion": meta.resourceVersion, "finalizers": finalizers or None}}
        failed = False
        try:
            written = await self.client.patch(self.kind, req.name, patch, namespace=req.namespace or None)
        except Exception as err:  # a Conflict: the object moved on; its next event (or a retry) says more
            log.debug("finalizer update of %s: %s", req, safe_str(err), extra={"controller": self.controller})
            failed = True
        else:
            if state.meta is meta:  # no event since: what the server answered is the newest state
                state.meta = _meta(written)
        finally:
            state.finalizer_busy = False
        if failed:  # retried in a second (or by the object's next event), not after the controller stopped
            await _first(self.clock.sleep(1.0), self._closing.wait())
        if self._objects.get(req) is state and not self._closed:
            self._sync_finalizers(state)  # events that came while writing were not acted on

    # -- the controller's stop ------------------------------------------------------------------------
    def stop_all(self, reason: str) -> None:
        """Stop every daemon and timer (the controller stops, or lost its lease); nothing new starts."""
        if self._closed is None:
            self._closed = reason
            self._closing.set()
        for state in list(self._objects.values()):
            for runner in list(state.runners.values()):
                self._stop(state, runner, reason)

    async def wait_stopped(self) -> None:
        """Wait for the stops `stop_all` began (each bounded by its grace period and cancellation
        timeout)."""
        while self._stopping:
            await asyncio.wait(set(self._stopping))


def _held(event: Any, attr: str) -> Any:
    raw = raw_of(event, attr)
    return raw if raw is not None else getattr(event, attr)


async def _first(*aws: Awaitable[Any]) -> None:
    tasks = [asyncio.ensure_future(a) for a in aws]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in tasks:
            t.cancel()


async def _in_own_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Run a plain `def` daemon on a daemon thread of its own (it may run for the object's lifetime,
    so not on a bounded pool); context variables (the log keys) go with it."""
    import contextvars

    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    ctx = contextvars.copy_context()

    def work() -> None:
        try:
            result = ctx.run(fn, *args)
        except BaseException as err:  # handed back to the runner, as an executor would
            loop.call_soon_threadsafe(_settle, future, None, err)
        else:
            loop.call_soon_threadsafe(_settle, future, result, None)

    threading.Thread(target=work, name=f"pyop-daemon-{getattr(fn, '__name__', 'fn')}", daemon=True).start()
    return await asyncio.shield(future)


def _settle(future: asyncio.Future[Any], result: Any, err: BaseException | None) -> None:
    if future.done():
        return
    if err is not None:
        future.set_exception(err)
    else:
        future.set_result(result)
