"""SIGKILL mid-way through the At operator's work leaves exactly one Pod per At once a new manager has
run: the Pod's name is derived from the At, so a restart adopts what the killed one created."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.core_v1 import Pod
from pyscaffold_op.runtime import Client, new_client
from pyscaffold_op.testing import eventually

ROOT = Path(__file__).resolve().parents[2]
AT = ROOT / "testdata" / "at"
ATS = "/apis/programming-kubernetes.viper.run/v1alpha1/namespaces/default/ats"
N = 12


@pytest.fixture
async def at_env() -> AsyncIterator[Environment]:
    async with Environment(crd_paths=[AT / "config" / "crd" / "bases"], kubelet=None) as e:
        yield e


async def _manager(env: Environment) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "programming_kubernetes",
        "--kubeconfig",
        str(env.kubeconfig_path),
        "--health-probe-bind-address",
        "0",
        "--metrics-bind-address",
        "0",
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": f"{AT / 'src'}{os.pathsep}{ROOT}"},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )


async def test_sigkill_mid_way_leaves_one_pod_per_at(at_env: Environment) -> None:
    api: Client = new_client(at_env.config)
    first = await _manager(at_env)
    second: asyncio.subprocess.Process | None = None
    try:
        async with httpx2.AsyncClient(base_url=at_env.url, timeout=30) as http:
            for i in range(N):
                at = {
                    "apiVersion": "programming-kubernetes.viper.run/v1alpha1",
                    "kind": "At",
                    "metadata": {"name": f"at{i}"},
                    "spec": {"schedule": "2020-01-01T00:00:00Z", "command": "echo hi"},
                }
                assert (await http.post(ATS, json=at)).status_code == 201

        async def pods() -> list[Pod]:
            return list(await api.list(Pod, namespace="default"))

        async def some_pod() -> bool:
            assert first.returncode is None, "the manager died"
            return len(await pods()) > 0

        await eventually(some_pod, timeout=30)
        first.send_signal(signal.SIGKILL)  # mid-way: some Ats have their Pod, some not yet
        await asyncio.wait_for(first.wait(), 10)
        second = await _manager(at_env)

        async def all_running() -> bool:  # the new manager has been through every At
            async with httpx2.AsyncClient(base_url=at_env.url, timeout=30) as http:
                items = (await http.get(ATS)).json()["items"]
            return all((a.get("status") or {}).get("phase") in ("RUNNING", "DONE") for a in items)

        await eventually(all_running, timeout=60)
        owners = [ref.name for p in await pods() for ref in (p.metadata.owner_references or [])]
        assert sorted(owners) == sorted(f"at{i}" for i in range(N))  # one Pod per At, no more
    finally:
        for proc in (first, second):
            if proc is not None and proc.returncode is None:
                proc.kill()
                await proc.wait()
        await api.close()
