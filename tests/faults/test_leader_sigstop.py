"""A paused leader, in processes: two leader-elected replicas (tests/runtime/leader_app.py: lease 6 s,
renew deadline 4.5 s, renewals every 0.5 s) reconcile 30 keys over and over (0.25 s each, again 0.1 s
later: the leader is always reconciling something). The leader is stopped with SIGSTOP right after one
of its renewals (seen through the API; at once, or 0.15 s later when its loop sleeps) and continued
with SIGCONT after a pause, by turns:

* longer than the lease duration: the standby takes the lease and leads. The woken leader must start
  no reconcile (before the fix its overdue requeues started at once, beside the new leader's, until
  its renewals had failed for the renew deadline) and exit with `LeaderElectionLost` (leader_app: 3);
  the test starts it again, as a kubelet would, and it stands by;
* longer than the renew deadline, shorter than the lease: nobody could take the lease; the woken
  leader renews and leads on (no exit, no restart).

Judged on the emulator and on the real kube-apiserver + etcd. The log is shard_app's start/end lines
plus the test's `paused <r>` (once the process is stopped) and `resumed <r>` (just before SIGCONT).
A reconcile the pause froze mid-way is not a start after the pause: it ends at its next await (no lease
fences a process that is not running), and is counted apart."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.coordination_v1 import Lease
from pyscaffold_op.runtime import Client, new_client
from pyscaffold_op.testing import eventually
from tests.runtime.leader_app import LOST
from tests.runtime.test_sharding_procs import KEYS, Replicas
from tests.runtime.widgets import widget

from .servers import MODES, environment
from .test_shard_sigstop import stopped

LEASE, DEADLINE, RETRY = 6.0, 4.5, 0.5
RECONCILE, REQUEUE = 0.25, 0.1
PAUSES = [LEASE + 3.0 if i % 2 == 0 else DEADLINE + 0.75 for i in range(6)]
STOP_AFTER = (0.0, 0.15)
LEASE_NAME = "leader-test"


def check(lines: list[str]) -> tuple[list[str], int]:
    """(overlaps: a start while another replica ran anything, frozen reconciles excepted; how many
    reconciles a pause froze mid-way). Leader election promises one active replica, not one per key."""
    running: dict[str, set[str]] = {}  # replica -> keys in flight
    frozen: dict[str, set[str]] = {}
    bad: list[str] = []
    froze = 0
    for line in lines:
        parts = line.split()
        if parts[0] == "paused":
            frozen[parts[1]] = running.pop(parts[1], set())
            froze += len(frozen[parts[1]])
            continue
        if parts[0] in ("resumed", "restarted"):
            continue
        replica, what, key = parts
        if what == "end" and key in frozen.get(replica, set()):
            frozen[replica].discard(key)
            continue
        if what == "start":
            others = sorted(r for r, keys in running.items() if keys and r != replica)
            if others:
                bad.append(f"{replica} started {key} while {others} reconciled")
            running.setdefault(replica, set()).add(key)
        else:
            running.get(replica, set()).discard(key)
    return bad, froze


def test_the_checker() -> None:
    assert check(["a start k", "paused a", "b start j", "b end j", "resumed a", "a end k"]) == ([], 1)
    assert check(["a start k", "b start j"]) == (["b started j while ['a'] reconciled"], 0)
    assert check(["a start k", "a end k", "b start j"]) == ([], 0)


@pytest.fixture(params=MODES)
async def server(request: pytest.FixtureRequest) -> AsyncIterator[Environment]:
    async with environment(request.param) as e:
        yield e


async def holder(api: Client) -> str:
    lease = await api.get(Lease, LEASE_NAME, namespace="default")
    return (lease.spec.holder_identity if lease.spec else None) or ""


# a minute or two per server: out of the default run (kept under 5 minutes) with the oracle tests
@pytest.mark.oracle
@pytest.mark.timeout(600)
async def test_a_paused_leader_starts_nothing_once_another_leads(server: Environment, tmp_path: Path) -> None:
    api = new_client(server.config)
    for key in KEYS:
        await api.create(widget(key.split("/")[1]))
    replicas = Replicas(
        server,
        tmp_path / "reconciles.log",
        (LEASE, DEADLINE, RETRY, RECONCILE, REQUEUE),
        app="tests.runtime.leader_app",
    )

    def starts_since(mark: int, replica: str) -> int:
        return sum(1 for line in replicas.lines()[mark:] if line.startswith(f"{replica} start "))

    exits = 0
    exit_after: list[float] = []  # seconds from SIGCONT to the woken leader's exit
    try:
        await replicas.start("r1")
        await eventually(lambda: starts_since(0, "r1") > 0, timeout=60)
        await replicas.start("r2")
        for run, pause in enumerate(PAUSES):
            victim = await holder(api)
            standby = "r2" if victim == "r1" else "r1"
            proc = replicas.procs[victim]
            first = (await api.get(Lease, LEASE_NAME, namespace="default")).metadata.resource_version

            async def renewed(rv: str | None = first) -> bool:
                return (await api.get(Lease, LEASE_NAME, namespace="default")).metadata.resource_version != rv

            await eventually(renewed, timeout=10, interval=0.005)
            await asyncio.sleep(STOP_AFTER[(run // 2) % 2])
            os.kill(proc.pid, signal.SIGSTOP)
            await eventually(lambda pid=proc.pid: stopped(pid), timeout=10)
            with replicas.log.open("a") as f:
                f.write(f"paused {victim}\n")
            await asyncio.sleep(pause)
            with replicas.log.open("a") as f:
                f.write(f"resumed {victim}\n")
            resumed = replicas.mark()
            os.kill(proc.pid, signal.SIGCONT)
            woke = time.monotonic()
            if pause > LEASE:
                assert await holder(api) == standby
                async with asyncio.timeout(30):
                    assert await proc.wait() == LOST  # lost its leadership: exits for a restart
                exit_after.append(time.monotonic() - woke)
                exits += 1
                assert starts_since(resumed, victim) == 0, "the woken leader reconciled"
                await eventually(lambda m=resumed, s=standby: starts_since(m, s) > 0, timeout=30)
                del replicas.procs[victim]
                with replicas.log.open("a") as f:
                    f.write(f"restarted {victim}\n")
                await replicas.start(victim)  # as the kubelet restarts the pod: a standby now
            else:
                await eventually(lambda m=resumed, v=victim: starts_since(m, v) > 0, timeout=30)
                assert proc.returncode is None and await holder(api) == victim
                assert starts_since(resumed, standby) == 0
        for name in list(replicas.procs):
            assert await replicas.terminate(name) == 0
    finally:
        await replicas.close()
        await api.close()
    overlaps, froze = check(replicas.lines())
    assert overlaps == []
    assert exits == sum(1 for p in PAUSES if p > LEASE)
    print(
        f"\n{len(PAUSES)} pauses: {exits} leaders exited (after SIGCONT: {max(exit_after):.2f} s at most) "
        f"and restarted, {froze} reconciles frozen mid-way, no overlap"
    )
