"""kopf's examples/15-timers on pyop: two timers per KopfExample that wait for the object to be quiet
(`idle`) and then ping on an `interval`, as `@kopf.timer(idle=, interval=)`.

    python examples/kopf/timers.py --kubeconfig ~/.kube/config
"""

from __future__ import annotations

import logging
import sys

from kopfexample import KopfExample

from pyscaffold_op.runtime import DaemonContext, Manager, ManagerFlags, run_manager

log = logging.getLogger("timers")


def every_few_seconds_sync(ctx: DaemonContext) -> None:  # a plain def: runs on a thread
    log.info("Ping from a sync timer: field=%r", ctx.object.spec.field)


async def every_few_seconds_async(ctx: DaemonContext) -> None:
    log.info("Ping from an async timer: field=%r", ctx.object.spec.field)


def setup(mgr: Manager, flags: ManagerFlags | None = None) -> None:
    mgr.builder().for_(KopfExample).named("kopfexample-timers").timer(
        every_few_seconds_sync, idle=5, interval=2
    ).timer(every_few_seconds_async, idle=10, interval=4).complete()


if __name__ == "__main__":
    sys.exit(run_manager(setup, prog="timers", leader_election_id="timers.kopf.dev"))
