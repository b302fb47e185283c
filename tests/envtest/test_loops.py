"""The loop the emulator serves from when it owns one: uvloop where installed, asyncio on request."""

from __future__ import annotations

import asyncio

import httpx2
import pytest

from pyscaffold_op.envtest import Environment, loops


def test_uvloop_when_installed_asyncio_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    uvloop = pytest.importorskip("uvloop")
    monkeypatch.delenv(loops.LOOP_ENV, raising=False)
    loop = loops.new_event_loop()
    try:
        assert isinstance(loop, uvloop.Loop)
    finally:
        loop.close()
    monkeypatch.setenv(loops.LOOP_ENV, "asyncio")
    loop = loops.new_event_loop()
    try:
        assert not isinstance(loop, uvloop.Loop) and isinstance(loop, asyncio.AbstractEventLoop)
    finally:
        loop.close()


def test_a_threaded_environment_serves_and_watches_from_its_loop() -> None:
    env = Environment().start_in_thread()
    try:
        assert env.loop is not None and env.loop.is_running()
        headers = {"Authorization": "Bearer envtest-token"}
        with httpx2.Client(base_url=env.url, headers=headers, timeout=10) as c:
            body = {"metadata": {"name": "cm"}, "data": {"a": "1"}}
            created = c.post("/api/v1/namespaces/default/configmaps", json=body)
            assert created.status_code == 201
            rv = created.json()["metadata"]["resourceVersion"]
            c.patch(
                "/api/v1/namespaces/default/configmaps/cm",
                content=b'{"data":{"a":"2"}}',
                headers={"Content-Type": "application/merge-patch+json"},
            ).raise_for_status()
            params = {"watch": "true", "resourceVersion": rv, "timeoutSeconds": "1"}
            with c.stream("GET", "/api/v1/namespaces/default/configmaps", params=params) as r:
                lines = [line for line in r.iter_lines() if line]
        assert len(lines) == 1 and '"MODIFIED"' in lines[0] and '"a":"2"' in lines[0]
    finally:
        env.stop()
