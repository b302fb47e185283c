"""A leader-elected manager in its own process: `python -m tests.runtime.leader_app KUBECONFIG LOG IDENTITY
LEASE_DURATION RENEW_DEADLINE RETRY_PERIOD RECONCILE REQUEUE` (seconds).

Its reconciler writes start/end lines to LOG as shard_app's does (one O_APPEND write each: the file's
order is the order of the writes across processes). Exits 0 after a graceful stop and 3 when it lost
the lease (`LeaderElectionLost`), where the generated `__main__` exits 1: the test tells the two apart.
"""

from __future__ import annotations

import asyncio
import sys

from pyscaffold_op.runtime import LeaderElectionLost, Manager, ManagerOptions, load_config, setup_logging
from tests.runtime.shard_app import logging_reconciler
from tests.runtime.widgets import Widget

LOST = 3


def main() -> int:
    kubeconfig, log_path, identity = sys.argv[1], sys.argv[2], sys.argv[3]
    lease, deadline, retry, busy, requeue = (float(a) for a in sys.argv[4:9])
    setup_logging("info", "json")
    mgr = Manager(
        load_config(kubeconfig),
        ManagerOptions(
            metrics_bind_address="0",
            health_probe_bind_address="0",
            graceful_shutdown_timeout=10.0,
            leader_election=True,
            leader_election_id="leader-test",
            leader_election_namespace="default",
            leader_identity=identity,
            lease_duration=lease,
            renew_deadline=deadline,
            retry_period=retry,
        ),
    )
    mgr.builder().for_(Widget).complete(logging_reconciler(log_path, identity, busy, requeue))
    try:
        asyncio.run(mgr.start())
    except LeaderElectionLost:
        return LOST
    return 0


if __name__ == "__main__":
    sys.exit(main())
