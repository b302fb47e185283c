"""Lost leadership and shutdown edges: a manager stops reconciling at once when it loses its lease, a
drain that runs past its grace period is an error, and a hung webhook request is cut at the graceful
timeout (issue 28 item 4; the signal cases run a manager in a subprocess: tests/runtime/test_sigterm.py)."""

from __future__ import annotations

import asyncio
import ssl
from datetime import UTC, datetime
from typing import Any

import pytest
from runtime.widgets import Widget, widget  # `tests/` is on sys.path: the runtime tests are package `runtime`

from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.coordination_v1 import Lease
from pyscaffold_op.runtime import (
    Client,
    LeaderElectionLost,
    Manager,
    ManagerOptions,
    Request,
    ShutdownTimeout,
)
from pyscaffold_op.runtime.webhook import WebhookServer
from pyscaffold_op.testing import eventually


class Stuck:
    """A reconcile that never ends on its own; records that it started and that it was cancelled."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.cancelled: list[str] = []

    async def reconcile(self, request: Request) -> None:
        self.started.append(request.name)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.append(request.name)
            raise


async def test_a_leader_that_loses_its_lease_cancels_in_flight_reconciles_at_once(
    env: Environment, api: Client
) -> None:
    # Before: the manager drained for graceful_shutdown_timeout (30 s by default) while the next leader
    # could already reconcile the same keys: split brain for up to ~25 s.
    stuck = Stuck()
    mgr = Manager(
        env.config,
        ManagerOptions(
            health_probe_bind_address="0",
            leader_election=True,
            leader_election_id="lose-mid-reconcile",
            lease_duration=2.0,
            renew_deadline=0.6,
            retry_period=0.1,
            graceful_shutdown_timeout=60.0,  # a drain would outlive the test's bound below
        ),
    )
    mgr.builder().for_(Widget).complete(stuck)
    task = asyncio.create_task(mgr.start(install_signal_handlers=False))
    await asyncio.wait_for(mgr.elected.wait(), 10)
    await api.create(widget("busy"))
    await eventually(lambda: stuck.started == ["busy"])
    lease = await api.get(Lease, "lose-mid-reconcile", namespace="default")
    lease.spec.holder_identity = "next-leader"
    lease.spec.renew_time = datetime.now(UTC)
    await api.update(lease)  # renewals fail from now on, until the renew deadline passes
    with pytest.raises(LeaderElectionLost):
        await asyncio.wait_for(task, 20)  # far below the 60 s drain: the reconcile was cancelled
    assert stuck.cancelled == ["busy"]


async def test_a_drain_past_the_grace_period_cancels_and_is_an_error(env: Environment, api: Client) -> None:
    # Before: start() returned normally (exit 0) although reconciles were cut off.
    stuck = Stuck()
    mgr = Manager(env.config, ManagerOptions(health_probe_bind_address="0", graceful_shutdown_timeout=0.05))
    mgr.builder().for_(Widget).complete(stuck)
    with pytest.raises(ShutdownTimeout, match="graceful_shutdown_timeout"):
        async with mgr.running():
            await api.create(widget("busy"))
            await eventually(lambda: stuck.started == ["busy"])
    assert stuck.cancelled == ["busy"]
    assert mgr.transport.open_connections == 0  # connections closed all the same


class Hung:
    """A webhook endpoint that never answers; records that it was called and that it was cancelled."""

    def __init__(self) -> None:
        self.called = asyncio.Event()
        self.cancelled = False

    async def __call__(self, review: Any) -> dict[str, Any]:
        self.called.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return {}


async def _post_hung(server: WebhookServer, path: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A POST to `path` that the server starts to handle; the connection is returned unread."""
    assert server.address is not None and server.ca_bundle is not None
    ctx = ssl.create_default_context(cadata=server.ca_bundle.decode())
    reader, writer = await asyncio.open_connection("127.0.0.1", server.address[1], ssl=ctx)
    body = b'{"kind": "AdmissionReview"}'
    writer.write(
        b"POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (path.encode(), len(body), body)
    )
    await writer.drain()
    return reader, writer


async def test_a_hung_webhook_request_is_cut_at_the_servers_shutdown_timeout() -> None:
    # Before: stop() waited aiohttp's 60 s for the handler (issue 28 item 4).
    hung = Hung()
    server = WebhookServer(host="127.0.0.1", port=0, shutdown_timeout=0.2)
    server.register("/hang", hung)
    await server.start_serving()
    reader, writer = await _post_hung(server, "/hang")
    idle_reader, idle_writer = await _post_hung(server, "/missing")  # answered 404, then kept alive
    assert (await idle_reader.readline()).startswith(b"HTTP/1.1 404")
    await asyncio.wait_for(hung.called.wait(), 10)
    assert await asyncio.wait_for(server.stop(), 10) is False  # far below 60 s: the request was cut
    assert hung.cancelled and server.cut == 1
    assert await asyncio.wait_for(reader.read(), 10) == b""  # connection closed, no answer
    rest = await asyncio.wait_for(idle_reader.read(), 10)  # the idle one closed too (read to EOF)
    assert rest.endswith(b"404 page not found\n")
    for w in (writer, idle_writer):
        w.close()


async def test_a_manager_cuts_a_hung_webhook_request_at_its_graceful_timeout(env: Environment) -> None:
    # Before: one hung request kept a SIGTERMed manager alive 62 s, past its graceful timeout and the
    # Deployment's grace period, and start() then returned as if all was well.
    hung = Hung()
    mgr = Manager(
        env.config, ManagerOptions(health_probe_bind_address="127.0.0.1:0", graceful_shutdown_timeout=0.3)
    )
    mgr.webhook_server = WebhookServer(host="127.0.0.1", port=0)  # its own shutdown_timeout: 30 s
    mgr.webhook_server.register("/hang", hung)
    task = asyncio.create_task(mgr.start(install_signal_handlers=False))
    await asyncio.wait_for(mgr.elected.wait(), 10)
    reader, writer = await _post_hung(mgr.webhook_server, "/hang")
    await asyncio.wait_for(hung.called.wait(), 10)
    mgr.stop()
    with pytest.raises(
        ShutdownTimeout, match=r"in-flight webhook requests ran past graceful_shutdown_timeout \(0.3s\)"
    ):
        await asyncio.wait_for(task, 10)  # the 30 s of the server's own timeout did not apply
    assert hung.cancelled
    assert await asyncio.wait_for(reader.read(), 10) == b""
    writer.close()
    assert mgr.transport.open_connections == 0


async def test_a_webhook_request_that_ends_within_the_graceful_timeout_is_answered(env: Environment) -> None:
    release = asyncio.Event()
    called = asyncio.Event()

    async def slow(review: Any) -> dict[str, Any]:
        called.set()
        await release.wait()
        return {"ok": True}

    mgr = Manager(env.config, ManagerOptions(health_probe_bind_address="0", graceful_shutdown_timeout=30))
    mgr.webhook_server = WebhookServer(host="127.0.0.1", port=0)
    mgr.webhook_server.register("/slow", slow)
    task = asyncio.create_task(mgr.start(install_signal_handlers=False))
    await asyncio.wait_for(mgr.elected.wait(), 10)
    reader, writer = await _post_hung(mgr.webhook_server, "/slow")
    await asyncio.wait_for(called.wait(), 10)
    mgr.stop()
    await asyncio.sleep(0.05)  # the stop is under way; the request is still served
    release.set()
    await asyncio.wait_for(task, 10)  # no ShutdownTimeout: nothing was cut
    answer = await asyncio.wait_for(reader.read(), 10)
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b'{"ok": true}')
    writer.close()
