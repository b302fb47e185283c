"""`EventRecorder`: events.k8s.io/v1 Events, as controller-runtime v0.23+ records them.

`mgr.get_event_recorder(name)` is controller-runtime's `mgr.GetEventRecorder(name)`: client-go's
`tools/events` recorder, whose Events carry `reportingController` (the name), `reportingInstance`
(`<name>-<hostname>`), an `action`, a `note` and an `eventTime` (metav1.MicroTime). The classic
core/v1 recorder (`get_event_recorder_for`, `recorder.py`) stays, deprecated, as controller-runtime
keeps `GetEventRecorderFor`.

`recorder.eventf(regarding, related, type, reason, action, note, *args)` is fire-and-forget: the Event
is written by a background task, so a reconciler never waits on an event or fails because of one.

Aggregation is client-go's (`tools/events/event_broadcaster.go`): events are *isomorphic* when type,
action, reason, reporting controller and instance, and the references of `regarding` (its
resourceVersion included) and `related` are equal; the note is not compared (the first one stays).

* The first is created (POST).
* The second becomes a series: the Event is patched with `series: {count: 2, lastObservedTime}`.
* Later ones only count, in memory; the count is written when the series ends (no occurrence for 6
  minutes), every 30 minutes while it goes on (client-go's `refreshTime`, which also keeps the Event
  from expiring under the API server's `--event-ttl`), and at `flush()` (the manager's stop): client-go
  loses the counts not yet written when its broadcaster shuts down.
* An occurrence more than 6 minutes after the last one (`FINISH_TIME`) starts a new Event. client-go
  forgets on a 6-minute ticker, so its window is anywhere from 6 to 12 minutes; here it is 6 exactly.

Writes the server did not process (connection errors, 5xx, timeouts) are tried 12 times, 10-12.5 s
apart, as client-go does; a refusal (4xx) is not retried. A missing RBAC rule is said once, with the
marker to add.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pyscaffold_op.apimachinery.fields import format_micro_time
from pyscaffold_op.apimachinery.validation import is_qualified_name
from pyscaffold_op.runtime.client.errors import AlreadyExists, ApiError, Forbidden, NotFound, ServerError
from pyscaffold_op.runtime.clock import REAL_CLOCK, Clock
from pyscaffold_op.runtime.objects import objmeta
from pyscaffold_op.runtime.objects.kinds import info_of

log = logging.getLogger("pyscaffold_op.runtime.events")

NORMAL, WARNING = "Normal", "Warning"
FINISH_TIME = 360.0  # client-go's finishTime: a series with no occurrence for 6 minutes has ended
REFRESH_TIME = 1800.0  # client-go's refreshTime: ongoing series counts are written every 30 minutes
MAX_TRIES = 12  # client-go's maxTriesPerEvent
RETRY_SLEEP = 10.0  # client-go's defaultSleepDuration, jittered by up to 25%
MAX_QUEUED = 1000  # client-go's maxQueuedEvents: beyond it events are dropped, not buffered
INSTANCE_LIMIT = 128  # kube-apiserver's ReportingInstanceLengthLimit
EVENTS = "/apis/events.k8s.io/v1/namespaces/{namespace}/events"
RBAC_MARKER = "+kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch"
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")

Key = tuple[Any, ...]


def object_reference(obj: Any) -> dict[str, str]:
    """client-go's `reference.GetReference` as JSON: apiVersion, kind, namespace, name, uid and
    resourceVersion of `obj` (empty ones left out)."""
    info = info_of(obj)
    ref = {
        "apiVersion": info.api_version,
        "kind": info.kind,
        "namespace": objmeta.namespace(obj),
        "name": objmeta.name(obj),
        "uid": objmeta.uid(obj),
        "resourceVersion": objmeta.resource_version(obj),
    }
    return {k: v for k, v in ref.items() if v}


def event_name(object_name: str) -> str:
    """client-go's GenerateEventName: `<name>.<unix nanoseconds, hex>`, a UUID when that is no DNS
    subdomain (an RBAC role's `:`, or too long)."""
    name = f"{object_name}.{time.time_ns():x}"
    return name if len(name) <= 253 and _SUBDOMAIN.fullmatch(name) else str(uuid.uuid4())


@dataclass
class _Entry:
    """One Event as this recorder last wrote (or will write) it, and its series."""

    body: dict[str, Any]
    seen: float  # monotonic time of the last occurrence
    count: int = 1
    written: int = 0  # the count the server has
    last_observed: str = ""  # series.lastObservedTime (MicroTime) of the last occurrence
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one write at a time per Event

    @property
    def path(self) -> str:
        meta = self.body["metadata"]
        return EVENTS.format(namespace=meta["namespace"]) + "/" + meta["name"]


class EventRecorder:
    """events.k8s.io/v1 Events about objects (controller-runtime's `recorder.EventRecorder`)."""

    def __init__(
        self, transport: Any, name: str, *, host: str | None = None, clock: Clock | None = None
    ) -> None:
        errors = is_qualified_name(name)
        if errors:
            raise ValueError(
                f"event recorder name {name!r}: the reportingController of events.k8s.io/v1 Events "
                f"must be a qualified name: {'; '.join(errors)}"
            )
        self.transport = transport
        self.reporting_controller = name
        # `<name>-<hostname>` as client-go makes it; cut to the server's limit instead of refused
        self.reporting_instance = f"{name}-{host or socket.gethostname()}"[:INSTANCE_LIMIT]
        self.clock = clock or REAL_CLOCK
        self._entries: dict[Key, _Entry] = {}
        self._pending: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self._stopped = False
        self._forbidden_said = False

    # -- what controllers call ------------------------------------------------------------------------
    def eventf(
        self, regarding: Any, related: Any, type_: str, reason: str, action: str, note: str, *args: Any
    ) -> None:
        """Record an Event about `regarding` (and, optionally, `related`): `note % args` when args
        are given. `type_` is "Normal" or "Warning"; `reason` says why, `action` what was done or
        failed (both at most 128 characters, required by the server)."""
        self._record(regarding, related, None, type_, reason, action, note, args)

    def annotated_eventf(
        self,
        regarding: Any,
        related: Any,
        annotations: dict[str, str],
        type_: str,
        reason: str,
        action: str,
        note: str,
        *args: Any,
    ) -> None:
        """`eventf` with annotations on the Event object."""
        self._record(regarding, related, annotations, type_, reason, action, note, args)

    async def flush(self, timeout: float | None = 5.0) -> None:  # noqa: ASYNC109
        """Write the series counts not written yet, then wait (at most `timeout`) for pending writes."""
        for entry in list(self._entries.values()):
            if entry.count > max(entry.written, 1):
                self._spawn(self._write_series(entry))
        if self._pending:
            await asyncio.wait(set(self._pending), timeout=timeout)

    async def close(self, timeout: float | None = 5.0) -> None:  # noqa: ASYNC109
        """Flush, then record nothing more (controller-runtime's provider stops its broadcaster)."""
        await self.flush(timeout)
        self._stopped = True
        sweeper, self._sweeper = self._sweeper, None
        if sweeper is not None:
            sweeper.cancel()
            await asyncio.wait({sweeper})  # its timer is disarmed when close returns

    # -- aggregation ----------------------------------------------------------------------------------
    def _record(
        self,
        regarding: Any,
        related: Any,
        annotations: dict[str, str] | None,
        type_: str,
        reason: str,
        action: str,
        note: str,
        args: tuple[Any, ...],
    ) -> None:
        if type_ not in (NORMAL, WARNING):
            raise ValueError(f"event type must be Normal or Warning, got {type_!r}")
        if self._stopped:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            log.warning("event %s dropped: no running event loop", reason)
            return
        message = note % args if args else note
        ref = object_reference(regarding)
        rel = _related_reference(related)
        log.debug(
            "Event occurred",
            extra={
                "object": f"{ref.get('namespace', '')}/{ref.get('name', '')}".lstrip("/"),
                "kind": ref.get("kind"),
                "apiVersion": ref.get("apiVersion"),
                "type": type_,
                "reason": reason,
                "action": action,
                "note": message,
            },
        )
        mono, now = self.clock.monotonic(), self.clock.now()
        key = (type_, action, reason, _frozen(ref), _frozen(rel))
        entry = self._entries.get(key)
        if entry is not None and mono - entry.seen <= FINISH_TIME:
            entry.count += 1
            entry.seen, entry.last_observed = mono, format_micro_time(now)
            if entry.count == 2:  # client-go writes the series as it starts, then counts in memory
                self._spawn(self._write_series(entry))
            self._start_sweeper()
            return
        if entry is not None:
            self._finish(key, entry)
        metadata: dict[str, Any] = {
            "name": event_name(ref.get("name", "")),
            "namespace": ref.get("namespace") or "default",
        }
        if annotations:
            metadata["annotations"] = dict(annotations)
        body: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": metadata,
            "eventTime": format_micro_time(now),
            "reportingController": self.reporting_controller,
            "reportingInstance": self.reporting_instance,
            "action": action,
            "reason": reason,
            "regarding": ref,
            "note": message,
            "type": type_,
        }
        if rel is not None:
            body["related"] = rel
        entry = _Entry(body, mono)
        self._entries[key] = entry
        self._spawn(self._create(entry))
        self._start_sweeper()

    def _finish(self, key: Key, entry: _Entry) -> None:
        """The series ended: write its last count (if not written yet) and forget it."""
        if self._entries.get(key) is entry:
            del self._entries[key]
        if entry.count > max(entry.written, 1):
            self._spawn(self._write_series(entry))

    def _start_sweeper(self) -> None:
        if self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep(), name="event series sweeper")

    async def _sweep(self) -> None:
        """End the series idle for FINISH_TIME; write the counts of the others every REFRESH_TIME.
        Stops once no series is left (the next Event starts it again): an idle recorder keeps no
        timer armed, so a test on a FakeClock can tell that nothing is pending."""
        refreshed = self.clock.monotonic()
        while True:
            await self.clock.sleep(FINISH_TIME)
            now = self.clock.monotonic()
            for key, entry in list(self._entries.items()):
                if now - entry.seen > FINISH_TIME:
                    self._finish(key, entry)
            if not self._entries:
                self._sweeper = None  # no await from here to the end: _start_sweeper sees it at once
                return
            if now - refreshed >= REFRESH_TIME:
                refreshed = now
                for entry in self._entries.values():
                    if entry.count > 1:
                        self._spawn(self._write_series(entry))

    # -- writes ---------------------------------------------------------------------------------------
    def _spawn(self, write: Awaitable[None]) -> None:
        if len(self._pending) >= MAX_QUEUED:
            log.warning("event dropped: too many pending events")
            if asyncio.iscoroutine(write):
                write.close()
            return
        task = asyncio.ensure_future(write)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _create(self, entry: _Entry) -> None:
        async with entry.lock:
            body = json.dumps(entry.body).encode()
            path = EVENTS.format(namespace=entry.body["metadata"]["namespace"])
            if await self._attempt(
                lambda: self.transport.request("POST", path, body=body), entry, series=False
            ):
                entry.written = max(entry.written, 1)

    async def _write_series(self, entry: _Entry) -> None:
        """Patch the Event's series with the current count; create it (with the series) if it is gone."""
        async with entry.lock:
            count = entry.count
            if count <= entry.written or count < 2:
                return
            series = {"count": count, "lastObservedTime": entry.last_observed}

            async def write() -> bytes:
                patch = json.dumps({"series": series}).encode()
                try:
                    return await self.transport.request(
                        "PATCH", entry.path, body=patch, content_type="application/strategic-merge-patch+json"
                    )
                except NotFound:  # expired (--event-ttl) or deleted: create it again, with the series
                    body = json.dumps({**entry.body, "series": series}).encode()
                    path = EVENTS.format(namespace=entry.body["metadata"]["namespace"])
                    return await self.transport.request("POST", path, body=body)

            if await self._attempt(write, entry, series=True):
                entry.written = max(entry.written, count)

    async def _attempt(self, write: Callable[[], Awaitable[bytes]], entry: _Entry, *, series: bool) -> bool:
        """client-go's attemptRecording: up to MAX_TRIES while the server did not process the write."""
        reason = entry.body["reason"]
        for tries in range(1, MAX_TRIES + 1):
            try:
                await write()
                return True
            except Forbidden as err:  # said once with the fix, not once per event
                if not self._forbidden_said:
                    self._forbidden_said = True
                    log.warning(
                        "could not write event %s: %s; the manager's role needs `%s` on a controller "
                        "(then make manifests); later refusals are logged at debug level",
                        reason,
                        err,
                        RBAC_MARKER,
                    )
                else:
                    log.debug("could not write event %s: %s", reason, err)
                return False
            except AlreadyExists as err:
                if not series:  # the same name twice: nothing to retry
                    log.debug("server rejected event %s (will not retry): %s", reason, err)
                    return False
            except ServerError:
                pass  # 5xx, a timeout, no connection: the server did not take it
            except ApiError as err:
                log.warning("server rejected event %s (will not retry): %s", reason, err)
                return False
            except (TimeoutError, OSError):
                pass
            except Exception as err:  # an event must never break anything
                log.warning("could not write event %s: %r", reason, err)
                return False
            if tries == MAX_TRIES or self._stopped:
                break
            await self.clock.sleep(RETRY_SLEEP * (1 + 0.25 * random.random()))
        log.error("unable to write event %s (retry limit exceeded)", reason)
        return False


def _related_reference(related: Any) -> dict[str, str] | None:
    if related is None:
        return None
    try:
        return object_reference(related)
    except Exception as err:  # client-go logs at V(9) and leaves `related` out
        log.debug("could not construct reference to %r: %s", related, err)
        return None


def _frozen(ref: dict[str, str] | None) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(ref.items())) if ref else ()
