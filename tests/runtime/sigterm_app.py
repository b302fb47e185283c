"""A manager in its own process for the SIGTERM test: `python -m tests.runtime.sigterm_app KUBECONFIG DIR`.

Its reconciler writes DIR/started, works until the process gets SIGUSR1, then writes DIR/finished, so
the test decides when the in-flight reconcile ends instead of guessing how long a drain takes.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from pyscaffold_op.runtime import Manager, ManagerOptions, Request, load_config, setup_logging
from tests.runtime.widgets import Widget


class SlowReconciler:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.release: asyncio.Event | None = None

    async def reconcile(self, request: Request) -> None:
        if self.release is None:
            self.release = asyncio.Event()
            asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, self.release.set)
        (self.out / "started").write_text(str(request))
        await self.release.wait()
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
