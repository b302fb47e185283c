"""Events as the simulated control plane records them, written through the store like the real
components write them through the API.

Two recorders, as client-go has two:
- `EventRecorder` is `k8s.io/client-go/tools/record` (core/v1 Events), what kube-controller-manager's
  controllers and the kubelet use: `source`/`reportingComponent` is the component ("deployment-
  controller", "kubelet"), the host its node for the kubelet; an EventCorrelator deduplicates (the same
  event again bumps `count` and `lastTimestamp` of the first one), aggregates (the 10th event of one
  object, type and reason with different messages within 10 minutes becomes "(combined from similar
  events): ...") and drops spam (25 events per source and object, then one every 5 minutes).
- `EventsRecorder` is `k8s.io/client-go/tools/events` (events.k8s.io/v1), what kube-scheduler uses:
  `reportingController`/`reportingInstance`, `action`, `note`, `eventTime`; an isomorphic event (same
  object, type, reason, action, reporter) within 6 minutes turns the first into a series
  (`series.count: 2`); later ones are counted in memory, as the real broadcaster's half-hourly refresh
  is not simulated.

Times come from the recorder's clock (a `FakeClock` makes them deterministic). Event names are
`<object>.<nanoseconds in hex>` as client-go makes them; two events at the same instant of a fake
clock get consecutive nanoseconds instead of colliding. A write the server refuses (the namespace is
terminating, the object already exists) is dropped, as the real recorders drop it.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from pyscaffold_op.clock import REAL_CLOCK, Clock
from pyscaffold_op.envtest.status import StatusError
from pyscaffold_op.envtest.types import Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Store

log = logging.getLogger("pyscaffold_op.envtest.controllers.events")

NORMAL, WARNING = "Normal", "Warning"
CACHE_ENTRIES = 4096  # maxLruCacheEntries
AGGREGATE_MAX_EVENTS = 10  # defaultAggregateMaxEvents
AGGREGATE_INTERVAL = timedelta(seconds=600)  # defaultAggregateIntervalInSeconds
SPAM_BURST = 25  # defaultSpamBurst
SPAM_QPS = 1 / 300  # defaultSpamQPS
SERIES_FINISH = timedelta(minutes=6)  # tools/events' finishTime
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def reference(obj: Obj, field_path: str = "") -> Obj:
    """ref.GetReference: what an Event's involvedObject/regarding holds."""
    meta = obj.get("metadata") or {}
    ref: Obj = {"kind": obj.get("kind", ""), "namespace": meta.get("namespace", "")}
    ref["name"] = meta.get("name", "")
    ref["uid"] = meta.get("uid", "")
    ref["apiVersion"] = obj.get("apiVersion", "")
    ref["resourceVersion"] = meta.get("resourceVersion", "")
    if field_path:
        ref["fieldPath"] = field_path
    return {k: v for k, v in ref.items() if v}  # ObjectReference's fields are all omitempty


def _time(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _micro_time(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class _Lru(OrderedDict[str, Any]):
    """golang-lru's cache as client-go sizes it: the least recently used entry goes first."""

    def lookup(self, key: str) -> Any:
        if key in self:
            self.move_to_end(key)
            return self[key]
        return None

    def add(self, key: str, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > CACHE_ENTRIES:
            self.popitem(last=False)


@dataclass
class _Bucket:
    """flowcontrol's token bucket (starts full)."""

    tokens: float
    at: float


@dataclass
class _Aggregate:
    messages: set[str]
    last: datetime


@dataclass
class _Observed:
    count: int
    first: str
    name: str


class _Writer:
    """Writes Events into the store as one component (its field manager), dropping refused writes."""

    def __init__(self, manager: str, clock: Clock) -> None:
        self.manager = manager
        self.clock = clock
        self._store: Store | None = None
        self._last_nanos = 0

    def attach(self, store: Store, clock: Clock | None = None) -> None:
        self._store = store
        if clock is not None:
            self.clock = clock

    def detach(self) -> None:
        self._store = None

    def name_for(self, ref_name: str, now: datetime) -> str:
        """util.GenerateEventName: `<name>.<unix nanoseconds in hex>`, a UUID when that is no DNS
        subdomain; nanoseconds never repeat (a fake clock stands still)."""
        nanos = max(int(now.timestamp() * 1e9), self._last_nanos + 1)
        self._last_nanos = nanos
        name = f"{ref_name}.{nanos:x}"
        if len(name) > 253 or not _DNS_SUBDOMAIN.fullmatch(name):
            return str(uuid.uuid4())
        return name

    def create(self, group: str, event: Obj) -> Obj | None:
        store = self._store
        if store is None:
            return None
        ns = event["metadata"]["namespace"]
        try:
            return store.create(
                store.info(group, "v1", "events"), ns, event, manager=self.manager, fresh=True
            )
        except StatusError as err:  # terminating namespace, a name taken: the recorders give up too
            log.debug("event %s/%s not recorded: %s", ns, event["metadata"].get("name"), err.message)
            return None

    def patch(self, group: str, ns: str, name: str, changes: Obj) -> Obj | None:
        """The recorders' strategic merge patch of an existing event; None when it is gone."""
        store = self._store
        if store is None:
            return None
        info = store.info(group, "v1", "events")
        current = store.find(("", "events"), ns, name)
        if current is None:
            return None
        if group:
            from pyscaffold_op.envtest.registry.crossgroup import core_event_to_v1, v1_event_to_core

            merged = v1_event_to_core({**core_event_to_v1(current), **changes})
        else:
            merged = {**current, **changes}
        try:
            return store.update(info, ns, name, merged, manager=self.manager)
        except StatusError as err:
            log.debug("event %s/%s not updated: %s", ns, name, err.message)
            return None


class EventRecorder:
    """A core/v1 event recorder (client-go's `record`) for one component."""

    def __init__(
        self,
        component: str,
        host: str = "",
        *,
        manager: str = "kube-controller-manager",
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self.component = component
        self.host = host
        self._writer = _Writer(manager, clock)
        self._spam: _Lru = _Lru()
        self._aggregates: _Lru = _Lru()
        self._observed: _Lru = _Lru()

    @property
    def clock(self) -> Clock:
        return self._writer.clock

    def attach(self, store: Store, clock: Clock | None = None) -> None:
        self._writer.attach(store, clock)

    def detach(self) -> None:
        self._writer.detach()

    def event(self, obj: Obj, type_: str, reason: str, message: str, *, field_path: str = "") -> None:
        """Record an event about `obj` (recorder.Eventf)."""
        ref = reference(obj, field_path)
        now = self.clock.now()
        source: Obj = {"component": self.component}
        if self.host:
            source["host"] = self.host
        event: Obj = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": self._writer.name_for(ref.get("name", ""), now),
                "namespace": ref.get("namespace") or "default",
            },
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "source": source,
            "firstTimestamp": _time(now),
            "lastTimestamp": _time(now),
            "count": 1,
            "type": type_,
            "eventTime": None,
            "reportingComponent": self.component,
            "reportingInstance": self.host,
        }
        event, key = self._aggregate(event, now)
        if self._spammed(event, now):
            return
        observed = self._observed.lookup(key)
        if observed is not None:  # eventObserve: the same event again is a patch of the first one
            event["metadata"]["name"] = observed.name
            event["firstTimestamp"] = observed.first
            event["count"] = observed.count + 1
            changes = {"count": event["count"], "lastTimestamp": event["lastTimestamp"]}
            changes["message"] = event["message"]
            recorded = self._writer.patch("", event["metadata"]["namespace"], observed.name, changes)
            if recorded is None:  # the first one is gone: created again under its name and count
                recorded = self._writer.create("", event)
        else:
            recorded = self._writer.create("", event)
        # updateState after a write; the observation stands even when the write failed
        done = recorded or event
        self._observed.add(
            key, _Observed(int(done.get("count") or 1), done["firstTimestamp"], done["metadata"]["name"])
        )

    # -- the EventCorrelator --------------------------------------------------------------------------

    @staticmethod
    def _event_key(event: Obj) -> str:
        ref, source = event["involvedObject"], event["source"]
        return "".join(
            str(x)
            for x in (
                source.get("component", ""),
                source.get("host", ""),
                ref.get("kind", ""),
                ref.get("namespace", ""),
                ref.get("name", ""),
                ref.get("fieldPath", ""),
                ref.get("uid", ""),
                ref.get("apiVersion", ""),
                event["type"],
                event["reason"],
                event["message"],
            )
        )

    def _aggregate(self, event: Obj, now: datetime) -> tuple[Obj, str]:
        """EventAggregator: similar events (same source, object, type and reason) with distinct messages
        become one "(combined from similar events)" event from the 10th within 10 minutes on."""
        ref, source = event["involvedObject"], event["source"]
        aggregate_key = "".join(
            str(x)
            for x in (
                source.get("component", ""),
                source.get("host", ""),
                ref.get("kind", ""),
                ref.get("namespace", ""),
                ref.get("name", ""),
                ref.get("uid", ""),
                ref.get("apiVersion", ""),
                event["type"],
                event["reason"],
                event["reportingComponent"],
                event["reportingInstance"],
            )
        )
        record = self._aggregates.lookup(aggregate_key)
        if record is None or now - record.last > AGGREGATE_INTERVAL:
            record = _Aggregate(set(), now)
        record.messages.add(event["message"])
        record.last = now
        self._aggregates.add(aggregate_key, record)
        if len(record.messages) < AGGREGATE_MAX_EVENTS:
            return event, self._event_key(event)
        record.messages.pop()
        combined: Obj = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": self._writer.name_for(ref.get("name", ""), now),
                "namespace": event["metadata"]["namespace"],
            },
            "involvedObject": ref,
            "reason": event["reason"],
            "message": "(combined from similar events): " + event["message"],
            "source": event["source"],
            "firstTimestamp": _time(now),
            "lastTimestamp": _time(now),
            "count": 1,
            "type": event["type"],
            "eventTime": None,
            "reportingComponent": "",  # the aggregate copy carries no reporter, as client-go's
            "reportingInstance": "",
        }
        return combined, aggregate_key

    def _spammed(self, event: Obj, now: datetime) -> bool:
        """EventSourceObjectSpamFilter: a token bucket per source and object (and type)."""
        ref, source = event["involvedObject"], event["source"]
        key = "".join(
            str(x)
            for x in (
                source.get("component", ""),
                source.get("host", ""),
                ref.get("kind", ""),
                ref.get("namespace", ""),
                ref.get("name", ""),
                ref.get("uid", ""),
                ref.get("apiVersion", ""),
                event["type"],
            )
        )
        at = now.timestamp()
        bucket = self._spam.lookup(key) or _Bucket(float(SPAM_BURST), at)
        bucket.tokens = min(float(SPAM_BURST), bucket.tokens + max(at - bucket.at, 0.0) * SPAM_QPS)
        bucket.at = at
        self._spam.add(key, bucket)
        if bucket.tokens < 1:
            return True
        bucket.tokens -= 1
        return False


class EventsRecorder:
    """An events.k8s.io/v1 recorder (client-go's `tools/events`) for one reporting controller."""

    def __init__(self, controller: str, instance: str, *, manager: str, clock: Clock = REAL_CLOCK) -> None:
        self.controller = controller
        self.instance = instance
        self._writer = _Writer(manager, clock)
        self._series: dict[str, Obj] = {}

    @property
    def clock(self) -> Clock:
        return self._writer.clock

    def attach(self, store: Store, clock: Clock | None = None) -> None:
        self._writer.attach(store, clock)

    def detach(self) -> None:
        self._writer.detach()

    def event(
        self, regarding: Obj, related: Obj | None, type_: str, reason: str, action: str, note: str
    ) -> None:
        """Record an event (recorder.Eventf(regarding, related, type, reason, action, note))."""
        now = self.clock.now()
        ref = reference(regarding)
        rel = reference(related) if related is not None else None
        self._forget_finished(now)
        key = repr(
            (
                type_,
                action,
                reason,
                self.controller,
                self.instance,
                sorted(ref.items()),
                rel and sorted(rel.items()),
            )
        )
        seen = self._series.get(key)
        if seen is not None:
            series = seen.get("series")
            if series is not None:  # counted; the real broadcaster writes it every 30 minutes
                series["count"] += 1
                series["lastObservedTime"] = _micro_time(now)
                return
            seen["series"] = {"count": 2, "lastObservedTime": _micro_time(now)}
            meta = seen["metadata"]
            recorded = self._writer.patch(
                "events.k8s.io", meta["namespace"], meta["name"], {"series": dict(seen["series"])}
            )
            if recorded is None:
                self._writer.create("events.k8s.io", _to_core(seen))
            return
        event: Obj = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {
                "name": self._writer.name_for(ref.get("name", ""), now),
                "namespace": ref.get("namespace") or "default",
            },
            "eventTime": _micro_time(now),
            "reportingController": self.controller,
            "reportingInstance": self.instance,
            "action": action,
            "reason": reason,
            "regarding": ref,
            "note": note,
            "type": type_,
        }
        if rel is not None:
            event["related"] = rel
        self._series[key] = event
        self._writer.create("events.k8s.io", _to_core(event))

    def _forget_finished(self, now: datetime) -> None:
        for key, event in list(self._series.items()):
            series = event.get("series")
            last = (series or {}).get("lastObservedTime") or event["eventTime"]
            if datetime.fromisoformat(last.replace("Z", "+00:00")) < now - SERIES_FINISH:
                del self._series[key]


def _to_core(event: Obj) -> Obj:
    """The events.k8s.io/v1 Event as the core/v1 Event it is stored as (the store's storage form)."""
    from pyscaffold_op.envtest.registry.crossgroup import v1_event_to_core

    return v1_event_to_core({**event, "metadata": dict(event["metadata"])})
