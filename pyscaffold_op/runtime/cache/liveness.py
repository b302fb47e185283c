"""Watch liveness: noticing a watch whose connection carries nothing any more, and a server that forgot.

A watch is a long HTTP/1.1 response. When the path under it stops carrying bytes but stays open (a
frozen proxy, a NAT or load balancer that dropped its state, a half-open TCP connection), nothing tells
the reader: it waits for ever and the cache is silently stale. client-go notices through HTTP/2: after
30 s without a frame it pings the connection (`ReadIdleTimeout`) and closes it when no answer comes in
15 s (`PingTimeout`). An HTTP/1.1 response cannot be pinged, and silence alone proves nothing: the real
kube-apiserver sends a bookmark to an idle watch only about once a minute, and only when its watch
cache moved past the watch's version (measured on v1.37.2: the first one 120 s after the watch began).
So a silent watch is judged by asking the server:

1. after `probe_after` seconds without a byte, list the kind with `limit=1` (a consistent read: it
   gives the server's current resourceVersion, and makes the real server's watch cache catch up);
2. a version *below* the watch's means the server forgot (etcd wiped or restored from a backup, or a
   fresh emulator): the informer relists and the diff deletes what the new server does not have;
3. the same version: nothing happened that the watch could have missed; it is left alone;
4. a newer one: a second, one-second watch from the same version shows whether anything of this kind
   changed since; a change the live watch has not delivered `catch_up` seconds later means it is dead:
   it is closed and the informer re-watches from its last version (no relist);
5. a probe that gets no answer within `probe_timeout` means the path to the server is dead too: the
   watch is closed (the re-watch backs off if the server stays unreachable).

A watch opened after the previous one broke or failed (the server went away: it may come back with
older state) is probed at once, before a restarted server's own writes carry its versions past the
watch's (a fresh kube-apiserver writes ~200 objects at start) and the comparison can no longer tell.

A healthy idle watch is never cut: it has missed nothing, so step 4 finds nothing. Every watch also
asks the server to end it after `timeoutSeconds` drawn from [min_watch_timeout, 2 * min_watch_timeout)
(client-go's reflector: 5 to 10 minutes), and one the server has not ended `probe_after` seconds past
that is closed, so no watch lives for ever whatever the probes say.

Per event it costs one integer increment: the transport counts the pieces of body it receives
(`LineStream`), and a timer per watch compares the count every `probe_after / 6` seconds (no clock
read, no syscall per event; ~900 ns a line through `LineStream` either way, within the noise).
"""

from __future__ import annotations

import asyncio
import enum
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pyscaffold_op.clock import Clock, Timer

# client-go's figures (k8s.io/apimachinery util/net: HTTP/2 ReadIdleTimeout and PingTimeout; the
# reflector's defaultMinWatchTimeout)
READ_IDLE_TIMEOUT = 30.0
PING_TIMEOUT = 15.0
MIN_WATCH_TIMEOUT = 300.0
_TICKS = 6  # silence is checked this many times per probe_after


@dataclass(frozen=True, kw_only=True)
class WatchLiveness:
    """How informers judge a silent watch (see the module's description; docs/runtime.md, "Recovery
    guarantees"). With the defaults an object created after the connection under a watch froze is in
    the cache within 50 s (probe_after + one check interval + probe_timeout), 32-37 s when the
    server answers the probe."""

    probe_after: float = READ_IDLE_TIMEOUT
    """Seconds without a byte on a watch before the server is asked whether it missed anything."""
    probe_timeout: float = PING_TIMEOUT
    """Seconds a probe may take; past them the watch is closed as dead."""
    catch_up: float = 1.0
    """Seconds the live watch gets to deliver a change a probe saw (both may be in flight at once)."""
    min_watch_timeout: float = MIN_WATCH_TIMEOUT
    """Each watch asks the server to end it after a random timeoutSeconds in [this, twice this)."""

    def __post_init__(self) -> None:
        for name in ("probe_after", "probe_timeout", "catch_up", "min_watch_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"WatchLiveness.{name} must be positive, not {getattr(self, name)!r}")

    def watch_timeout(self, draw: Callable[[], float] = random.random) -> int:
        """A watch's timeoutSeconds: minWatchTimeout * (1 + rand), as the reflector draws it."""
        return max(1, int(self.min_watch_timeout * (1 + draw())))

    @property
    def bound(self) -> float:
        """The longest a change can wait behind a frozen watch before the informer re-watches."""
        return self.probe_after * (1 + 1 / _TICKS) + self.probe_timeout


class Verdict(enum.Enum):
    """What a probe concluded about a silent watch."""

    ALIVE = "alive"  # nothing missed (or the probe proved nothing): leave the watch alone
    DEAD = "dead"  # a change went undelivered, or the server could not be reached: re-watch
    RESET = "reset"  # the server's resourceVersion is below the watch's: it forgot; relist


@dataclass(frozen=True)
class Finding:
    verdict: Verdict
    why: str


ALIVE = Finding(Verdict.ALIVE, "")


class WatchMonitor:
    """One watch's silence timer and probes. `received()` counts what the connection carried;
    `probe()` asks the server (runs on the event loop); `cut()` ends the watch's reading. After a
    cut, `finding` says why."""

    def __init__(
        self,
        liveness: WatchLiveness,
        clock: Clock,
        received: Callable[[], int],
        probe: Callable[[], Awaitable[Finding]],
        lifetime: float,
    ) -> None:
        self.liveness, self.clock = liveness, clock
        self._received, self._probe = received, probe
        self._lifetime = lifetime
        self.finding: Finding | None = None
        self._cut: Callable[[], None] | None = None
        self._tick_timer: Timer | None = None
        self._end_timer: Timer | None = None
        self._task: asyncio.Task[None] | None = None
        self._seen = 0
        self._quiet_since = 0.0

    @property
    def probing(self) -> bool:
        return self._task is not None

    def start(self, cut: Callable[[], None], *, probe_now: bool = False) -> None:
        """Watch the silence; `probe_now`: ask the server at once (a watch re-opened after the last one
        broke: the server may have restarted with older state)."""
        self._cut = cut
        self._seen = self._received()
        self._quiet_since = self.clock.monotonic()
        self._tick_later()
        # the server ends the watch after `lifetime`; still reading well past it, the connection is dead
        deadline = self._lifetime + self.liveness.probe_after
        why = f"the server did not end the watch after its timeoutSeconds ({self._lifetime:g}s)"
        self._end_timer = self.clock.call_later(deadline, lambda: self._end(Finding(Verdict.DEAD, why)))
        if probe_now:
            self._task = asyncio.get_running_loop().create_task(self._run_probe())

    def stop(self) -> None:
        self._cut = None
        for timer in (self._tick_timer, self._end_timer):
            if timer is not None:
                timer.cancel()
        self._tick_timer = self._end_timer = None
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def _tick_later(self) -> None:
        self._tick_timer = self.clock.call_later(self.liveness.probe_after / _TICKS, self._tick)

    def _tick(self) -> None:
        if self._cut is None:
            return
        now = self.clock.monotonic()
        count = self._received()
        if count != self._seen:
            self._seen, self._quiet_since = count, now
        elif now - self._quiet_since >= self.liveness.probe_after and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run_probe())
        self._tick_later()

    async def _run_probe(self) -> None:
        before = self._received()
        try:
            finding = await self._probe()
        finally:
            self._task = None
            self._quiet_since = self.clock.monotonic()  # the next probe after another quiet spell
        if finding.verdict is Verdict.DEAD and self._received() != before:
            return  # bytes came while we asked: the connection is alive after all
        if finding.verdict is not Verdict.ALIVE:
            self._end(finding)

    def _end(self, finding: Finding) -> None:
        cut, self._cut = self._cut, None
        if cut is not None:
            self.finding = finding
            cut()
