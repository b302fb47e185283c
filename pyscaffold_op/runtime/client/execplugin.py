"""Exec credential plugins (`users[].user.exec`: aws eks get-token, gke-gcloud-auth-plugin, kubelogin...)
run as client-go runs them: the command with its args, the process environment plus the plugin's
`env`, and `KUBERNETES_EXEC_INFO` holding an `ExecCredential` (cluster info when
`provideClusterInfo`); stdin is not connected (a controller is not interactive) and stderr is passed
through. The plugin prints an `ExecCredential` of the same apiVersion whose `status.token` is cached
until `status.expirationTimestamp` and dropped after a 401 with it, so the next request runs it again.

A plugin that does not answer within `EXEC_TIMEOUT` seconds (30; `$PYOP_EXEC_PLUGIN_TIMEOUT` or
`ExecCredentials(timeout=)`) is killed with its process group and named in a `ConfigError` ("exec plugin
<cmd> did not answer in 30s"), which the startup diagnosis then reports; before that, `waiting()` names
the plugin still running, so a manager whose caches time out first (5 s, say) says what they wait on.
A plugin still running when the manager stops (its task cancelled) is killed too. client-go has no such
timeout: a hung plugin hangs its requests there."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import json
import os
import signal
import time
from collections.abc import Callable
from typing import Any

from pyscaffold_op.runtime.client.credentials import Credentials
from pyscaffold_op.runtime.client.errors import ConfigError
from pyscaffold_op.runtime.client.restconfig import ExecConfig, RestConfig

EXEC_TIMEOUT = 30.0
TIMEOUT_ENV = "PYOP_EXEC_PLUGIN_TIMEOUT"


def _default_timeout() -> float:
    raw = os.environ.get(TIMEOUT_ENV, "")
    if not raw:
        return EXEC_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise ConfigError(f"${TIMEOUT_ENV}={raw!r}: not a positive number of seconds")
    return value


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class ExecCredentials(Credentials):
    def __init__(
        self,
        plugin: ExecConfig,
        cluster: RestConfig | None = None,
        *,
        now: Callable[[], datetime.datetime] = _utcnow,
        timeout: float | None = None,
    ) -> None:
        self.plugin = plugin
        self.timeout = _default_timeout() if timeout is None else timeout
        self.cluster = cluster
        self._now = now
        self._token: str | None = None
        self._expires: datetime.datetime | None = None
        self._lock = asyncio.Lock()
        self._started: float | None = None  # time.monotonic() when the running plugin started
        self.runs = 0

    async def authorization(self) -> str | None:
        async with self._lock:
            if self._token is None or (self._expires is not None and self._now() >= self._expires):
                self._token, self._expires = await self._run()
            return f"Bearer {self._token}"

    async def refresh(self, used: str | None) -> bool:
        if used is not None and used == f"Bearer {self._token}":
            self._token = None  # the server refused it before it expired: ask the plugin again
        return True

    def waiting(self) -> str | None:
        started = self._started
        if started is None:
            return None
        return (
            f"waiting for exec plugin {self.plugin.command}: no answer in {time.monotonic() - started:.0f}s "
            f"(killed after {self.timeout:g}s)"
        )

    def _exec_info(self) -> str:
        spec: dict[str, Any] = {"interactive": False}
        if self.plugin.provide_cluster_info and self.cluster is not None:
            c = self.cluster
            cluster: dict[str, Any] = {"server": c.server}
            if c.tls_server_name:
                cluster["tls-server-name"] = c.tls_server_name
            if c.insecure:
                cluster["insecure-skip-tls-verify"] = True
            ca = c.ca_data
            if ca is None and c.ca_file:
                with open(c.ca_file, "rb") as f:
                    ca = f.read()
            if ca:
                cluster["certificate-authority-data"] = base64.b64encode(ca).decode()
            if c.proxy_url:
                cluster["proxy-url"] = c.proxy_url
            spec["cluster"] = cluster
        return json.dumps({"apiVersion": self.plugin.api_version, "kind": "ExecCredential", "spec": spec})

    async def _run(self) -> tuple[str, datetime.datetime | None]:
        plugin = self.plugin
        if plugin.interactive_mode == "Always":
            raise ConfigError(
                f"exec plugin {plugin.command}: interactiveMode Always needs a terminal, and a controller "
                "has none"
            )
        env = {**os.environ, **dict(plugin.env), "KUBERNETES_EXEC_INFO": self._exec_info()}
        try:
            proc = await asyncio.create_subprocess_exec(
                plugin.command,
                *plugin.args,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                start_new_session=True,  # its own process group: a timeout kills its children too
            )
        except FileNotFoundError as err:
            hint = f": {plugin.install_hint}" if plugin.install_hint else ""
            raise ConfigError(f"exec plugin: executable {plugin.command} not found{hint}") from err
        except OSError as err:
            raise ConfigError(f"exec plugin {plugin.command}: {err}") from err
        self._started = time.monotonic()
        try:
            async with asyncio.timeout(self.timeout):
                out, _ = await proc.communicate()
        except TimeoutError:
            await _kill(proc)
            raise ConfigError(f"exec plugin {plugin.command} did not answer in {self.timeout:g}s") from None
        except BaseException:  # cancelled (the manager stops): the plugin must not outlive it
            await _kill(proc)
            raise
        finally:
            self._started = None
        self.runs += 1
        if proc.returncode != 0:
            raise ConfigError(
                f"exec plugin: executable {plugin.command} failed with exit code {proc.returncode}"
            )
        return self._parse(out)

    def _parse(self, out: bytes) -> tuple[str, datetime.datetime | None]:
        command = self.plugin.command
        try:
            cred = json.loads(out)
        except ValueError as err:
            raise ConfigError(f"exec plugin {command}: output is not an ExecCredential: {err}") from err
        if not isinstance(cred, dict) or cred.get("kind") != "ExecCredential":
            raise ConfigError(f"exec plugin {command}: output is not an ExecCredential")
        if cred.get("apiVersion") != self.plugin.api_version:
            raise ConfigError(
                f"exec plugin is configured to use API version {self.plugin.api_version}, "
                f"plugin returned version {cred.get('apiVersion')}"
            )
        status = cred.get("status")
        if not isinstance(status, dict):
            raise ConfigError(f"exec plugin {command} didn't return a status field")
        if status.get("clientCertificateData") or status.get("clientKeyData"):
            raise ConfigError(
                f"exec plugin {command} returned a client certificate: pyop's runtime supports exec "
                "plugins that return a token"
            )
        token = status.get("token")
        if not token or not isinstance(token, str):
            raise ConfigError(f"exec plugin {command} didn't return a token or cert/key pair")
        expires = status.get("expirationTimestamp")
        if not expires:
            return token, None
        try:
            stamp = datetime.datetime.fromisoformat(str(expires))
        except ValueError as err:
            raise ConfigError(f"exec plugin {command}: bad expirationTimestamp {expires!r}") from err
        return token, stamp if stamp.tzinfo else stamp.replace(tzinfo=datetime.UTC)


async def _kill(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the plugin's process group and reap it (bounded: a cancelled caller waits no more)."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(asyncio.shield(proc.wait()), 5.0)
