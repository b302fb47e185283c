"""SIGTERM drains: a manager in a subprocess finishes its in-flight reconcile, releases its lease, exits 0."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.coordination_v1 import Lease
from pyscaffold_op.runtime import Client
from pyscaffold_op.testing import eventually

from .widgets import widget

ROOT = Path(__file__).resolve().parents[2]


async def start_app(env: Environment, api: Client, out: Path) -> asyncio.subprocess.Process:
    """The manager of `sigterm_app` in a subprocess, once its reconcile of a new Widget has started."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.runtime.sigterm_app",
        str(env.kubeconfig_path),
        str(out),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    await api.create(widget("slow"))

    async def started() -> bool:
        assert proc.returncode is None, "manager process died"
        return (out / "started").exists()

    try:
        await eventually(started, timeout=20)
    except BaseException:
        proc.kill()
        await proc.wait()
        raise
    return proc


async def read_until(proc: asyncio.subprocess.Process, marker: bytes) -> bytes:
    """stderr of `proc` up to and including the first line containing `marker`."""
    assert proc.stderr is not None
    seen = b""
    async with asyncio.timeout(15):
        while marker not in seen:
            line = await proc.stderr.readline()
            assert line, f"the manager exited before logging {marker!r}: {seen.decode()[-2000:]}"
            seen += line
    return seen


@pytest.mark.slow
async def test_sigterm_drains_in_flight_reconcile_and_releases_lease(
    env: Environment, api: Client, tmp_path: Path
) -> None:
    proc = await start_app(env, api, tmp_path)
    try:
        proc.send_signal(signal.SIGTERM)
        seen = await read_until(proc, b"shutting down gracefully")
        assert proc.returncode is None and not (tmp_path / "finished").exists()  # draining
        proc.send_signal(signal.SIGUSR1)  # the in-flight reconcile may finish now
        _out, rest = await asyncio.wait_for(proc.communicate(), 15)
        err = seen + rest
        assert proc.returncode == 0, err.decode()[-2000:]
        assert (tmp_path / "finished").exists(), "in-flight reconcile was not allowed to finish"
        assert (tmp_path / "exited").exists()
        lease = await api.get(Lease, "sigterm-test", namespace="default")
        assert lease.spec.holder_identity is None
        assert b"shutting down gracefully" in err and b"released leader lease" in err
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


@pytest.mark.slow
async def test_second_signal_stops_at_once_without_a_traceback(
    env: Environment, api: Client, tmp_path: Path
) -> None:
    proc = await start_app(env, api, tmp_path)
    try:
        proc.send_signal(signal.SIGTERM)
        seen = await read_until(proc, b"shutting down gracefully")
        proc.send_signal(signal.SIGINT)  # Ctrl-C while draining: stop now
        _out, rest = await asyncio.wait_for(proc.communicate(), 15)
        err = seen + rest
        assert proc.returncode == 0, err.decode()[-2000:]
        assert not (tmp_path / "finished").exists(), "the second signal should not wait for the drain"
        assert (tmp_path / "exited").exists()
        assert b"again, stopping now" in err and b"Traceback" not in err
        assert b"Unclosed client session" not in err  # the connections were closed all the same
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
