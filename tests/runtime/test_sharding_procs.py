"""Sharded managers in separate processes on one emulator: through scale-up, a graceful scale-down and
a SIGKILL, no key is ever reconciled by two replicas at once.

Each replica (tests/runtime/shard_app.py) appends start/end lines per reconcile to one shared file with
O_APPEND writes; the file order is the logical order of those writes. The test appends `killed <r>`
once a killed replica has been reaped: nothing of it can follow. A key started by one replica while
another's start of it has no end (and no kill) before it is an overlap.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import sys
from pathlib import Path

import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Client
from pyscaffold_op.testing import eventually

from .widgets import widget

ROOT = Path(__file__).resolve().parents[2]
KEYS = [f"default/p{i:02d}" for i in range(30)]

pytestmark = pytest.mark.slow


def overlaps(lines: list[str]) -> list[str]:
    running: dict[str, set[str]] = {}  # key -> replicas with a start and no end yet
    bad = []
    for line in lines:
        parts = line.split()
        if parts[0] == "killed":
            for replicas in running.values():
                replicas.discard(parts[1])
            continue
        replica, what, key = parts
        holders = running.setdefault(key, set())
        if what == "start":
            others = holders - {replica}
            if others:
                bad.append(f"{key}: {replica} started while {sorted(others)} ran it")
            holders.add(replica)
        else:
            holders.discard(replica)
    return bad


def _die_with_parent() -> None:
    """In the child: SIGKILL when the test process dies (a pytest timeout ends it without cleanup, and a
    replica stopped with SIGSTOP would otherwise stay behind)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Replicas:
    def __init__(
        self,
        env: Environment,
        log: Path,
        timings: tuple[float, ...] | None = None,
        app: str = "tests.runtime.shard_app",
    ) -> None:
        """`timings`: the replicas' (lease_duration, renew_deadline, retry_period[, reconcile,
        requeue_after]), shard_app's own (2, 1.5, 0.2, 0.03, 0.3) by default. `app`: the module each
        replica runs (shard_app, or leader_app for leader-elected replicas)."""
        self.env, self.log = env, log
        self.timings = timings
        self.app = app
        self.procs: dict[str, asyncio.subprocess.Process] = {}
        self._lines: list[str] = []
        self._read = 0  # bytes of the log read into _lines

    async def start(self, identity: str) -> None:
        self.procs[identity] = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            self.app,
            str(self.env.kubeconfig_path),
            str(self.log),
            identity,
            *(str(t) for t in self.timings or ()),
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            preexec_fn=_die_with_parent,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=(self.log.parent / f"{identity}.stderr").open("ab"),
        )

    def lines(self) -> list[str]:
        """The log's complete lines so far, read on from where the last call stopped (a full re-read
        every few milliseconds would starve the emulator this test process serves)."""
        if self.log.exists():
            with self.log.open("rb") as f:
                f.seek(self._read)
                chunk = f.read()
            complete = chunk.rfind(b"\n") + 1
            self._read += complete
            self._lines += chunk[:complete].decode().splitlines()
        return self._lines

    def mark(self) -> int:
        return len(self.lines())

    def reconciled_since(self, mark: int) -> dict[str, set[str]]:
        """key -> replicas that finished a reconcile of it after line `mark`."""
        out: dict[str, set[str]] = {}
        for line in self.lines()[mark:]:
            parts = line.split()
            if len(parts) == 3 and parts[1] == "end":
                out.setdefault(parts[2], set()).add(parts[0])
        return out

    async def kill(self, identity: str) -> None:
        proc = self.procs.pop(identity)
        proc.kill()
        await proc.wait()
        with self.log.open("a") as f:
            f.write(f"killed {identity}\n")

    async def terminate(self, identity: str) -> int:
        proc = self.procs.pop(identity)
        proc.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            return await proc.wait()

    async def close(self) -> None:
        for identity in list(self.procs):
            await self.kill(identity)


async def test_no_key_reconciled_twice_at_once_through_scale_up_down_and_kill(
    env: Environment, api: Client, tmp_path: Path
) -> None:
    for key in KEYS:
        await api.create(widget(key.split("/")[1]))
    replicas = Replicas(env, tmp_path / "reconciles.log")

    async def all_reconciled_by(expected: set[str], since: int) -> bool:
        for proc in replicas.procs.values():
            assert proc.returncode is None, "a replica died"
        done = replicas.reconciled_since(since)
        return all(k in done for k in KEYS) and set().union(*done.values()) == expected

    try:
        await replicas.start("r1")
        await eventually(lambda: all_reconciled_by({"r1"}, 0), timeout=60)
        # scale up: r2, then r3 take their shares while every key keeps being reconciled
        # (the keys reconciled since a mark: each wait starts from its own mark, not from "now")
        await replicas.start("r2")
        mark = replicas.mark()
        await eventually(lambda: all_reconciled_by({"r1", "r2"}, mark), timeout=60)
        await replicas.start("r3")
        mark = replicas.mark()
        await eventually(lambda: all_reconciled_by({"r1", "r2", "r3"}, mark), timeout=60)
        # scale down: r2 drains and leaves; then only r1 and r3 reconcile
        assert await replicas.terminate("r2") == 0
        mark = replicas.mark()
        await eventually(lambda: all_reconciled_by({"r1", "r3"}, mark), timeout=60)
        # r3 dies: its keys move once its lease expires
        await replicas.kill("r3")
        mark = replicas.mark()
        await eventually(lambda: all_reconciled_by({"r1"}, mark), timeout=60)
        assert await replicas.terminate("r1") == 0
    finally:
        await replicas.close()
    lines = replicas.lines()
    assert len(lines) > 200
    assert overlaps(lines) == []


def test_the_checker_finds_an_overlap() -> None:
    assert overlaps(["a start k", "b start k", "a end k", "b end k"]) == ["k: b started while ['a'] ran it"]
    assert overlaps(["a start k", "a end k", "b start k", "b end k"]) == []
    assert overlaps(["a start k", "killed a", "b start k"]) == []
