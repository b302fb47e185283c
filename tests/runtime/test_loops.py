"""`pyscaffold_op.runtime.run`: asyncio.run on uvloop where installed, the standard loop on request."""

from __future__ import annotations

import asyncio

import pytest
import uvloop

from pyscaffold_op.runtime import run
from pyscaffold_op.runtime.loops import LOOP_ENV


async def loop_type() -> type:
    return type(asyncio.get_running_loop())


def test_run_uses_uvloop_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOOP_ENV, raising=False)
    policy = asyncio.get_event_loop_policy()
    assert run(loop_type()) is uvloop.Loop
    assert asyncio.get_event_loop_policy() is policy  # nothing process-wide changed


def test_the_standard_loop_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOOP_ENV, "asyncio")
    assert not issubclass(run(loop_type()), uvloop.Loop)


def test_without_uvloop_the_standard_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOOP_ENV, raising=False)
    monkeypatch.setitem(__import__("sys").modules, "uvloop", None)  # import uvloop -> ImportError
    assert not issubclass(run(loop_type()), uvloop.Loop)


def test_run_returns_and_raises_like_asyncio_run() -> None:
    async def boom() -> None:
        raise KeyError("x")

    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert run(answer()) == 42
    with pytest.raises(KeyError):
        run(boom())
