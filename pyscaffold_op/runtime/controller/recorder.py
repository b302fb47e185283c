"""`LegacyEventRecorder`: writes core/v1 Events about objects (client-go's record.EventRecorder).

Deprecated, as controller-runtime deprecates `GetEventRecorderFor`: `mgr.get_event_recorder(name)`
records events.k8s.io/v1 Events (`events.py`, what kubebuilder v4.16 scaffolds). This one stays for
code written against `mgr.get_event_recorder_for(name)`; its RBAC rule is on the core group.

`recorder.event(obj, "Normal"|"Warning", reason, message)` is fire-and-forget, like the Go recorder:
it returns at once and the Event is written by a background task, so a reconciler never waits on (or
fails because of) an event. Repeats of the same event for the same object within 10 minutes bump
`count` and `lastTimestamp` of the existing Event instead of creating a new one (the Go recorder's
aggregation). `await recorder.flush()` waits for pending writes (tests; the manager does it on stop).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from datetime import UTC, datetime
from typing import Any

from pyscaffold_op.runtime.client.errors import Forbidden, NotFound
from pyscaffold_op.runtime.objects import objmeta
from pyscaffold_op.runtime.objects.kinds import info_of

log = logging.getLogger("pyscaffold_op.runtime.recorder")

NORMAL, WARNING = "Normal", "Warning"
_MAX_PENDING = 1000  # the Go broadcaster's queue length; beyond it events are dropped, not buffered
_DEDUPE_WINDOW = 600.0


class LegacyEventRecorder:
    def __init__(self, transport: Any, component: str, host: str | None = None) -> None:
        self.transport, self.component = transport, component
        self.host = host or socket.gethostname()
        self._pending: set[asyncio.Task[None]] = set()
        self._lock: asyncio.Lock | None = None  # writes in order, so repeats find the event to bump
        self._seen: dict[tuple[str, ...], tuple[str, str, int, float]] = {}  # key -> (ns, name, count, t)
        self._forbidden_said = False  # a missing RBAC rule for Events was reported

    def event(self, obj: Any, type_: str, reason: str, message: str) -> None:
        if type_ not in (NORMAL, WARNING):
            raise ValueError(f"event type must be Normal or Warning, got {type_!r}")
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            log.warning("event %s dropped: no running event loop", reason)
            return
        if len(self._pending) >= _MAX_PENDING:
            log.warning("event %s dropped: too many pending events", reason)
            return
        task = loop.create_task(self._write(obj, type_, reason, message[:1024]))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def eventf(self, obj: Any, type_: str, reason: str, fmt: str, *args: Any) -> None:
        self.event(obj, type_, reason, fmt % args if args else fmt)

    async def flush(self, timeout: float | None = 5.0) -> None:  # noqa: ASYNC109
        if self._pending:
            await asyncio.wait(set(self._pending), timeout=timeout)

    def _involved(self, obj: Any) -> dict[str, Any]:
        info = info_of(obj)
        ref = {
            "apiVersion": info.api_version,
            "kind": info.kind,
            "name": objmeta.name(obj),
            "uid": objmeta.uid(obj),
            "resourceVersion": objmeta.resource_version(obj),
        }
        if objmeta.namespace(obj):
            ref["namespace"] = objmeta.namespace(obj)
        return {k: v for k, v in ref.items() if v}

    async def _write(self, obj: Any, type_: str, reason: str, message: str) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self._write_locked(obj, type_, reason, message)

    async def _write_locked(self, obj: Any, type_: str, reason: str, message: str) -> None:
        try:
            involved = self._involved(obj)
            ns = objmeta.namespace(obj) or "default"
            now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            key = (involved.get("uid", ""), involved["kind"], involved["name"], ns, type_, reason, message)
            seen = self._seen.get(key)
            if seen and time.monotonic() - seen[3] < _DEDUPE_WINDOW:
                count = seen[2] + 1
                try:
                    await self.transport.request(
                        "PATCH",
                        f"/api/v1/namespaces/{ns}/events/{seen[1]}",
                        body=json.dumps({"count": count, "lastTimestamp": now}).encode(),
                        content_type="application/merge-patch+json",
                    )
                    self._seen[key] = (ns, seen[1], count, time.monotonic())
                    return
                except NotFound:
                    pass  # expired or deleted: create a fresh one
            name = f"{involved['name']}.{time.time_ns():x}"
            body = {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": ns},
                "involvedObject": involved,
                "reason": reason,
                "message": message,
                "type": type_,
                "source": {"component": self.component, "host": self.host},
                "firstTimestamp": now,
                "lastTimestamp": now,
                "count": 1,
                "reportingComponent": self.component,
                "reportingInstance": self.host,
            }
            await self.transport.request(
                "POST", f"/api/v1/namespaces/{ns}/events", body=json.dumps(body).encode()
            )
            self._seen[key] = (ns, name, 1, time.monotonic())
            if len(self._seen) > 4096:  # bounded memory: forget the oldest half
                for k in sorted(self._seen, key=lambda k: self._seen[k][3])[:2048]:
                    del self._seen[k]
        except Forbidden as err:  # said once with the fix, not once per event (a reconcile error posts one)
            if self._forbidden_said:
                log.debug("could not write event %s: %s", reason, err)
                return
            self._forbidden_said = True
            log.warning(
                'could not write event %s: %s; the manager\'s role needs `+kubebuilder:rbac:groups="",'
                "resources=events,verbs=create;patch` on a controller (then make manifests); later "
                "refusals are logged at debug level",
                reason,
                err,
            )
        except Exception as err:  # an event must never break a reconcile
            log.warning("could not write event %s: %s", reason, err)
