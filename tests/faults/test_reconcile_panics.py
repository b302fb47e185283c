"""Issue 28 item 1 against a real manager: reconciles that raise a CancelledError of their own,
SystemExit, KeyboardInterrupt or an exception whose __str__ raises kill no worker and not the manager;
every object still gets reconciled, and the panics are counted as controller-runtime counts them."""

from __future__ import annotations

import asyncio

from runtime.widgets import Widget, widget  # `tests/` is on sys.path: the runtime tests are `runtime`

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Client, Manager, ManagerOptions, Request
from pyscaffold_op.testing import eventually


class BadStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")


FAULTS: list[BaseException] = [asyncio.CancelledError(), SystemExit(0), KeyboardInterrupt(), BadStr()]


async def test_twenty_faulty_reconciles_leave_every_worker_alive(env: Environment, api: Client) -> None:
    attempts: dict[str, int] = {}

    async def reconcile(req: Request) -> None:
        n = attempts[req.name] = attempts.get(req.name, 0) + 1
        if req.name.startswith("bad") and n == 1:
            raise FAULTS[int(req.name[3:]) % len(FAULTS)]

    mgr = Manager(env.config, ManagerOptions(health_probe_bind_address="0", metrics_bind_address="0"))
    ctrl = mgr.builder().for_(Widget).named("widgets").complete(reconcile)
    async with mgr.running():
        for i in range(20):  # more than the 8 workers: each fault used to kill one
            await api.create(widget(f"bad{i}"))
        # every faulty key is retried with backoff, and passes the second time
        await eventually(lambda: all(attempts.get(f"bad{i}", 0) >= 2 for i in range(20)), timeout=30)
        await api.create(widget("good"))
        await eventually(lambda: attempts.get("good") == 1, timeout=30)
        assert all(not w.done() for w in ctrl._workers) and len(ctrl._workers) == 8

        def value(name: str) -> float:
            return mgr.metrics.value(name, {"controller": "widgets"})

        assert value("controller_runtime_reconcile_panics_total") == 15  # BadStr is an error, not a panic
        assert value("controller_runtime_reconcile_errors_total") == 20
