"""A manager in its own process for the SIGTERM test: `python -m tests.runtime.sigterm_app KUBECONFIG DIR`.

Its reconciler writes DIR/started, works for a second, then writes DIR/finished.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from pyscaffold_op.runtime import Manager, ManagerOptions, Request, load_config, setup_logging
from tests.runtime.widgets import Widget


class SlowReconciler:
    def __init__(self, out: Path) -> None:
        self.out = out

    async def reconcile(self, request: Request) -> None:
        (self.out / "started").write_text(str(request))
        await asyncio.sleep(1.0)
        (self.out / "finished").write_text(str(request))


def main() -> int:
    kubeconfig, out = sys.argv[1], Path(sys.argv[2])
    setup_logging("info", "json")
    mgr = Manager(
        load_config(kubeconfig),
        ManagerOptions(
            metrics_bind_address="0",
            health_probe_bind_address="127.0.0.1:0",
            leader_election=True,
            leader_election_id="sigterm-test",
            lease_duration=3.0,
            renew_deadline=2.0,
            retry_period=0.2,
            graceful_shutdown_timeout=10.0,
        ),
    )
    mgr.builder().for_(Widget).complete(SlowReconciler(out))
    asyncio.run(mgr.start())
    (out / "exited").write_text("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
