"""Lease-based leader election (client-go's leaderelection with a coordination.k8s.io/v1 Lease).

* A candidate may take the lease when it is free (no holder) or when the holder has not renewed it
  for `leaseDurationSeconds`, measured on *our* clock from when we last saw the record change (as
  client-go does, so clock skew between machines does not matter).
* The leader renews every `retry_period`; if it cannot renew within `renew_deadline`, it has lost the
  lease and must stop leading at once.
* On shutdown the leader releases the lease (clears holderIdentity, duration 1 s) so a standby takes
  over within one retry period instead of waiting out the lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import socket
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from pyscaffold_op.runtime.errors import AlreadyExists, ApiError, Conflict, NotFound

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
        self._observed: tuple[Any, ...] | None = None
        self._observed_at = 0.0
        if metrics is not None:
            metrics.leader.labels(name).set(0)

    @property
    def is_leader(self) -> bool:
        return self.elected.is_set() and not self.lost.is_set()

    def _jitter(self) -> float:
        return self.retry_period * (1 + random.random() * 0.2)

    async def run(self) -> None:
        """Acquire (sets `elected`), then renew until the lease is lost (sets `lost`, returns) or the task
        is cancelled (releases the lease, re-raises)."""
        try:
            # like client-go: say once that this replica waits, so a standby does not look stuck
            log.info(
                "attempting to acquire leader lease",
                extra={"lease": f"{self.namespace}/{self.name}", "identity": self.identity},
            )
            while not await self._try():  # noqa: ASYNC110 - polls the API server, nothing to wait on
                await asyncio.sleep(self._jitter())
            log.info(
                "became leader", extra={"lease": f"{self.namespace}/{self.name}", "identity": self.identity}
            )
            self._set_leader(True)
            self.elected.set()
            while True:
                await asyncio.sleep(self.retry_period)
                if not await self._renew_within_deadline():
                    log.error("leader election lost", extra={"lease": f"{self.namespace}/{self.name}"})
                    self._set_leader(False)
                    self.lost.set()
                    return
        except asyncio.CancelledError:
            if self.elected.is_set() and not self.lost.is_set():
                with contextlib.suppress(Exception):
                    await asyncio.shield(self.release())
            raise

    async def _renew_within_deadline(self) -> bool:
        deadline = time.monotonic() + self.renew_deadline
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                if await asyncio.wait_for(self._try(), remaining):
                    return True
            except TimeoutError:
                return False
            await asyncio.sleep(min(self.retry_period, max(0.0, deadline - time.monotonic())))
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
        from lightkube.models.coordination_v1 import LeaseSpec
        from lightkube.models.meta_v1 import ObjectMeta
        from lightkube.resources.coordination_v1 import Lease

        now = datetime.now(UTC)
        duration = max(1, round(self.lease_duration))
        try:
            lease = await self.client.get(Lease, self.name, namespace=self.namespace)
        except NotFound:
            lease = Lease(
                metadata=ObjectMeta(name=self.name, namespace=self.namespace),
                spec=LeaseSpec(
                    holderIdentity=self.identity,
                    leaseDurationSeconds=duration,
                    acquireTime=now,
                    renewTime=now,
                    leaseTransitions=0,
                ),
            )
            await self.client.create(lease)
            self._observe(lease.spec)
            return True
        spec = lease.spec or LeaseSpec()
        self._observe(spec)
        holder = spec.holderIdentity or ""
        if holder and holder != self.identity:
            held_for = spec.leaseDurationSeconds or duration
            if self._observed_at + held_for > time.monotonic():
                return False  # someone else holds a live lease
        if holder == self.identity:
            acquire, transitions = spec.acquireTime or now, spec.leaseTransitions or 0
        else:
            acquire, transitions = now, (spec.leaseTransitions or 0) + 1
        lease.spec = LeaseSpec(
            holderIdentity=self.identity,
            leaseDurationSeconds=duration,
            acquireTime=acquire,
            renewTime=now,
            leaseTransitions=transitions,
        )
        await self.client.update(lease)  # Conflict if another candidate wrote first: we lose this round
        self._observe(lease.spec)
        return True

    def _observe(self, spec: Any) -> None:
        record = (spec.holderIdentity, spec.renewTime, spec.acquireTime, spec.leaseTransitions)
        if record != self._observed:
            self._observed, self._observed_at = record, time.monotonic()

    async def release(self) -> bool:
        """Give the lease up if we hold it: holderIdentity cleared, so the next candidate need not wait."""
        from lightkube.models.coordination_v1 import LeaseSpec
        from lightkube.resources.coordination_v1 import Lease

        try:
            lease = await self.client.get(Lease, self.name, namespace=self.namespace)
            if lease.spec is None or lease.spec.holderIdentity != self.identity:
                return False
            now = datetime.now(UTC)
            lease.spec = LeaseSpec(
                holderIdentity=None,
                leaseDurationSeconds=1,
                acquireTime=now,
                renewTime=now,
                leaseTransitions=lease.spec.leaseTransitions,
            )
            await self.client.update(lease)
            log.info("released leader lease", extra={"lease": f"{self.namespace}/{self.name}"})
            return True
        except Exception as err:
            log.warning("could not release lease %s/%s: %s", self.namespace, self.name, err)
            return False
        finally:
            self._set_leader(False)
