"""An API server that restarts with fresh state (its resourceVersions start again low)."""

from __future__ import annotations

import pytest
from runtime.widgets import Widget, widget  # `tests/` is on sys.path: the runtime tests are `runtime`

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Manager, ManagerOptions, Request, new_client
from pyscaffold_op.runtime.cache.informer import _went_back
from pyscaffold_op.testing import eventually

from .conftest import RUNTIME_CRDS as CRDS


async def test_the_emulator_answers_a_watch_from_the_future_like_the_watch_cache(env: Environment) -> None:
    import httpx2 as httpx

    async with httpx.AsyncClient(base_url=env.url) as http:
        path = "/apis/test.pyop.io/v1/namespaces/default/widgets"
        resp = await http.get(path, params={"watch": "true", "resourceVersion": "999999"})
    assert resp.status_code == 200
    event = resp.json()
    assert event["type"] == "ERROR"
    status = event["object"]
    assert (status["code"], status["reason"]) == (504, "Timeout")
    assert status["message"].startswith("Timeout: Too large resource version: 999999, current: ")
    assert status["details"]["causes"] == [
        {"type": "ResourceVersionTooLarge", "message": "Too large resource version"}
    ]


async def test_after_a_restart_with_fresh_state_the_informer_relists_and_converges() -> None:
    # Before: the informer resumed the watch from its old, higher resourceVersion and never relisted;
    # an object created on the new server was never reconciled and old objects stayed cached for ever.
    seen: list[str] = []

    async def reconcile(req: Request) -> None:
        seen.append(req.name)

    old = Environment(crd_paths=[CRDS], kubelet=None, bookmark_interval=0.2)
    await old.start()
    port = old.port
    api = new_client(old.config)
    try:
        for i in range(5):
            await api.create(widget(f"old{i}"))
    finally:
        await api.close()
    mgr = Manager(old.config, ManagerOptions(health_probe_bind_address="0"))
    mgr.builder().for_(Widget).complete(reconcile)
    fresh: Environment | None = None
    try:
        async with mgr.running():
            await eventually(lambda: sorted(seen) == [f"old{i}" for i in range(5)])
            await old.astop()
            fresh = Environment(crd_paths=[CRDS], kubelet=None, bookmark_interval=0.2, port=port)
            await fresh.start()  # same address and credentials, nothing stored, versions start again
            api = new_client(fresh.config)
            try:
                await api.create(widget("new"))
            finally:
                await api.close()
            await eventually(lambda: "new" in seen, timeout=20)

            async def cache_is_the_new_servers() -> list[str]:
                return [w.metadata.name for w in await mgr.client.list(Widget)] == ["new"]

            await eventually(cache_is_the_new_servers, timeout=20)
        informer = mgr.cache.get_informer(Widget)
        assert informer.stats["relists_on_too_large"] >= 1 and informer.stats["server_resets"] == 1
    finally:
        if fresh is not None:
            await fresh.astop()
        await old.astop()


@pytest.mark.parametrize(
    ("before", "now", "back"),
    [("50", "3", True), ("3", "50", False), (None, "3", False), ("abc", "3", False)],
)
def test_went_back(before: str | None, now: str, back: bool) -> None:
    assert _went_back(before, now) is back
