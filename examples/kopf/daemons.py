"""kopf's examples/14-daemons on pyop: two daemons per KopfExample, on the leader only.

* `background_checked` is kopf's sync daemon: it looks at `ctx.stopped` itself, fails its first
  three calls (restarted after `backoff` seconds, `ctx.attempt` counting them, as kopf's `retry`),
  then pings every 5 s for 30 s and reports in status.message. Its finalizer keeps a deleted object
  until it has reported (kopf puts one on every object with daemons).
* `background_async` relies on cancellation instead: `grace_period` is kopf's `cancellation_backoff`,
  `cancellation_timeout` the same name; it runs only for objects annotated someannotation=somevalue.

    python examples/kopf/daemons.py --kubeconfig ~/.kube/config
"""

from __future__ import annotations

import asyncio
import logging
import sys

from kopfexample import KopfExample

from pyscaffold_op.runtime import Client, DaemonContext, Manager, ManagerFlags, run_manager

log = logging.getLogger("daemons")
PING = 5.0  # seconds between pings
LIFETIME = 30.0  # how long the checked daemon accompanies its object


class Daemons:
    def __init__(self, client: Client) -> None:
        self.client = client

    async def background_checked(self, ctx: DaemonContext) -> None:
        if ctx.attempt < 3:
            await self.report(ctx, f"Failed {ctx.attempt + 1} times.")
            raise RuntimeError("Simulated failure.")
        lived = 0.0
        while not ctx.stopped and lived <= LIFETIME:
            log.info("=> Ping from a checked daemon: field=%r, retry=%d", ctx.object.spec.field, ctx.attempt)
            await ctx.sleep(PING)
            lived += PING
        await self.report(ctx, "Accompanying is finished.")

    async def background_async(self, ctx: DaemonContext) -> None:
        if ctx.attempt < 3:
            raise RuntimeError("Simulated failure.")
        while True:  # until cancelled: the stop cancels it after its grace period
            log.info("=> Ping from an async daemon: field=%r", ctx.object.spec.field)
            await asyncio.sleep(PING)

    async def report(self, ctx: DaemonContext, message: str) -> None:
        patch = {"status": {"message": message}}
        await self.client.status().patch(KopfExample, ctx.name, patch, namespace=ctx.namespace)


def setup(mgr: Manager, flags: ManagerFlags | None = None) -> None:
    daemons = Daemons(mgr.client)
    mgr.builder().for_(KopfExample).named("kopfexample-daemons").daemon(
        daemons.background_checked, backoff=1, finalizer="kopf.dev/daemons"
    ).daemon(
        daemons.background_async,
        backoff=1,
        grace_period=1.0,
        cancellation_timeout=0.5,
        annotations={"someannotation": "somevalue"},
    ).complete()


if __name__ == "__main__":
    sys.exit(run_manager(setup, prog="daemons", leader_election_id="daemons.kopf.dev"))
