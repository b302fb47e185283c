"""A sharded manager in its own process: `python -m tests.runtime.shard_app KUBECONFIG LOG IDENTITY
[LEASE_DURATION RENEW_DEADLINE RETRY_PERIOD [RECONCILE REQUEUE]]` (seconds; 2, 1.5 and 0.2 by default,
each reconcile 0.03 s long and requeued after 0.3 s).

Its reconciler appends `<identity> start <key>` and `<identity> end <key>` to LOG around a short await
and requeues the key, so every key is reconciled over and over while replicas come and go. Every line
is one O_APPEND write: the file's order is the order the writes happened, across processes, which is
the logical order test_sharding_procs checks (no timing comparisons).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable

from pyscaffold_op.runtime import (
    Manager,
    ManagerOptions,
    Request,
    Result,
    ShardingOptions,
    load_config,
    setup_logging,
)
from tests.runtime.widgets import Widget


def logging_reconciler(
    log_path: str, identity: str, busy: float, requeue: float
) -> Callable[[Request], Awaitable[Result]]:
    """A reconciler writing `<identity> start|end <key>` lines to `log_path` around `busy` seconds."""
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    async def reconcile(req: Request) -> Result:
        key = f"{req.namespace}/{req.name}"
        os.write(fd, f"{identity} start {key}\n".encode())
        try:
            await asyncio.sleep(busy)
        finally:
            os.write(fd, f"{identity} end {key}\n".encode())
        return Result(requeue_after=requeue)

    return reconcile


def main() -> int:
    kubeconfig, log_path, identity = sys.argv[1], sys.argv[2], sys.argv[3]
    lease, deadline, retry = (float(a) for a in sys.argv[4:7]) if len(sys.argv) > 4 else (2.0, 1.5, 0.2)
    busy, requeue = (float(a) for a in sys.argv[7:9]) if len(sys.argv) > 7 else (0.03, 0.3)
    setup_logging("info", "json")
    reconcile = logging_reconciler(log_path, identity, busy, requeue)
    mgr = Manager(
        load_config(kubeconfig),
        ManagerOptions(
            metrics_bind_address="0",
            health_probe_bind_address="0",
            graceful_shutdown_timeout=10.0,
            sharding=ShardingOptions(
                name="shard-test",
                identity=identity,
                lease_duration=lease,
                renew_deadline=deadline,
                retry_period=retry,
            ),
        ),
    )
    mgr.builder().for_(Widget).complete(reconcile)
    asyncio.run(mgr.start())
    return 0


if __name__ == "__main__":
    sys.exit(main())
