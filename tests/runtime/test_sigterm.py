"""SIGTERM drains: a manager in a subprocess finishes its in-flight reconcile, releases its lease, exits 0;
what runs past the graceful timeout is cut (exit 1), and a second signal exits 1 at once."""

from __future__ import annotations

import asyncio
import os
import signal
import ssl
import sys
from pathlib import Path

import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.coordination_v1 import Lease
from pyscaffold_op.runtime import Client
from pyscaffold_op.testing import eventually

from .widgets import widget

ROOT = Path(__file__).resolve().parents[2]


async def start_app(env: Environment, api: Client, out: Path, *mode: str) -> asyncio.subprocess.Process:
    """The manager of `sigterm_app` in a subprocess, once its reconcile of a new Widget has started."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.runtime.sigterm_app",
        str(env.kubeconfig_path),
        str(out),
        *mode,
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
async def test_second_signal_exits_at_once_with_status_1(
    env: Environment, api: Client, tmp_path: Path
) -> None:
    # Before: the second signal cancelled the drain and the process exited 0; controller-runtime's
    # signal handler calls os.Exit(1) on the second signal (issue 28 item 4).
    proc = await start_app(env, api, tmp_path)
    try:
        proc.send_signal(signal.SIGTERM)
        seen = await read_until(proc, b"shutting down gracefully")
        proc.send_signal(signal.SIGINT)  # Ctrl-C while draining: exit now
        _out, rest = await asyncio.wait_for(proc.communicate(), 15)
        err = seen + rest
        assert proc.returncode == 1, err.decode()[-2000:]
        assert not (tmp_path / "finished").exists(), "the second signal should not wait for the drain"
        assert not (tmp_path / "exited").exists()  # no clean-up ran: the process ended in the handler
        assert b"again, exiting with status 1" in err, err.decode()[-2000:]
        assert b"Traceback" not in err, err.decode()[-4000:]
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def _hang_a_webhook_request(tmp_path: Path) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    await eventually(lambda: (tmp_path / "webhook").exists(), timeout=20)
    ctx = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
    port = int((tmp_path / "webhook").read_text())
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx, server_hostname="localhost")
    writer.write(
        b"POST /hang HTTP/1.1\r\nHost: localhost\r\n"
        b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
    )
    await writer.drain()
    await eventually(lambda: (tmp_path / "hung").exists(), timeout=20)
    return reader, writer


@pytest.mark.slow
async def test_sigterm_cuts_a_hung_webhook_request_at_the_graceful_timeout(
    env: Environment, api: Client, tmp_path: Path
) -> None:
    # Before: one hung webhook request kept the process alive 62 s after SIGTERM (aiohttp waits 60 s),
    # past the graceful timeout and the Deployment's grace period, and it then exited 0.
    proc = await start_app(env, api, tmp_path, "hung-webhook")
    try:
        proc.send_signal(signal.SIGUSR1)  # the reconcile ends: only the webhook request is in flight
        await eventually(lambda: (tmp_path / "finished").exists(), timeout=20)
        reader, writer = await _hang_a_webhook_request(tmp_path)
        proc.send_signal(signal.SIGTERM)
        _out, err = await asyncio.wait_for(proc.communicate(), 20)  # graceful timeout: 1 s
        assert proc.returncode == 1, err.decode()[-2000:]
        assert b"in-flight webhook requests ran past graceful_shutdown_timeout (1s)" in err
        assert b"Traceback" not in err
        assert await asyncio.wait_for(reader.read(), 10) == b""  # cut, not answered
        writer.close()
        lease = await api.get(Lease, "sigterm-test", namespace="default")
        assert lease.spec.holder_identity is None  # the lease was released all the same
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
