"""`Controller`: watches feed a rate-limited work queue; N workers reconcile the requests (pkg/controller).

Per request (controller-runtime's reconcileHandler):
* exception            -> logged with the request, counted, `add_rate_limited` (per-item backoff);
* `TerminalError`      -> logged and counted, not requeued;
* a panic (`SystemExit`, `KeyboardInterrupt`, a `CancelledError` raised by the reconciler itself, not
  by the worker's own cancellation) -> logged, counted in `controller_runtime_reconcile_panics_total`,
  then handled as an error (controller-runtime's `RecoverPanic`, default true);
* `Result.requeue_after` -> `forget` + `add_after` (the delay is exact, no backoff);
* `Result.requeue`     -> `add_rate_limited`;
* otherwise            -> `forget` (the next failure starts again at the base delay).
Never two workers on one request; a reconcile never crashes the manager.

A failed reconcile also posts a Warning Event `ReconcileError` on the object (kopf posts one for a
failed handler; `with_options(error_events=False)` turns it off). A reconcile that takes a second
parameter gets a `ReconcileContext`: the attempt number, and the object as this controller's last
successful reconcile saw it, to tell what changed (opt-in: level-triggered stays the default).
The controller's daemons and timers (`daemon.Daemons`) start and stop with it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from random import getrandbits
from typing import Any

from pyscaffold_op.apimachinery.fields import format_duration
from pyscaffold_op.runtime import tracing
from pyscaffold_op.runtime.client.errors import ApiError
from pyscaffold_op.runtime.clock import REAL_CLOCK, Clock
from pyscaffold_op.runtime.controller.handler import EventHandler
from pyscaffold_op.runtime.controller.predicate import Predicate, as_predicate
from pyscaffold_op.runtime.controller.queue import RateLimitingQueue
from pyscaffold_op.runtime.controller.ratelimiter import RateLimiter
from pyscaffold_op.runtime.controller.request import ReconcileContext, Request, Result, TerminalError
from pyscaffold_op.runtime.controller.source import Kind, Source
from pyscaffold_op.runtime.log import reconcile_context, reconcile_fields
from pyscaffold_op.runtime.objects.kinds import ObjectDecodeError, info_for
from pyscaffold_op.runtime.panics import own_cancellation, panic_message, safe_str

log = logging.getLogger("pyscaffold_op.runtime.controller")

_CANCEL_WAIT = 5.0  # how long stop() waits for cancelled workers to unwind
# controller-runtime defaults to 1 worker, where a worker is a goroutine-sized thread. Ours are asyncio
# tasks: a reconcile mostly awaits API round trips, so a few workers overlap them for almost nothing.
# The queue still never hands one key to two workers; pass 1 to serialize a controller completely.
DEFAULT_MAX_CONCURRENT_RECONCILES = 8


class Controller:
    def __init__(
        self,
        name: str,
        reconciler: Any,
        *,
        max_concurrent_reconciles: int = DEFAULT_MAX_CONCURRENT_RECONCILES,
        rate_limiter: RateLimiter | None = None,
        metrics: Any = None,
        cache: Any = None,
        cache_sync_timeout: float = 120.0,
        reconcile_timeout: float | None = None,
        need_leader_election: bool = True,
        clock: Clock | None = None,
        recorder: Any = None,
    ) -> None:
        if max_concurrent_reconciles < 1:
            raise ValueError("max_concurrent_reconciles must be at least 1")
        self.name = name
        self._reconcile, self._wants_context = _reconcile_callable(reconciler)
        self.reconciler = reconciler
        self.recorder = recorder  # posts a Warning Event per failed reconcile; None: no events
        self.max_concurrent_reconciles = max_concurrent_reconciles
        self.metrics = metrics
        self.cache = cache
        self.cache_sync_timeout = cache_sync_timeout
        self.reconcile_timeout = reconcile_timeout
        self.need_leader_election = need_leader_election
        self.group_kind: tuple[str, str] | None = None  # of the for_() kind, set by the builder (for logs)
        self.for_kind: type | None = None  # the for_() kind (set by the builder): events, the context
        self.daemons: Any = None  # a daemon.Daemons (the builder's daemon() and timer()), started with us
        # with a ReconcileContext: per key, the object as the last successful reconcile saw it
        self._handled: dict[Request, Any] = {}
        # run after each successful reconcile, as its last step (builder.taking_over_from_kopf())
        self.after_reconcile: list[Callable[[Request], Awaitable[None]]] = []
        self.clock = clock or REAL_CLOCK
        self.queue = RateLimitingQueue(
            rate_limiter,
            name=name,
            metrics=metrics.queue_metrics(name) if metrics is not None else None,
            clock=self.clock,
        )
        self._active = 0  # reconciles in flight
        if metrics is not None:
            metrics.bind_queue(name, self.queue)
            metrics.max_concurrent.labels(name).set(max_concurrent_reconciles)
            # read when scraped, like the queue's depth: no gauge update (a lock each) per reconcile
            metrics.active_workers.labels(name).set_function(lambda: self._active)
            # the children controller-runtime's initMetrics makes at 0
            for result in ("success", "error", "requeue", "requeue_after"):
                metrics.reconcile_total.labels(name, result)
            metrics.reconcile_errors.labels(name)
            metrics.terminal_errors.labels(name)
            metrics.reconcile_panics.labels(name)
            metrics.reconcile_timeouts.labels(name)
            # the children every reconcile touches, looked up once (labels() costs ~20 µs a call)
            self._m_time = metrics.reconcile_time.labels(name)
            self._m_total = {
                r: metrics.reconcile_total.labels(name, r)
                for r in ("success", "error", "requeue", "requeue_after")
            }
        self._watches: list[tuple[Source, EventHandler, tuple[Predicate, ...]]] = []
        self._workers: list[asyncio.Task[None]] = []
        self._started = False
        self._stopping = False
        self._idle = asyncio.Event()
        self._idle.set()
        # Sharding (runtime/sharding): set by the manager's Sharding.attach; None: every key is ours.
        self.shard: Any = None
        # Leader election: the manager's LeaderElector for a leader-elected controller; no reconcile
        # starts while it does not hold a fresh lease (manager/leader.py, "fencing by age").
        self.leader: Any = None
        self._scopes: dict[Any, asyncio.Timeout] = {}  # in-flight reconciles of a sharded controller

    def __repr__(self) -> str:
        return f"Controller({self.name!r})"

    def watch(self, source: Source | type, handler: EventHandler, *predicates: Predicate) -> None:
        """Watch `source` (a Source, or a kind class meaning `Kind(cls)`); `handler` maps its events to
        requests, after every predicate has let them through."""
        src = source if isinstance(source, Source) else Kind(source)
        if self.cache is not None:
            src.inject_cache(self.cache)
        preds = tuple(as_predicate(p) for p in predicates)
        self._watches.append((src, handler, preds))
        if self._started:
            src.start(handler, self.sink(), preds)

    def sink(self) -> Any:
        """What sources enqueue into: the queue, behind the shard filter when the controller is sharded."""
        if self.shard is None:
            return self.queue
        from pyscaffold_op.runtime.sharding.shards import ShardedSink

        return ShardedSink(self.queue, self.shard)

    def revoke(self, item: Any) -> None:
        """Cancel the in-flight reconcile of `item` (a sharded key moved away past its handover time):
        it ends as an error and is requeued, and the shard filter drops it."""
        scope = self._scopes.get(item)
        if scope is not None:
            scope.reschedule(asyncio.get_running_loop().time())

    async def start(self) -> None:
        """Start the sources, wait for their caches, then start the workers. Returns once running."""
        if self._started:
            return
        self._started = True
        sink = self.sink()
        for src, handler, preds in self._watches:
            src.start(handler, sink, preds)
        for src, _handler, _preds in self._watches:
            if not await src.wait_for_sync(self.cache_sync_timeout):
                raise TimeoutError(f"controller {self.name}: timed out waiting for {src!r} to sync")
        tracer = tracing.tracer()
        if tracer is not None:  # a span per reconcile: `_process` is swapped once, not tested per call
            tracing.trace_controller(self, tracer)
        log.info(
            "starting workers",
            extra={"controller": self.name, "worker_count": self.max_concurrent_reconciles},
        )
        self._workers = [
            asyncio.create_task(self._worker(), name=f"{self.name} worker {i}")
            for i in range(self.max_concurrent_reconciles)
        ]

    def abort(self) -> None:
        """Stop at once: no more requests, in-flight reconciles cancelled (lost leadership, a forced
        stop). `stop()` afterwards waits for them to unwind."""
        self._stopping = True
        self.queue.shut_down()
        for task in self._workers:
            task.cancel()
        if self.daemons is not None:
            from pyscaffold_op.runtime.controller.daemon import LEADERSHIP_LOST

            self.daemons.stop_all(LEADERSHIP_LOST)

    async def stop(self, timeout: float = 30.0) -> bool:  # noqa: ASYNC109
        """Stop taking requests, let in-flight reconciles finish within `timeout` (then cancel them).
        True when everything finished in time."""
        self._stopping = True
        for src, _h, _p in self._watches:
            await src.stop()
        self.queue.shut_down()
        if self.daemons is not None:  # daemons get their own grace periods, beside the drain
            from pyscaffold_op.runtime.controller.daemon import SHUTDOWN

            self.daemons.stop_all(SHUTDOWN)
        drained = True
        if self._active:
            try:
                async with asyncio.timeout(timeout):
                    await self._idle.wait()
            except TimeoutError:
                drained = False
                log.warning(
                    "in-flight reconciles did not finish in %.1fs; cancelling",
                    timeout,
                    extra={"controller": self.name},
                )
        for task in self._workers:
            task.cancel()
        if self._workers:
            # bounded: a reconcile that swallows its cancellation must not hang the manager's stop
            _done, pending = await asyncio.wait(self._workers, timeout=_CANCEL_WAIT)
            if pending:
                log.warning("%d workers ignored cancellation", len(pending), extra={"controller": self.name})
        self._workers = []
        if self.daemons is not None:
            await self.daemons.wait_stopped()
        return drained

    async def _worker(self) -> None:
        while True:
            item, shutdown = await self.queue.get()
            if shutdown:
                return
            if self.leader is not None and not self.leader.holds() and not await self.leader.wait_holds():
                self.queue.done(item)  # leadership lost: the manager aborts this controller
                return
            if self._stopping:  # graceful shutdown: what is queued now waits for the next leader/start
                self.queue.done(item)
                return
            if self.shard is not None and not self.shard.holds(item):
                self.queue.done(item)  # moved to another replica (or not yet ours): not reconciled here
                self.queue.forget(item)
                continue
            self._active += 1
            self._idle.clear()
            try:
                await self._process(item)  # type: ignore[arg-type]  # the queue holds Hashables: ours are Requests
            finally:
                self.queue.done(item)
                self._active -= 1
                if not self._active:
                    self._idle.set()
            # A reconcile that never awaits would otherwise drain the whole queue in one go and starve
            # the informers, probes and other controllers: yield to the loop between items. With the
            # queue empty, get() waits anyway: no extra turn of the loop per item then.
            if len(self.queue):
                await asyncio.sleep(0)

    async def _process(self, req: Request) -> tuple[str, BaseException | None]:
        """Reconcile one request; (result label, the error or panic if any)."""
        m, name = self.metrics, self.name
        error: BaseException | None = None
        started = self.clock.monotonic()
        reconcile_id = f"{getrandbits(48):012x}"  # as random as uuid4().hex[:12], with no syscall
        try:
            args: tuple[Any, ...] = (req, self._context(req, reconcile_id)) if self._wants_context else (req,)
            with reconcile_context(name, req, reconcile_id, self.group_kind):
                if self.shard is not None or self.reconcile_timeout:
                    # with sharding, a scope revoke() can end: the key may move mid-reconcile
                    deadline = asyncio.timeout(self.reconcile_timeout or None)
                    try:
                        async with deadline:
                            if self.shard is not None:
                                self._scopes[req] = deadline
                            result = await self._reconcile(*args)
                    finally:
                        self._scopes.pop(req, None)
                        if self.reconcile_timeout and deadline.expired() and m is not None:
                            m.reconcile_timeouts.labels(name).inc()
                else:
                    result = await self._reconcile(*args)
                for hook in self.after_reconcile:
                    await hook(req)
            if self._wants_context:
                self._handled_now(req, args[1])
            outcome = self._after_success(req, result)
            if log.isEnabledFor(logging.DEBUG):  # one check on the hot path when debug is off
                self._log_done(outcome, req, reconcile_id, result)
        except asyncio.CancelledError as err:
            if self._stopping or own_cancellation():
                self.queue.add_rate_limited(req)  # cancelled at shutdown: let the next start retry it
                raise
            # raised by the reconciler itself: a panic, not our shutdown; the worker lives on
            outcome, error = self._panic(req, reconcile_id, err), err
        except TerminalError as err:
            outcome, error = "error", err
            self.queue.forget(req)
            if m is not None:
                m.reconcile_errors.labels(name).inc()
                m.terminal_errors.labels(name).inc()
            self._log_error("Reconciler error, terminal: not retried", req, reconcile_id, err)
            self._error_event(req, f"Reconciler error, terminal: not retried: {safe_str(err)}")
        except Exception as err:
            outcome, error = "error", err
            self.queue.add_rate_limited(req)
            if m is not None:
                m.reconcile_errors.labels(name).inc()
                m.reconcile_errors_by_reason.labels(name, _reason(err)).inc()
            self._log_error("Reconciler error", req, reconcile_id, err)
            self._error_event(req, f"Reconciler error: {safe_str(err)}")
        except BaseException as err:  # SystemExit, KeyboardInterrupt ...: recovered as a panic
            outcome, error = self._panic(req, reconcile_id, err), err
        finally:
            if m is not None:
                self._m_time.observe(self.clock.monotonic() - started)
        if m is not None:
            self._m_total[outcome].inc()
        return outcome, error

    def _panic(self, req: Request, reconcile_id: str, err: BaseException) -> str:
        """controller-runtime's recovered panic: "Observed a panic" with the stack, counted, then the
        reconcile is an error (rate-limited requeue)."""
        m = self.metrics
        self.queue.add_rate_limited(req)
        if m is not None:
            m.reconcile_panics.labels(self.name).inc()
            m.reconcile_errors.labels(self.name).inc()
            m.reconcile_errors_by_reason.labels(self.name, "Panic").inc()
        self._log_error("Observed a panic", req, reconcile_id, err, panic=True)
        self._error_event(req, f"Observed a panic: {panic_message(err)}")
        return "error"

    # -- what the cache holds of the for_() kind: the context's objects, the error events' object -------
    def stored(self, req: Request) -> Any:
        """The for_() object of `req` as the cache keeps it (JSON bytes or an object), None if absent."""
        if self.for_kind is None or self.cache is None:
            return None
        store = self.cache.get_informer(self.for_kind).store
        return store.get_stored(f"{req.namespace}/{req.name}" if req.namespace else req.name)

    def _decode(self, stored: Any) -> Any:
        if stored is None or self.for_kind is None:
            return None
        return info_for(self.for_kind).decode(stored) if isinstance(stored, bytes) else stored

    def _context(self, req: Request, reconcile_id: str) -> ReconcileContext:
        stored = self.stored(req)
        old = self._handled.get(req)
        return ReconcileContext(
            request=req,
            attempt=self.queue.num_requeues(req),
            reconcile_id=reconcile_id,
            _stored=stored,
            _old_stored=old,
            _decode=self._decode,
        )

    def _handled_now(self, req: Request, ctx: ReconcileContext) -> None:
        """After a success: what this reconcile saw becomes the next one's `old`."""
        if ctx._stored is None:
            self._handled.pop(req, None)
        else:
            self._handled[req] = ctx._stored

    def _error_event(self, req: Request, message: str) -> None:
        """A Warning Event on the object, as kopf posts one for a failed handler (the recorder
        aggregates repeats into one Event with a count)."""
        if self.recorder is None:
            return
        try:
            obj = self._decode(self.stored(req))
            if obj is not None:
                self.recorder.eventf(obj, None, "Warning", "ReconcileError", "Reconcile", message)
        except Exception as event_err:  # an event must never break the controller
            log.debug("no error event for %s: %s", req, safe_str(event_err), extra={"controller": self.name})

    def _log_error(
        self, msg: str, req: Request, reconcile_id: str, err: BaseException, panic: bool = False
    ) -> None:
        """One structured line, as controller-runtime's `log.Error(err, "Reconciler error")`.

        API status errors (Conflict, AlreadyExists, NotFound ...) are expected in a level-triggered
        controller: no traceback for them unless the level is debug; other exceptions get one."""
        fields = reconcile_fields(self.name, req, reconcile_id, self.group_kind)
        fields["error"] = panic_message(err) if panic else safe_str(err)  # a __str__ that raises too
        fields["errorType"] = type(err).__name__
        expected = isinstance(_cause(err), ApiError | ObjectDecodeError)  # their message says it all
        traceback = panic or not expected or log.isEnabledFor(logging.DEBUG)
        log.error(msg, extra=fields, exc_info=err if traceback else None)

    def _log_done(self, outcome: str, req: Request, reconcile_id: str, result: Result | None) -> None:
        """controller-runtime's words for a reconcile that returned (its V(5) lines; debug here)."""
        if outcome == "requeue_after":
            after = result.requeue_after_seconds if result is not None else 0.0
            msg = f"Reconcile done, requeueing after {format_duration(timedelta(seconds=after))}"
        elif outcome == "requeue":
            msg = "Reconcile done, requeueing"
        else:
            msg = "Reconcile successful"
        log.debug(msg, extra=reconcile_fields(self.name, req, reconcile_id, self.group_kind))

    def _after_success(self, req: Request, result: Result | None) -> str:
        if result is None:
            result = _DONE
        after = result.requeue_after_seconds
        if after > 0:
            self.queue.forget(req)
            self.queue.add_after(req, after)
            return "requeue_after"
        if result.requeue:
            self.queue.add_rate_limited(req)
            return "requeue"
        self.queue.forget(req)
        return "success"


_DONE = Result()  # what a reconcile that returns None asks for


def _cause(err: BaseException) -> BaseException:
    """What a TerminalError wraps, else the error itself."""
    cause = getattr(err, "cause", None) if isinstance(err, TerminalError) else None
    return cause if isinstance(cause, BaseException) else err


def _reason(err: BaseException) -> str:
    cause = _cause(err)
    return (cause.reason or type(cause).__name__) if isinstance(cause, ApiError) else "Error"


def _reconcile_callable(reconciler: Any) -> tuple[Any, bool]:
    """Accept an object with `async def reconcile(request)` or a bare async function; the second value
    says whether it takes a `ReconcileContext` too (`reconcile(request, ctx)`)."""
    fn = getattr(reconciler, "reconcile", None)
    if fn is None and callable(reconciler):
        fn = reconciler
    if fn is None:
        raise TypeError(f"{reconciler!r} has no reconcile(request) method")
    call = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__
    if not inspect.iscoroutinefunction(call):
        raise TypeError(f"{fn!r} must be `async def reconcile(self, request) -> Result | None`")
    return fn, _takes_context(fn)


def _takes_context(fn: Any) -> bool:
    """Whether `fn` accepts a second positional argument (the ReconcileContext)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2  # not *args: a decorator's wrapper without functools.wraps


def watches_of(controller: Controller) -> Sequence[tuple[Source, EventHandler, tuple[Predicate, ...]]]:
    return tuple(controller._watches)
