"""Issue 38: an API server that forgets (etcd wiped, or restored from an old backup): its resourceVersions
go back, and the cache must become the new server's objects, with a delete for each one it lost.

kube-apiserver v1.37 accepts a watch from a version it has not reached and stays silent (so does
client-go's informer, re-watching from there for ever); it answers a list or get there with a 504
whose cause's *reason* is `ResourceVersionTooLarge`. Before: the emulator answered such a watch at once
with an ERROR event no real server sends, the test here passed on that behaviour, and the runtime and
the emulator looked for the cause under `type`."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2 as httpx
import pytest
from runtime.widgets import Widget, widget  # `tests/` is on sys.path: the runtime tests are `runtime`

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Manager, ManagerOptions, Request, WatchLiveness, new_client
from pyscaffold_op.runtime.cache.informer import _went_back
from pyscaffold_op.runtime.client.errors import ServerTimeout, error_for, is_too_large_resource_version
from pyscaffold_op.runtime.client.rest import RestTransport
from pyscaffold_op.testing import eventually

from .conftest import RUNTIME_CRDS
from .servers import MODES, environment

FAST = WatchLiveness(probe_after=1.0, probe_timeout=2.0, catch_up=0.2)
WIDGETS = "/apis/test.pyop.io/v1/namespaces/default/widgets"
# kube-apiserver v1.37.2's answer to `GET .../configmaps?resourceVersion=100209` when at 209
REAL_TOO_LARGE = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "Timeout: Too large resource version: 100209, current: 209",
    "reason": "Timeout",
    "details": {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1,
    },
    "code": 504,
}


def test_the_real_servers_too_large_answer_is_recognised_by_its_cause_reason() -> None:
    assert is_too_large_resource_version(error_for(504, json.dumps(REAL_TOO_LARGE).encode()))
    # client-go's HasStatusCause looks at the cause only, whatever the code
    assert is_too_large_resource_version(
        error_for(500, {"code": 500, "details": {"causes": [{"reason": "ResourceVersionTooLarge"}]}})
    )
    # servers before 1.19 said it in the message of a Timeout
    assert is_too_large_resource_version(
        error_for(504, {"code": 504, "reason": "Timeout", "message": "Too large resource version: 9"})
    )
    assert not is_too_large_resource_version(error_for(504, {"code": 504, "message": "Timeout: slow"}))
    assert not is_too_large_resource_version(error_for(410, {"code": 410, "message": "too old"}))


@pytest.mark.parametrize("mode", MODES)
async def test_a_list_from_the_future_is_the_504_and_its_retry_after_is_honoured(mode: str) -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async with environment(mode) as env:
        transport = RestTransport(env.config, max_retries=2, sleep=sleep)
        try:
            with pytest.raises(ServerTimeout) as caught:
                await transport.request("GET", WIDGETS, params={"resourceVersion": str(10**12)})
        finally:
            await transport.close()
    assert is_too_large_resource_version(caught.value)
    assert caught.value.details["causes"][0]["reason"] == "ResourceVersionTooLarge"
    assert slept == [1.0, 1.0]  # the server's Retry-After: 1, sent again max_retries times


@pytest.mark.parametrize("mode", MODES)
async def test_a_watch_from_the_future_is_silent_until_the_server_passes_its_version(mode: str) -> None:
    async with environment(mode, **({} if mode == "real" else {"bookmark_interval": 0.2})) as env:
        api = new_client(env.config)
        transport = RestTransport(env.config)
        try:
            now = int(json.loads(await transport.request("GET", WIDGETS))["metadata"]["resourceVersion"])
            since = now + 3  # a few writes from now (the real server's own leases may count too)
            params = {"watch": "true", "resourceVersion": str(since), "allowWatchBookmarks": "true"}
            seen: list[tuple[str, int]] = []
            async with transport.stream_lines(WIDGETS, params) as lines:

                async def read() -> None:
                    async for line in lines:
                        event = json.loads(line)
                        seen.append((event["type"], int(event["object"]["metadata"]["resourceVersion"])))

                reader = asyncio.create_task(read())
                await asyncio.sleep(2.0)
                assert seen == []  # accepted, no ERROR, no bookmark: silence
                created = [await api.create(widget(f"w{i}")) for i in range(6)]
                versions = [int(w.metadata.resource_version or 0) for w in created]
                await eventually(lambda: ("ADDED", versions[-1]) in seen)
                reader.cancel()
            added = [rv for kind, rv in seen if kind == "ADDED"]
            assert added == [rv for rv in versions if rv > since]  # only what came after its version
            assert all(rv > since for _, rv in seen)
        finally:
            await api.close()
            await transport.close()


async def _forget(env: Environment, mode: str, port: int) -> Environment:
    """The server restarts with none of its state: the real one on an empty etcd, the emulator as a
    fresh one on the same address. Returns the environment now serving."""
    if mode == "real":
        assert env.real is not None
        await asyncio.to_thread(env.real.plane.restart, forget=True)
        await env.install_crds([RUNTIME_CRDS])
        return env
    await env.astop()
    fresh = environment(mode, port=port)
    await fresh.start()
    return fresh


# probes only after 10 minutes of silence: what converges here is the probe of a watch re-opened after
# the old one broke, at once (a restarted server's own writes may soon carry it past the old version)
SLOW = WatchLiveness(probe_after=600.0)


@pytest.mark.parametrize("liveness", [FAST, SLOW], ids=["silent-watch-probe", "reconnect-probe"])
@pytest.mark.parametrize("mode", MODES)
async def test_after_the_server_forgot_the_cache_is_its_objects_and_deletes_are_delivered(
    mode: str, liveness: WatchLiveness
) -> None:
    """The server comes back without the 5 objects the cache holds and at a lower resourceVersion; the
    informer's watch from its old version is accepted and silent. A liveness probe (at once after the
    reconnection, or after the watch's silence) sees the server's version below the watch's and
    relists: 5 deletes, the new object added."""
    reconciled: list[str] = []
    deleted: list[tuple[str, bool]] = []

    async def reconcile(req: Request) -> None:
        reconciled.append(req.name)

    class Deletes:
        def on_add(self, obj: Any, is_in_initial_list: bool) -> None: ...
        def on_update(self, old: Any, new: Any) -> None: ...
        def on_delete(self, obj: Any, state_unknown: bool) -> None:
            deleted.append((obj.metadata.name, state_unknown))

    env = environment(mode)
    await env.start()
    serving = env
    try:
        api = new_client(env.config)
        try:
            for i in range(5):
                await api.create(widget(f"old{i}"))
        finally:
            await api.close()
        mgr = Manager(env.config, ManagerOptions(health_probe_bind_address="0", watch_liveness=liveness))
        mgr.builder().for_(Widget).complete(reconcile)
        informer = mgr.cache.get_informer(Widget)
        informer.add_event_handler(Deletes())
        async with mgr.running():
            await eventually(lambda: sorted(reconciled) == [f"old{i}" for i in range(5)])
            old_rv = int(informer.resource_version or 0)
            serving = await _forget(env, mode, env.port)
            api = new_client(serving.config)
            try:
                await api.create(widget("new"))
                current = await api.list(Widget)
            finally:
                await api.close()
            assert [w.metadata.name for w in current] == ["new"]

            async def cache_is_the_new_servers() -> bool:
                return [w.metadata.name for w in await mgr.client.list(Widget)] == ["new"]

            await eventually(cache_is_the_new_servers, timeout=30)
            await eventually(lambda: "new" in reconciled)
        assert int(current[0].metadata.resource_version or 0) < old_rv  # the versions went back
        assert sorted(deleted) == [(f"old{i}", True) for i in range(5)]
        assert informer.stats["server_resets"] == 1, informer.stats
        assert informer.stats["relists_on_too_large"] == 0, informer.stats  # no server sends that
    finally:
        await serving.astop()
        if serving is not env:
            await env.astop()


@pytest.mark.parametrize(
    ("before", "now", "back"),
    [("50", "3", True), ("3", "50", False), (None, "3", False), ("abc", "3", False)],
)
def test_went_back(before: str | None, now: str, back: bool) -> None:
    assert _went_back(before, now) is back


async def test_the_emulator_says_retry_after_where_the_real_server_does(tmp_path: Any) -> None:
    async with environment("emulator") as env, httpx.AsyncClient(base_url=env.url) as http:
        resp = await http.get(WIDGETS, params={"resourceVersion": str(10**12)})
    assert (resp.status_code, resp.headers.get("retry-after")) == (504, "1")
    assert resp.json()["details"]["causes"] == [
        {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
    ]
