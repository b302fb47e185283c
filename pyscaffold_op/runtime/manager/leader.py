"""Lease-based leader election (client-go's leaderelection with a coordination.k8s.io/v1 Lease).

* A candidate may take the lease when it is free (no holder) or when the holder has not renewed it
  for `lease_duration_seconds`, measured on *our* clock from when we last saw the record change (as
  client-go does, so clock skew between machines does not matter).
* The leader renews every `retry_period`; if it cannot renew within `renew_deadline`, it has lost the
  lease and must stop leading at once.
* Fencing by age (`holds()`, better than client-go): the leader's controllers start no reconcile once
  its last successful renewal is older than `renew_deadline` on its own monotonic clock
  (`fence.RenewalAge`), which a process that was paused (SIGSTOP, a frozen VM, a blocked loop) sees
  the moment it runs again, before its renew loop has a turn. The next renewal decides: the Lease
  still names us, so nobody led meanwhile (only we write our identity, and a leader never re-acquires)
  and work resumes; or it names another holder, or none, and leadership is lost at once (`lost`: the
  manager stops, exit non-zero) instead of after retrying for `renew_deadline` as client-go does.
* On shutdown the leader releases the lease (clears holder_identity, duration 1 s) so a standby takes
  over within one retry period instead of waiting out the lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import socket
import uuid
from typing import Any

from pyscaffold_op.runtime.client.errors import AlreadyExists, ApiError, Conflict, NotFound
from pyscaffold_op.runtime.clock import REAL_CLOCK, Clock
from pyscaffold_op.runtime.manager.fence import RenewalAge

log = logging.getLogger("pyscaffold_op.runtime.leader")


def default_identity() -> str:
    return f"{socket.gethostname()}_{uuid.uuid4()}"


class LeaderElector:
    def __init__(
        self,
        client: Any,
        name: str,
        namespace: str,
        *,
        identity: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        metrics: Any = None,
        clock: Clock | None = None,
    ) -> None:
        if not lease_duration > renew_deadline > retry_period > 0:
            raise ValueError("need lease_duration > renew_deadline > retry_period > 0")
        self.client, self.name, self.namespace = client, name, namespace
        self.identity = identity or default_identity()
        self.lease_duration, self.renew_deadline, self.retry_period = (
            lease_duration,
            renew_deadline,
            retry_period,
        )
        self.metrics = metrics
        self.elected = asyncio.Event()
        self.lost = asyncio.Event()
        self.clock = clock or REAL_CLOCK
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._leading = False
        self._released = False
        self._observed: tuple[Any, ...] | None = None
        self._observed_at = 0.0
        self.renewal = RenewalAge(self.clock, renew_deadline)  # our lease's age, on our clock
        self._superseded = ""  # the holder (or "nobody") a renewal found in our place while leading
        self._settled = asyncio.Event()  # set and replaced on each renewal and on loss: wakes waiters
        self._warned_expired = False
        if metrics is not None:
            metrics.leader.labels(name).set(0)

    @property
    def is_leader(self) -> bool:
        return self._leading

    def holds(self) -> bool:
        """True while this replica leads and its last successful renewal was sent within
        `renew_deadline` on its own clock: a leader-elected controller may start a reconcile now."""
        if self._leading and self.renewal.fresh():
            return True
        if self._leading and not self._warned_expired:
            self._warned_expired = True
            log.warning(
                "leader lease not renewed for %.1fs, more than renew_deadline: starting no reconcile "
                "until a renewal finds the lease still ours",
                self.renewal.age() or 0.0,
                extra={"lease": self._lease, "identity": self.identity},
            )
        return False

    async def wait_holds(self) -> bool:
        """Wait until `holds()`; False once leadership is lost or the elector stops instead."""
        while not self.holds():
            if self.lost.is_set() or self._stopping or not self._leading:
                return False
            await self._settled.wait()
        return True

    def _settle(self) -> None:
        """A renewal succeeded or leadership was lost: wake whoever waits in `wait_holds()`."""
        event, self._settled = self._settled, asyncio.Event()
        event.set()

    def get_leader(self) -> str:
        """The holder this candidate last saw on the lease ("" if none yet): client-go's GetLeader."""
        return (self._observed[0] if self._observed else None) or ""

    def _jitter(self) -> float:
        return self.retry_period * (1 + random.random() * 0.2)

    def start(self) -> asyncio.Task[None]:
        """Campaign in a background task (`run`); `stop()` ends it."""
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name=f"leader election {self.name}")
        return self._task

    async def run(self) -> None:
        """Acquire (sets `elected`), then renew until the lease is lost (sets `lost`), `stop()` is called or
        the task is cancelled; a cancelled leader releases the lease (client-go's ReleaseOnCancel)."""
        try:
            await self._campaign()
        except asyncio.CancelledError:
            self._stopping = True
            if self._leading:
                with contextlib.suppress(Exception):
                    await asyncio.shield(self._release_within(self.renew_deadline))
            raise

    async def _campaign(self) -> None:
        log.info(  # like client-go: say once that this replica waits, so a standby does not look stuck
            "attempting to acquire leader lease",
            extra={"lease": f"{self.namespace}/{self.name}", "identity": self.identity},
        )
        # `_stopping` is checked after every await: the loop ends even if a cancellation was swallowed
        # below it (Python 3.11's asyncio.wait_for drops one that lands as the awaited call finishes).
        while not await self._try():
            if self._stopping:
                return
            await self.clock.sleep(self._jitter())
            if self._stopping:
                return
        if self._stopping:
            return
        log.info("became leader", extra={"lease": f"{self.namespace}/{self.name}", "identity": self.identity})
        self._leading = True
        self._set_leader(True)
        self.elected.set()
        while True:
            await self.clock.sleep(self.retry_period)
            if self._stopping:
                return
            renewed = await self._renew_within_deadline()
            if self._stopping:
                return
            if not renewed:
                if self._superseded:
                    log.error(
                        "leader election lost: the lease names another holder",
                        extra={"lease": self._lease, "holder": self._superseded},
                    )
                else:
                    log.error("leader election lost", extra={"lease": self._lease})
                self._leading = False
                self.renewal.forget()
                self._set_leader(False)
                self.lost.set()
                self._settle()
                return
            if self._warned_expired:
                log.info("leader lease renewed: still ours, reconciling again", extra={"lease": self._lease})
                self._warned_expired = False

    async def stop(self, timeout: float = 5.0) -> bool:  # noqa: ASYNC109
        """Stop campaigning and, if leading, release the lease; never takes longer than `timeout`
        (real seconds), whatever the API server does. True when the lease was released."""
        self._stopping = True
        self._settle()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        task, self._task = self._task, None
        if task is not None:
            if not task.done():
                task.cancel()  # interrupts a request in flight; run() releases on the way out
                await asyncio.wait([task], timeout=timeout)
            if not task.done():
                log.warning("leader election did not stop in %.1fs", timeout, extra={"lease": self._lease})
            elif not task.cancelled() and task.exception() is not None:
                log.error("leader election failed", exc_info=task.exception(), extra={"lease": self._lease})
        if self._leading:  # the loop ended without releasing (it returned, or ignored the cancel)
            await self._release_within(max(0.0, deadline - loop.time()))
        self._set_leader(False)
        return self._released

    async def _release_within(self, seconds: float) -> None:
        try:
            async with asyncio.timeout(seconds):
                await self.release()
        except TimeoutError:
            log.warning("could not release the lease in %.1fs", seconds, extra={"lease": self._lease})

    @property
    def _lease(self) -> str:
        return f"{self.namespace}/{self.name}"

    async def _renew_within_deadline(self) -> bool:
        """Retry the renewal until it succeeds or `renew_deadline` has passed with two attempts failed:
        one attempt that outlived the whole deadline was caught in flight by a pause (SIGSTOP, a
        blocked loop) and fails by its own timeout as the process wakes, which says nothing about the
        server; the fence (`holds()`) keeps reconciles stopped meanwhile. False at once when the lease
        names another holder."""
        deadline = self.clock.monotonic() + self.renew_deadline
        failures = 0
        while not self._stopping:
            remaining = deadline - self.clock.monotonic()
            if remaining <= 0:
                if failures >= 2:
                    return False
                deadline, remaining = self.clock.monotonic() + self.renew_deadline, self.renew_deadline
            try:
                async with self.clock.timeout(remaining):
                    if await self._try():
                        return True
            except TimeoutError:
                pass
            failures += 1
            if self._superseded:
                return False  # someone else leads (or released it): retrying cannot make it ours again
            await self.clock.sleep(min(self.retry_period, max(0.0, deadline - self.clock.monotonic())))
        return False

    def _set_leader(self, value: bool) -> None:
        if self.metrics is not None:
            self.metrics.leader.labels(self.name).set(1 if value else 0)

    async def _try(self) -> bool:
        """One tryAcquireOrRenew; False on any failure (it is simply retried)."""
        try:
            return await self._try_acquire_or_renew()
        except (Conflict, AlreadyExists):
            return False
        except ApiError as err:
            log.warning("lease %s/%s: %s", self.namespace, self.name, err)
            return False
        except Exception as err:  # network errors: keep trying until the deadline
            log.warning("lease %s/%s: %r", self.namespace, self.name, err)
            return False

    async def _try_acquire_or_renew(self) -> bool:
        from pyscaffold_op.apimachinery import ObjectMeta
        from pyscaffold_op.models.coordination_v1 import Lease, LeaseSpec

        now = self.clock.now()
        sent = self.renewal.sending()
        duration = max(1, round(self.lease_duration))
        try:
            lease = await self.client.get(Lease, self.name, namespace=self.namespace)
        except NotFound:
            if self._leading:  # deleted under us: someone may have created it since and lead
                self._superseded = "nobody (the lease was deleted)"
                return False
            lease = Lease(
                metadata=ObjectMeta(name=self.name, namespace=self.namespace),
                spec=LeaseSpec(
                    holder_identity=self.identity,
                    lease_duration_seconds=duration,
                    acquire_time=now,
                    renew_time=now,
                    lease_transitions=0,
                ),
            )
            await self.client.create(lease)
            self._observe(lease.spec)
            self._renewed(sent)
            return True
        spec = lease.spec or LeaseSpec()
        self._observe(spec)
        holder = spec.holder_identity or ""
        if self._leading and holder != self.identity:
            # Only we write our identity, and a leader never re-acquires: the lease passed to another
            # (or was released by one) while we could not renew. Lost, whatever its age.
            self._superseded = holder or "nobody (the lease was released)"
            return False
        if holder and holder != self.identity:
            held_for = spec.lease_duration_seconds or duration
            if self._observed_at + held_for > self.clock.monotonic():
                return False  # someone else holds a live lease
        if holder == self.identity:
            acquire, transitions = spec.acquire_time or now, spec.lease_transitions or 0
        else:
            acquire, transitions = now, (spec.lease_transitions or 0) + 1
        lease.spec = LeaseSpec(
            holder_identity=self.identity,
            lease_duration_seconds=duration,
            acquire_time=acquire,
            renew_time=now,
            lease_transitions=transitions,
        )
        await self.client.update(lease)  # Conflict if another candidate wrote first: we lose this round
        self._observe(lease.spec)
        self._renewed(sent)
        return True

    def _renewed(self, sent: float) -> None:
        self.renewal.renewed(sent)
        self._settle()

    def _observe(self, spec: Any) -> None:
        record = (spec.holder_identity, spec.renew_time, spec.acquire_time, spec.lease_transitions)
        if record != self._observed:
            self._observed, self._observed_at = record, self.clock.monotonic()

    async def release(self) -> bool:
        """Give the lease up if we hold it: holder_identity cleared, so the next candidate need not wait."""
        from pyscaffold_op.models.coordination_v1 import Lease, LeaseSpec

        try:
            lease = await self.client.get(Lease, self.name, namespace=self.namespace)
            if lease.spec is None or lease.spec.holder_identity != self.identity:
                return False
            now = self.clock.now()
            lease.spec = LeaseSpec(
                holder_identity=None,
                lease_duration_seconds=1,
                acquire_time=now,
                renew_time=now,
                lease_transitions=lease.spec.lease_transitions,
            )
            await self.client.update(lease)
            self._leading, self._released = False, True
            self.renewal.forget()
            self._settle()
            log.info("released leader lease", extra={"lease": f"{self.namespace}/{self.name}"})
            return True
        except Exception as err:
            log.warning("could not release lease %s/%s: %s", self.namespace, self.name, err)
            return False
        finally:
            self._set_leader(False)
