"""Issue 28 item 8: a binary kubeconfig is one line naming the file; an exec plugin that never answers
is killed after its timeout (injected small here; 30 s by default) and named in the error and in the
manager's startup diagnosis; a plugin still running when its caller is cancelled is killed too."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from pyscaffold_op.runtime import ConfigError, ExecConfig, Manager, ManagerOptions, Request, load_config
from pyscaffold_op.runtime.client.execplugin import EXEC_TIMEOUT, TIMEOUT_ENV, ExecCredentials
from pyscaffold_op.runtime.manager.startup import CacheSyncTimeout
from pyscaffold_op.testing import eventually

HANGING = """#!{python}
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
with open({pids!r}, "a") as f:
    f.write(f"{{os.getpid()}} {{child.pid}}\\n")
time.sleep(3600)
"""

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {{server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}
users:
- name: u
  user:
    exec: {{apiVersion: client.authentication.k8s.io/v1, command: {command}, interactiveMode: Never}}
contexts:
- name: ctx
  context: {{cluster: c, user: u}}
current-context: ctx
"""


def hanging_plugin(tmp_path: Path) -> tuple[Path, Path]:
    pids = tmp_path / "pids"
    script = tmp_path / "hang-token"
    script.write_text(HANGING.format(python=sys.executable, pids=str(pids)))
    script.chmod(0o755)
    return script, pids


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie not yet reaped by its parent (our child's child: reaped by init) counts as gone
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def started(pids: Path) -> list[int]:
    return [int(p) for line in pids.read_text().splitlines() for p in line.split()] if pids.exists() else []


def test_binary_kubeconfig_is_one_line(tmp_path: Path) -> None:
    kc = tmp_path / "kc"
    kc.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    with pytest.raises(ConfigError) as raised:
        load_config(kubeconfig=str(kc))
    message = str(raised.value)
    assert message.startswith(f"kubeconfig {kc}: not a YAML file (") and "\n" not in message


async def test_hanging_exec_plugin_is_named_and_killed(tmp_path: Path) -> None:
    assert EXEC_TIMEOUT == 30.0
    script, pids = hanging_plugin(tmp_path)
    creds = ExecCredentials(ExecConfig(str(script), "client.authentication.k8s.io/v1"), timeout=3)
    with pytest.raises(ConfigError, match=f"exec plugin {script} did not answer in 3s"):
        await creds.authorization()
    assert len(started(pids)) == 2
    await eventually(lambda: not any(alive(p) for p in started(pids)), timeout=10)


async def test_a_cancelled_exec_plugin_does_not_outlive_its_caller(tmp_path: Path) -> None:
    script, pids = hanging_plugin(tmp_path)
    creds = ExecCredentials(ExecConfig(str(script), "client.authentication.k8s.io/v1"), timeout=600)
    task = asyncio.create_task(creds.authorization())
    await eventually(lambda: len(started(pids)) == 2, timeout=20)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await eventually(lambda: not any(alive(p) for p in started(pids)), timeout=10)


async def test_startup_diagnosis_names_the_hanging_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyscaffold_op.models.core_v1 import Pod

    script, pids = hanging_plugin(tmp_path)
    kc = tmp_path / "kc"
    kc.write_text(KUBECONFIG.format(command=script))
    monkeypatch.setenv(TIMEOUT_ENV, "1")
    mgr = Manager(
        load_config(kubeconfig=str(kc)),
        ManagerOptions(health_probe_bind_address="0", metrics_bind_address="0", cache_sync_timeout=6.0),
    )

    async def noop(_request: Request) -> None:
        return None

    mgr.builder().for_(Pod).named("pods").complete(noop)
    with pytest.raises(CacheSyncTimeout) as raised:
        await mgr.start(install_signal_handlers=False)
    assert f"exec plugin {script} did not answer in 1s" in str(raised.value)
    await eventually(lambda: not any(alive(p) for p in started(pids)), timeout=10)


def test_the_timeout_env_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TIMEOUT_ENV, "soon")
    with pytest.raises(ConfigError, match=TIMEOUT_ENV):
        ExecCredentials(ExecConfig("x", "client.authentication.k8s.io/v1"))
    monkeypatch.setenv(TIMEOUT_ENV, "2.5")
    assert ExecCredentials(ExecConfig("x", "client.authentication.k8s.io/v1")).timeout == 2.5


async def test_sync_timeout_names_the_exec_plugin_still_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38: the plugin's own timeout (30 s) is longer than the caches' (3 s here, 5 s in the issue):
    the manager gives up first and must say it waits on the plugin, not only that caches did not sync."""
    from pyscaffold_op.models.core_v1 import Pod

    script, pids = hanging_plugin(tmp_path)
    kc = tmp_path / "kc"
    kc.write_text(KUBECONFIG.format(command=script))
    monkeypatch.delenv(TIMEOUT_ENV, raising=False)
    mgr = Manager(
        load_config(kubeconfig=str(kc)),
        ManagerOptions(health_probe_bind_address="0", metrics_bind_address="0", cache_sync_timeout=3.0),
    )

    async def noop(_request: Request) -> None:
        return None

    mgr.builder().for_(Pod).named("pods").complete(noop)
    with pytest.raises(CacheSyncTimeout) as raised:
        await mgr.start(install_signal_handlers=False)
    message = str(raised.value)
    assert message.startswith(
        f"caches did not sync within 3s: waiting for exec plugin {script}: no answer in "
    )
    assert "(killed after 30s)" in message and "\n" not in message
    assert mgr.transport.credentials.waiting() is None  # stopping the manager killed it
    await eventually(lambda: not any(alive(p) for p in started(pids)), timeout=10)
