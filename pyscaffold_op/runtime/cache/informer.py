"""Informer: keeps a local copy of one kind in sync with the API server and tells handlers what changed.

client-go's reflector + shared informer, on asyncio:

* list (in pages) and replace the store, turning differences into add/update/delete events, so a relist
  after a lost watch neither loses nor duplicates anything;
* watch from the list's resourceVersion with `allowWatchBookmarks`, moving the resourceVersion forward on
  every event and bookmark, and re-watching from there when the server ends the stream;
* judge a watch that stays silent by asking the server (`liveness.py`): re-watch when the watch missed a
  change or the server cannot be reached, relist when the server's versions went back (it forgot);
* on 410 Gone (the version was compacted), relist; on other errors, retry with jittered exponential
  backoff (0.8 s doubling to 30 s, as the reflector does), or after the server's Retry-After if longer;
* every `resync_period`, replay every cached object as an update (old == new) to the handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Iterator
from typing import Any

from pyscaffold_op.apimachinery.labels import SelectorLike, render
from pyscaffold_op.clock import REAL_CLOCK, Clock
from pyscaffold_op.runtime.cache.liveness import ALIVE, Finding, Verdict, WatchLiveness, WatchMonitor
from pyscaffold_op.runtime.cache.registration import HandlerRegistration, ResourceEventHandler
from pyscaffold_op.runtime.cache.store import Indexer, IndexFunc
from pyscaffold_op.runtime.client.errors import (
    ApiError,
    Gone,
    ServerError,
    ServerTimeout,
    error_for,
    is_too_large_resource_version,
)
from pyscaffold_op.runtime.client.http1 import HTTPError
from pyscaffold_op.runtime.client.rest import RestTransport
from pyscaffold_op.runtime.manager import startup
from pyscaffold_op.runtime.objects import objmeta
from pyscaffold_op.runtime.objects.kinds import ResourceInfo, decode_watch_event, raw_resource_version
from pyscaffold_op.runtime.objects.rawobj import RawObject, unwrap
from pyscaffold_op.runtime.waits import event_set_within

log = logging.getLogger("pyscaffold_op.runtime.informer")


class Backoff:
    """Jittered exponential backoff: `next()` doubles from `initial` up to `maximum`; `reset()` restarts."""

    def __init__(self, initial: float = 0.8, maximum: float = 30.0, jitter: float = 1.0) -> None:
        self.initial, self.maximum, self.jitter = initial, maximum, jitter
        self._current = 0.0

    def next(self) -> float:
        self._current = self.initial if not self._current else min(self._current * 2, self.maximum)
        return self._current * (1 + random.random() * self.jitter)

    def reset(self) -> None:
        self._current = 0.0


class Informer:
    def __init__(
        self,
        transport: RestTransport,
        info: ResourceInfo,
        *,
        namespace: str | None = None,
        label_selector: SelectorLike = None,
        field_selector: SelectorLike = None,
        resync_period: float | None = None,
        indexers: dict[str, IndexFunc] | None = None,
        page_size: int = 500,
        backoff: Backoff | None = None,
        raw: bool = True,
        liveness: WatchLiveness | None = None,
        clock: Clock | None = None,
    ) -> None:
        """`liveness`: how a silent watch is judged (`WatchLiveness()`: client-go's figures);
        `clock`: the time its timers and probes run on (a `FakeClock` in tests)."""
        self.transport, self.info = transport, info
        self.namespace = namespace if info.namespaced else None
        self.label_selector, self.field_selector = render(label_selector), render(field_selector)
        self.resync_period = resync_period
        self.page_size = page_size
        # raw: the store keeps each object's JSON and decodes a new object per read (see store.py)
        self.store = Indexer(indexers, decode=info.decode if raw else None)
        self._handlers: list[HandlerRegistration] = []
        self._raw_handlers: list[HandlerRegistration] = []  # the same, split by what they take
        self._typed_handlers: list[HandlerRegistration] = []
        self._rv: str | None = None
        self._synced = asyncio.Event()
        self._backoff = backoff or Backoff()
        self.liveness = liveness or WatchLiveness()
        self.clock = clock or REAL_CLOCK
        self._monitor: WatchMonitor | None = None
        self._suspect = False  # the last watch broke or failed: probe the next one at once
        self._task: asyncio.Task[None] | None = None
        self._resync_task: asyncio.Task[None] | None = None
        self.stats = {
            "lists": 0,
            "watches": 0,
            "relists_on_gone": 0,
            "relists_on_too_large": 0,
            "server_resets": 0,
            "errors": 0,
            "events": 0,
            "probes": 0,  # silent watches the server was asked about
            "watches_cut": 0,  # watches closed as dead (a missed change, an unreachable server)
        }
        self._last_listed_rv: str | None = None
        self.last_error: Exception | None = None  # the latest list/watch failure, for "not ready" reports
        self.last_reason: str | None = None  # last_error explained in one line (runtime.startup)

    def __repr__(self) -> str:
        return f"Informer({self.info.api_version}/{self.info.kind}, ns={self.namespace or '*'})"

    @property
    def probing(self) -> bool:
        """Whether a liveness probe of the current watch is in flight (a test that drives `clock` by
        hand lets it finish before moving time on)."""
        return self._monitor is not None and self._monitor.probing

    @property
    def resource_version(self) -> str | None:
        """The version the next watch starts from (None: a list comes first)."""
        return self._rv

    # -- handlers -----------------------------------------------------------------------------------
    def add_event_handler(self, handler: ResourceEventHandler) -> HandlerRegistration:
        """Register `handler`; the registration returned removes it (`remove_event_handler`) and tells
        when it has had the initial list (`has_synced()`, `wait_for_sync()`). A handler added once the
        store is filled first gets an add for every object, delivered by a task of its own while
        everything else runs (registration.py); one added earlier gets the first list's adds in line.

        Handlers get typed objects. A handler whose class sets `raw_objects = True` (the runtime's own
        sources) gets `RawObject`s instead and decodes only what it reads (see rawobj.py)."""
        registration = HandlerRegistration(handler, self.info.kind)
        self._handlers.append(registration)
        (self._raw_handlers if registration.raw else self._typed_handlers).append(registration)
        if self._synced.is_set():
            registration.replay(list(self._snapshot()))
        return registration

    def remove_event_handler(self, registration: HandlerRegistration | ResourceEventHandler) -> None:
        """Remove a handler, given its registration (or the handler itself)."""
        for reg in [r for r in self._handlers if registration in (r, r.handler)]:
            reg.close()
            for handlers in (self._handlers, self._raw_handlers, self._typed_handlers):
                with contextlib.suppress(ValueError):
                    handlers.remove(reg)

    def add_index(self, name: str, fn: IndexFunc) -> None:
        self.store.add_index(name, fn)

    def _snapshot(self) -> Iterator[Any]:
        return self.store.raw_values() if self.store.stores_raw else self.store.values()

    # Objects may be RawObjects (a raw store) or typed objects; each registration hands its handler
    # what it takes (a RawObject's typed form is decoded once and shared).
    def _dispatch_add(self, obj: Any, initial: bool) -> None:
        for h in self._handlers:
            h.add(obj, initial)

    def _dispatch_update(self, old: Any, new: Any) -> None:
        for h in self._handlers:
            h.update(old, new)

    def _dispatch_delete(self, obj: Any, unknown: bool) -> None:
        for h in self._handlers:
            h.delete(obj, unknown)

    # -- lifecycle ----------------------------------------------------------------------------------
    def has_synced(self) -> bool:
        return self._synced.is_set()

    async def wait_for_sync(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        return await event_set_within(self._synced, timeout)

    def start(self) -> asyncio.Task[None]:
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name=f"informer {self.info.kind}")
            for h in self._handlers:
                if h.backlog:
                    h.resume()  # an initial delivery the last stop paused
            if self.resync_period:
                self._resync_task = asyncio.create_task(self._resync_loop(), name=f"resync {self.info.kind}")
        return self._task

    async def stop(self) -> None:
        paused = [t for t in (h.pause() for h in self._handlers) if t is not None]
        for task in (self._task, self._resync_task, *paused):
            if task is not None:
                task.cancel()
        for task in (self._task, self._resync_task, *paused):
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = self._resync_task = None

    async def run(self) -> None:
        while True:
            try:
                if self._rv is None:
                    await self._list()
                started, events = time.monotonic(), self.stats["events"]
                await self._watch()
                if self.stats["events"] == events and time.monotonic() - started < 1.0:
                    # A watch that ends at once without events is a broken server; do not spin on it.
                    await asyncio.sleep(self._backoff.next())
                else:
                    self._backoff.reset()
            except Gone:
                log.info("watch expired (410); relisting", extra={"kind": self.info.kind})
                self.stats["relists_on_gone"] += 1
                self._last_listed_rv, self._rv = self._rv or self._last_listed_rv, None
            except ServerWentBack as err:
                # A silent watch from a version the server never reached: it forgot (etcd wiped or
                # restored). Relist: the diff against the cache deletes what it no longer has.
                log.warning("%s; relisting", err, extra={"kind": self.info.kind})
                self._last_listed_rv, self._rv = self._rv or self._last_listed_rv, None
            except ServerTimeout as err:
                if not is_too_large_resource_version(err):
                    await self._retry_after(err)
                    continue
                # The server has not seen our version: it restarted with fresh state (or is behind).
                # client-go relists from scratch; so do we, diffing the new list against the cache.
                log.info("%s; relisting", err.message, extra={"kind": self.info.kind})
                self.stats["relists_on_too_large"] += 1
                self._last_listed_rv, self._rv = self._rv or self._last_listed_rv, None
            except asyncio.CancelledError:
                raise
            except Exception as err:
                await self._retry_after(err)

    async def _retry_after(self, err: Exception) -> None:
        self.stats["errors"] += 1
        self._suspect = True
        self.last_error = err
        reason = startup.explain(self.transport, self.info, err)
        delay = self._backoff.next()
        # a server that said how long to wait (Retry-After, past the transport's own retries) is not
        # asked again sooner
        asked = (err.details or {}).get("retryAfterSeconds") if isinstance(err, ApiError) else None
        if isinstance(asked, int | float) and not isinstance(asked, bool) and asked > delay:
            delay = float(asked)
        # Said once when it starts or changes, not at every retry: the backoff repeats it for minutes.
        level = logging.DEBUG if reason == self.last_reason else logging.WARNING
        self.last_reason = reason
        log.log(level, "%s (retrying in %.1fs)", reason, delay, extra={"kind": self.info.kind})
        await asyncio.sleep(delay)

    # -- list ---------------------------------------------------------------------------------------
    async def _list(self) -> None:
        path = self.info.path(self.namespace)
        params: dict[str, Any] = {
            "labelSelector": self.label_selector,
            "fieldSelector": self.field_selector,
            "limit": self.page_size,
        }
        if self._last_listed_rv is None:
            # The first list, as client-go's reflector makes it: resourceVersion=0, "any version",
            # which kube-apiserver serves from its watch cache (no etcd read, no pages). Relists (after
            # a 410, or when the server forgot) read the latest state, from etcd, in pages.
            params["resourceVersion"] = "0"
        items: list[tuple[Any, bytes]] = []
        rv = ""
        decode, raw_store = self.info.decode, self.store.stores_raw
        while True:
            page, rv, cont = self.info.split_list(await self.transport.request("GET", path, params=params))
            # a raw store decodes nothing here: handlers decode what they read (rawobj.py)
            items.extend((RawObject(raw, decode) if raw_store else decode(raw), raw) for raw in page)
            if not cont:
                break
            params.pop("resourceVersion", None)  # a continued list names no version
            params["continue"] = cont
        self.stats["lists"] += 1
        if _went_back(self._last_listed_rv, rv):
            # Versions only grow on one server: this is a new one with fresh state. The diff below
            # turns objects it does not have into deletes and its own objects into adds/updates.
            log.warning(
                "the server's resourceVersion went back from %s to %s: rebuilding the cache from it",
                self._last_listed_rv,
                rv,
                extra={"kind": self.info.kind},
            )
            self.stats["server_resets"] += 1
        self._last_listed_rv = rv or self._last_listed_rv
        self._replace(items)
        self._rv = rv or None
        if self._rv is None:
            raise RuntimeError(f"list of {self.info.kind} returned no resourceVersion")

    def _replace(self, items: list[tuple[Any, bytes]]) -> None:
        """Make the store equal `items` ((object, its JSON) pairs; the object may be a RawObject),
        emitting only real differences."""
        initial = not self._synced.is_set()
        seen: set[str] = set()
        raw_store = self.store.stores_raw
        for obj, raw in items:
            if raw_store:
                new = obj if type(obj) is RawObject else RawObject(raw, self.info.decode, obj)
                key, rv = new.key, new.meta.resourceVersion
                old: Any = self.store.put_raw(new)
                old_rv = None if old is None else old.meta.resourceVersion
            else:
                new = obj = unwrap(obj)
                key, rv = objmeta.key(obj), objmeta.resource_version(obj)
                old = self.store.put(key, obj, raw)
                old_rv = None if old is None else objmeta.resource_version(old)
            seen.add(key)
            if old is None:
                self._dispatch_add(new, initial)
            elif old_rv != rv:
                self._dispatch_update(old, new)
        for key in [k for k in self.store.list_keys() if k not in seen]:
            gone = self.store.delete_raw(key) if raw_store else self.store.delete(key)
            self._dispatch_delete(gone, True)  # deleted while we were not watching
        self._synced.set()
        for h in self._handlers:
            if not h.backlog:
                h.mark_synced()  # it had the initial list in line, above

    # -- watch --------------------------------------------------------------------------------------
    async def _watch(self) -> None:
        timeout_seconds = self.liveness.watch_timeout()  # spread reconnects like the reflector
        params = {
            "watch": "true",
            "resourceVersion": self._rv,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": timeout_seconds,
            "labelSelector": self.label_selector,
            "fieldSelector": self.field_selector,
        }
        self.stats["watches"] += 1
        async with self.transport.stream_lines(self.info.path(self.namespace), params) as lines:
            monitor = self._monitor = WatchMonitor(
                self.liveness, self.clock, lambda: lines.received, self._probe, timeout_seconds
            )
            try:
                async with asyncio.timeout(None) as reading:
                    monitor.start(lambda: reading.reschedule(0), probe_now=self._suspect)
                    self._suspect = False
                    async for line in lines:
                        self._handle_line(line)
            except _BROKEN_STREAM as err:
                # The stream broke after it was established (a proxy or the server reset it): like
                # client-go, treat it as a closed watch and resume from the last resourceVersion.
                log.debug("watch stream broken, resuming: %r", err, extra={"kind": self.info.kind})
                self._suspect = True
            except TimeoutError:
                if monitor.finding is None:
                    raise
            finally:
                monitor.stop()
                self._monitor = None
        finding = monitor.finding
        if finding is None:
            return
        if finding.verdict is Verdict.RESET:
            raise ServerWentBack(finding.why)
        self.stats["watches_cut"] += 1
        log.info("closing a dead watch (%s); re-watching", finding.why, extra={"kind": self.info.kind})

    async def _probe(self) -> Finding:
        """Ask the server whether this silent watch missed anything (liveness.py): its current
        resourceVersion, then, when that moved on, whether this kind changed since the watch's."""
        watch_rv = self._rv
        if watch_rv is None:
            return ALIVE
        self.stats["probes"] += 1
        path = self.info.path(self.namespace)
        selectors = {"labelSelector": self.label_selector, "fieldSelector": self.field_selector}
        bound = self.liveness.probe_timeout
        silent = f"no byte for {self.liveness.probe_after:g}s"
        try:
            async with self.clock.timeout(bound):
                raw = await self.transport.request(
                    "GET", path, params={**selectors, "limit": 1}, timeout=bound, max_retries=0
                )
                server_rv = self.info.split_list(raw)[1]
                if not server_rv or server_rv == watch_rv:
                    return ALIVE  # nothing happened that the watch could have missed
                if _went_back(watch_rv, server_rv):
                    return Finding(
                        Verdict.RESET,
                        f"the server is at resourceVersion {server_rv}, below the watch's {watch_rv}: "
                        "it came back with older state",
                    )
                missed = await self._first_change_since(path, {**selectors, "resourceVersion": watch_rv})
                if missed is None:
                    return ALIVE
                # Both may be in flight at once: the monitor drops this verdict if a byte comes meanwhile.
                await self.clock.sleep(self.liveness.catch_up)
                return Finding(Verdict.DEAD, f"{silent} and it missed the change at resourceVersion {missed}")
        except (TimeoutError, ServerTimeout):
            why = f"{silent} and the server did not answer a probe in {bound:g}s"
            # The kept-alive connections are likely stuck on the same path; later requests would
            # each wait out their own timeout on them (HTTP/2's failed ping closes them all too).
            closed = self.transport.close_idle_connections()
            if closed:
                why += f"; closed {closed} idle connection{'s' if closed > 1 else ''}"
        except ServerError as err:
            if not isinstance(err.__cause__, HTTPError | OSError):
                log.debug("watch probe inconclusive: %s", err, extra={"kind": self.info.kind})
                return ALIVE  # the server answered: it is reachable
            why = f"{silent} and the server cannot be reached ({err.message})"
        except ConnectionError as err:
            why = f"{silent} and a probe's connection broke ({err})"
        except Gone:
            why = f"{silent} and its resourceVersion {watch_rv} is older than the server's watch history"
        except ApiError as err:
            log.debug("watch probe inconclusive: %s", err, extra={"kind": self.info.kind})
            return ALIVE
        return Finding(Verdict.DEAD, why)

    async def _first_change_since(self, path: str, params: dict[str, Any]) -> str | None:
        """The resourceVersion of the first change of this kind after params' resourceVersion, from a
        one-second watch (the server replays its history at once); None when there is none."""
        params = {**params, "watch": "true", "timeoutSeconds": 1}
        async with self.transport.stream_lines(path, params) as lines:
            async for line in lines:
                kind, raw = decode_watch_event(line)
                if kind == "ERROR":
                    raise error_for(500, bytes(raw))
                if kind != "BOOKMARK":
                    return raw_resource_version(raw) or "?"
        return None

    def _handle_line(self, line: bytes) -> None:
        kind, raw = decode_watch_event(line)
        if kind == "BOOKMARK":
            self._rv = raw_resource_version(raw) or self._rv
            return
        if kind == "ERROR":
            raise error_for(500, bytes(raw))  # the Status' own code (410 -> Gone) wins
        if self.store.stores_raw:
            self._handle_raw(kind, bytes(raw))
            return
        try:
            obj = self.info.decode(raw)
        except Exception:
            log.exception("cannot decode %s watch event; skipped", self.info.kind)
            self._rv = raw_resource_version(raw) or self._rv
            return
        self.stats["events"] += 1
        key = objmeta.key(obj)
        if kind in ("ADDED", "MODIFIED"):
            old = self.store.put(key, obj)
            if old is None:
                self._dispatch_add(obj, False)
            else:
                self._dispatch_update(old, obj)
        elif kind == "DELETED":
            self.store.discard(key)
            self._dispatch_delete(obj, False)
        self._rv = objmeta.resource_version(obj) or self._rv

    def _handle_raw(self, kind: str, raw: bytes) -> None:
        """A watch event for a raw store: only the metadata is decoded here (rawobj.py)."""
        obj = RawObject(raw, self.info.decode)
        try:
            key, rv = obj.key, obj.meta.resourceVersion
            if self._typed_handlers or self.store.has_custom_index():
                obj.object  # noqa: B018  # they need it anyway: decode now, where a failure is caught
        except Exception:
            log.exception("cannot decode %s watch event; skipped", self.info.kind)
            with contextlib.suppress(Exception):
                self._rv = raw_resource_version(raw) or self._rv
            return
        self.stats["events"] += 1
        if kind in ("ADDED", "MODIFIED"):
            old = self.store.put_raw(obj)
            if old is None:
                self._dispatch_add(obj, False)
            else:
                self._dispatch_update(old, obj)
        elif kind == "DELETED":
            self.store.discard(key)
            self._dispatch_delete(obj, False)
        self._rv = rv or self._rv

    async def _resync_loop(self) -> None:
        assert self.resync_period
        while True:
            await asyncio.sleep(self.resync_period)
            if self._synced.is_set():
                for obj in self._snapshot():
                    self._dispatch_update(obj, obj)


class ServerWentBack(Exception):
    """The server's resourceVersion is below the one a silent watch waits at: it forgot its state."""


def _went_back(before: str | None, now: str | None) -> bool:
    """True when both versions are numbers and `now` is lower. Versions are opaque to clients, but
    every server we know (etcd, the emulator) counts up; a non-number compares as unknown."""
    if not before or not now or not before.isdigit() or not now.isdigit():
        return False
    return int(now) < int(before)


# "The established stream broke" (as opposed to errors the server sent): the runtime's client raises
# `http1.HTTPError`, a ConnectionError, for a reset, a truncated chunk or a server gone mid-stream.
_BROKEN_STREAM = (ConnectionError,)
