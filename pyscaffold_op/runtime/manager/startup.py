"""Start-up diagnosis: why a manager cannot start, in one line that names the fix.

controller-runtime reports an uninstalled CRD as `no matches for kind "At" in version "..."` and gives up
after the cache-sync timeout; a refused connection names the server. We say the same, and add where the
server address came from (kubeconfig file and context) and what to run next.
"""

from __future__ import annotations

import errno
import os
import ssl
from typing import TYPE_CHECKING, Any

import durationpy

from pyscaffold_op.runtime.client.errors import ApiError, ServerTimeout

if TYPE_CHECKING:
    from pyscaffold_op.runtime.client.rest import RestTransport
    from pyscaffold_op.runtime.objects.kinds import ResourceInfo


class CacheSyncTimeout(TimeoutError):
    """The caches did not fill within `cache_sync_timeout`; the message says why (exit non-zero)."""


class BindError(OSError):
    """A health, metrics or webhook server could not bind its address.

    `option` is the ManagerOptions field (or `webhook_port`, the scaffolded manager's `--webhook-port`).
    """

    def __init__(self, option: str, address: str, reason: str) -> None:
        super().__init__(f"{option} {address}: {reason}")
        self.option, self.address, self.reason = option, address, reason

    @property
    def flag(self) -> str:
        """The scaffolded manager's command-line flag for `option` (kubebuilder's names)."""
        return "--" + self.option.replace("_", "-")

    def hint(self) -> str:
        """One line for a person: the flag, the address, the reason and a command that avoids it."""
        host = self.address.rpartition(":")[0] or "127.0.0.1"
        fix = ""
        if self.reason == "address already in use":
            # a *_port flag takes a bare port number, a *_address flag host:port
            value = "0" if self.option.endswith("_port") else f"{host}:0"
            fix = f'; pass another port, e.g. make run ARGS="{self.flag}={value}"'
        return f"{self.flag} {self.address}: {self.reason}{fix}"


def bind_error(option: str, address: str, err: OSError) -> BindError:
    reason = _os_reason(err)
    return BindError(option, address, reason)


def connection_source(transport: RestTransport) -> str:
    """`https://127.0.0.1:6443 (kubeconfig /tmp/kc, context envtest)`: the server and where it came from."""
    config = transport.config
    origin = []
    if config.source_file == "in-cluster":
        origin.append("in-cluster service account")
    elif config.source_file is not None:
        origin.append(f"kubeconfig {config.source_file}")
    if config.context_name:
        origin.append(f"context {config.context_name}")
    return transport.server + (f" ({', '.join(origin)})" if origin else "")


def credentials_waiting(transport: RestTransport) -> str | None:
    """What the transport's requests wait on for their credentials (an exec plugin still running), or
    None: a start that times out before the plugin's own timeout names the plugin, not only the
    caches that did not fill."""
    return transport.credentials.waiting()


def explain(transport: RestTransport, info: ResourceInfo, err: Exception) -> str:
    """Why listing `info`'s kind failed, as one line naming the fix where there is one."""
    if isinstance(err, ApiError) and err.code == 404:
        text = f'no matches for kind "{info.kind}" in version "{info.api_version}"'
        return f"{text}; run make install" if _is_custom(info) else text
    if isinstance(err, ServerTimeout) and err.__cause__ is not None:
        return f"cannot connect to {connection_source(transport)}: no answer within {transport.timeout:g}s"
    cause = _connection_cause(err)
    if cause is not None:
        return f"cannot connect to {connection_source(transport)}: {cause}"
    if isinstance(err, ApiError) and err.code == 401:
        return f"{connection_source(transport)} rejected our credentials (401 Unauthorized)"
    return str(err)


def parse_duration(text: str) -> float:
    """Seconds in a Go duration ("90s", "2m", "1m30s"), as kubebuilder's duration flags take them."""
    try:
        return durationpy.from_str(text).total_seconds()
    except (durationpy.DurationError, ValueError) as err:
        raise ValueError(f"{text!r} is not a duration like 30s, 2m or 1m30s") from err


def _is_custom(info: ResourceInfo) -> bool:
    from pyscaffold_op.apimachinery import CustomResource

    return isinstance(info.cls, type) and issubclass(info.cls, CustomResource)


def _connection_cause(err: Exception) -> str | None:
    """The reason of a failed TCP/TLS connection under `err`, or None when it is something else."""
    from pyscaffold_op.runtime.client.http1 import ConnectError, ServerDisconnected

    cause: Any = err.__cause__
    if isinstance(cause, ConnectError):
        return _connect_reason(cause.os_error)
    if isinstance(cause, ServerDisconnected):
        return "the server closed the connection"
    if type(cause).__module__.startswith("aiohttp"):  # through a kubeconfig's proxy-url
        import aiohttp

        if isinstance(cause, aiohttp.ClientConnectorCertificateError):
            return f"TLS certificate not trusted: {cause.certificate_error}"
        if isinstance(cause, aiohttp.ClientConnectorError):
            return _connect_reason(cause.os_error)
        if isinstance(cause, aiohttp.ServerDisconnectedError):
            return "the server closed the connection"
    return None


def _connect_reason(os_error: OSError) -> str:
    if isinstance(os_error, ssl.SSLCertVerificationError):
        return f"TLS certificate not trusted: {os_error}"
    if isinstance(os_error, ssl.SSLError):
        return f"TLS handshake failed: {os_error.reason or os_error}"
    return _os_reason(os_error)


def _os_reason(err: OSError) -> str:
    if err.errno == errno.ECONNREFUSED or isinstance(err, ConnectionRefusedError):
        return "connection refused"
    # The C library's wording, lower-cased like Go's syscall errors: aiohttp's own ("error while
    # attempting to bind on address ...") repeats what the caller already says.
    if err.errno is not None and err.errno > 0:
        return os.strerror(err.errno).lower()
    if err.strerror:  # resolver errors: negative errno, strerror "Name or service not known"
        return err.strerror.lower()
    return str(err) or type(err).__name__
