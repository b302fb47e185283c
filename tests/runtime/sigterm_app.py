"""A manager in its own process for the SIGTERM test: `python -m tests.runtime.sigterm_app KUBECONFIG DIR
[hung-webhook]`.

Its reconciler writes DIR/started, works until the process gets SIGUSR1, then writes DIR/finished, so
the test decides when the in-flight reconcile ends instead of guessing how long a drain takes. With
`hung-webhook` it also serves a webhook at /hang that never answers (DIR/webhook holds its port and
DIR/ca.crt its CA; DIR/hung is written when a request arrives), with a 1 s graceful timeout.
Like a generated main, a ShutdownTimeout or a lost lease is one log line and exit status 1.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from pathlib import Path

from pyscaffold_op.runtime import (
    LeaderElectionLost,
    Manager,
    ManagerOptions,
    Request,
    ShutdownTimeout,
    load_config,
    setup_logging,
)
from pyscaffold_op.runtime.webhook import WebhookServer
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


class Hang:
    def __init__(self, out: Path) -> None:
        self.out = out

    async def __call__(self, review: object) -> dict[str, object]:
        (self.out / "hung").write_text("1")
        await asyncio.Event().wait()
        return {}


async def serve(mgr: Manager, out: Path, hung_webhook: bool) -> None:
    async def written() -> None:
        await mgr.elected.wait()
        server = mgr.webhook_server
        assert server.address is not None and server.ca_bundle is not None
        server.write_ca_bundle(out / "ca.crt")
        (out / "webhook").write_text(str(server.address[1]))

    if hung_webhook:
        written_task = asyncio.get_running_loop().create_task(written())
    await mgr.start()
    if hung_webhook:
        await written_task


def main() -> int:
    kubeconfig, out = sys.argv[1], Path(sys.argv[2])
    hung_webhook = sys.argv[3:] == ["hung-webhook"]
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
            graceful_shutdown_timeout=1.0 if hung_webhook else 10.0,
        ),
    )
    mgr.builder().for_(Widget).complete(SlowReconciler(out))
    if hung_webhook:
        mgr.webhook_server = WebhookServer(host="127.0.0.1", port=0)
        mgr.webhook_server.register("/hang", Hang(out))
    try:
        asyncio.run(serve(mgr, out, hung_webhook))
    except (LeaderElectionLost, ShutdownTimeout) as err:
        logging.getLogger("sigterm_app").error("problem running manager: %s", err)
        return 1
    (out / "exited").write_text("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
