"""The manager's command line: the standard flags, logging, and one log line per failure.

What kubebuilder writes into every project's `cmd/main.go` (flag definitions, `ctrl.SetLogger`, the
manager's options from the flags, `mgr.Start` and its error handling) is the same in every project, so
pyop keeps it here and a generated `__main__.py` is the project's part only: its name, its Lease and a
`setup` function the scaffolder registers controllers and webhooks in.

    def setup(mgr: Manager, flags: ManagerFlags) -> None:
        recorder = mgr.get_event_recorder("at-controller")
        AtReconciler(client=mgr.client, recorder=recorder).setup_with_manager(mgr)

    def main(argv: list[str] | None = None) -> int:
        return run_manager(setup, argv, prog="my_operator", leader_election_id="1a2b3c4d.example.org")

`python -m my_operator --help` lists the flags (`manager_flag_parser`). Every error the manager ends with
(no cluster configuration, a port taken, caches that did not sync, leadership lost, a shutdown that
timed out) is one ERROR line and exit status 1, never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pyscaffold_op.errors import PyopError
from pyscaffold_op.runtime.manager.manager import Manager

__all__ = [
    "ManagerFlags",
    "Setup",
    "build_manager",
    "manager_flag_parser",
    "parse_manager_flags",
    "run_manager",
]

WEBHOOK_CERT_PATH = "/tmp/k8s-webhook-server/serving-certs"


@dataclass(frozen=True)
class ManagerFlags:
    """The standard flags of a manager, parsed (`parse_manager_flags`); `setup` gets them too."""

    metrics_bind_address: str = "0"
    metrics_secure: bool = True
    metrics_cert_path: str | None = None
    metrics_cert_name: str = "tls.crt"
    metrics_cert_key: str = "tls.key"
    health_probe_bind_address: str = "127.0.0.1:8081"
    leader_elect: bool = False
    kubeconfig: str | None = None
    cache_sync_timeout: float = 120.0
    log_level: str = "info"
    log_format: str = "text"
    # controller-runtime's other zap flags (its zap.Options.BindFlags), as kubebuilder users type them
    zap_devel: bool = False
    zap_stacktrace_level: str | None = None
    zap_time_encoding: str | None = None
    webhook_port: int = 9443
    webhook_cert_path: str = WEBHOOK_CERT_PATH
    # --sharding and its companions (runtime.sharding.flags): off unless asked for
    sharding: bool = False
    shard_by: str = "object"
    shard_group: str = ""
    shard_identity: str | None = None
    shard_lease_duration: float = 15.0


Setup = Callable[[Manager, ManagerFlags], None]
"""Registers the project's controllers and webhooks with the manager (the generated `setup`)."""


def _duration(text: str) -> float:
    from pyscaffold_op.runtime.manager.startup import parse_duration

    try:
        return parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def manager_flag_parser(prog: str | None = None, description: str | None = None) -> argparse.ArgumentParser:
    """The parser of the standard flags; add a project's own flags to it before parsing."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument(
        "--metrics-bind-address",
        default="0",
        help='The address the metrics endpoint binds to, e.g. ":8443". "0" (the default) disables it.',
    )
    parser.add_argument(
        "--metrics-secure",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="Serve metrics over HTTPS, only to callers whose token may GET /metrics (TokenReview and "
        "SubjectAccessReview). --no-metrics-secure serves plain HTTP to anyone.",
    )
    parser.add_argument(
        "--metrics-cert-path",
        default=None,
        help="Folder holding the metrics server's certificate and key (reloaded when they change, as "
        "cert-manager rotates them; config/default/cert_metrics_manager_patch.yaml mounts them). "
        "Default: a self-signed certificate made at start.",
    )
    parser.add_argument(
        "--metrics-cert-name",
        default="tls.crt",
        help="The certificate's file name in --metrics-cert-path.",
    )
    parser.add_argument(
        "--metrics-cert-key",
        default="tls.key",
        help="The private key's file name in --metrics-cert-path.",
    )
    parser.add_argument(
        "--health-probe-bind-address",
        default="127.0.0.1:8081",
        help='The address the /healthz and /readyz probe endpoint binds to; "0" disables it. The default '
        'serves this host only; the Deployment passes ":8081" so the kubelet can probe it.',
    )
    parser.add_argument(
        "--leader-elect",
        action="store_true",
        help="Enable leader election for the controller manager, so only one replica is active at a time.",
    )
    parser.add_argument(
        "--kubeconfig",
        default=None,
        help="Path to a kubeconfig. Default: $KUBECONFIG, ~/.kube/config, or the in-cluster configuration.",
    )
    parser.add_argument(
        "--cache-sync-timeout",
        default="2m",
        type=_duration,
        help="How long the caches may take to fill at start, e.g. 30s or 2m; a kind the server does not "
        "serve (a CRD not installed yet) never fills, and the manager exits saying so.",
    )
    logs = parser.add_argument_group(
        "logging", "controller-runtime's --zap-* flags work as in a kubebuilder project's manager"
    )
    logs.add_argument(
        "--log-level",
        "--zap-log-level",  # what a kubebuilder user's fingers type (controller-runtime's zap flags)
        dest="log_level",
        default=None,
        type=_log_level,
        metavar="{debug,info,warning,error,panic,N}",
        help="The lowest level of log messages to print (default info; debug with --zap-devel). zap's "
        "verbosity numbers (1, 2, ...) mean debug.",
    )
    logs.add_argument(
        "--log-format",
        "--zap-encoder",
        dest="log_format",
        default=None,
        type=_log_format,
        metavar="{text,json,console}",
        help="Print logs as human-readable text (zap's console encoder) or as one JSON object per line.",
    )
    logs.add_argument(
        "--zap-devel",
        action="store_true",
        help="Development defaults, as controller-runtime's: debug level, text, tracebacks from warning "
        "up. Explicit flags win.",
    )
    logs.add_argument(
        "--zap-stacktrace-level",
        default=None,
        choices=["info", "warning", "error", "panic"],
        help="Write the traceback of a logged exception only at this level and above (the error is "
        "always written). Default: every traceback (zap's production default is error).",
    )
    logs.add_argument(
        "--zap-time-encoding",
        default=None,
        choices=list(_TIME_ENCODINGS),
        help="How each line's time is written (default: epoch seconds in JSON, RFC 3339 in text).",
    )
    parser.add_argument(
        "--webhook-port",
        type=int,
        default=9443,
        help="The port the webhook server binds to (once `pyop create webhook` added one).",
    )
    parser.add_argument(
        "--webhook-cert-path",
        default=WEBHOOK_CERT_PATH,
        help="Folder holding tls.crt and tls.key for the webhook server (reloaded when they change). When "
        "it has none (make run), a local CA and certificate are written there: trust its ca.crt.",
    )
    from pyscaffold_op.runtime.sharding.flags import add_sharding_flags

    add_sharding_flags(parser)
    return parser


def parse_manager_flags(
    argv: Sequence[str] | None = None, *, prog: str | None = None, description: str | None = None
) -> ManagerFlags:
    """The standard flags from `argv` (default: the process's arguments); --help prints them and exits."""
    args = manager_flag_parser(prog, description).parse_args(None if argv is None else list(argv))
    values = vars(args)
    devel = values["zap_devel"]  # controller-runtime's development defaults, under explicit flags
    values["log_level"] = values["log_level"] or ("debug" if devel else "info")
    values["log_format"] = values["log_format"] or "text"
    values["zap_stacktrace_level"] = values["zap_stacktrace_level"] or ("warning" if devel else None)
    return ManagerFlags(**values)


# zap's time encoders (runtime.log.TIME_ENCODINGS; not imported here, so --help loads no logging code)
_TIME_ENCODINGS = ("epoch", "millis", "nano", "iso8601", "rfc3339", "rfc3339nano")
_LEVELS = {"debug": "debug", "info": "info", "warn": "warning", "warning": "warning", "error": "error"}


def _log_level(text: str) -> str:
    """A level name, zap's `panic` (critical), or zap's verbosity number (> 0: debug)."""
    value = text.strip().lower()
    if value in _LEVELS:
        return _LEVELS[value]
    if value in ("panic", "dpanic", "fatal", "critical"):
        return "critical"
    if value.isdigit() and int(value) > 0:
        return "debug"
    raise argparse.ArgumentTypeError(
        f"invalid level {text!r}: debug, info, warning, error, panic or a number > 0"
    )


def _log_format(text: str) -> str:
    value = {"console": "text"}.get(text, text)
    if value not in ("text", "json"):
        raise argparse.ArgumentTypeError(f"invalid format {text!r}: text (or console) or json")
    return value


def build_manager(
    flags: ManagerFlags,
    setup: Setup,
    *,
    leader_election_id: str,
    namespace: str | None = None,
) -> Manager:
    """The manager the flags describe, with `setup`'s controllers and webhooks registered."""
    from pyscaffold_op.runtime.client.config import load_config
    from pyscaffold_op.runtime.manager.manager import ManagerOptions
    from pyscaffold_op.runtime.sharding.flags import sharding_options

    mgr = Manager(
        load_config(kubeconfig=flags.kubeconfig),
        ManagerOptions(
            metrics_bind_address=flags.metrics_bind_address,
            metrics_secure=flags.metrics_secure,
            metrics_cert_dir=flags.metrics_cert_path,
            metrics_cert_name=flags.metrics_cert_name,
            metrics_cert_key=flags.metrics_cert_key,
            health_probe_bind_address=flags.health_probe_bind_address,
            leader_election=flags.leader_elect,
            leader_election_id=leader_election_id,
            cache_sync_timeout=flags.cache_sync_timeout,
            namespace=namespace,
            sharding=sharding_options(flags),
        ),
    )
    setup(mgr, flags)
    return mgr


def run_manager(
    setup: Setup,
    argv: Sequence[str] | None = None,
    *,
    prog: str | None = None,
    description: str | None = None,
    leader_election_id: str,
    watch_namespace_env: str | None = None,
) -> int:
    """Parse the standard flags, set up logging, build the manager, run it until it stops; the exit status.

    `watch_namespace_env` names the variable holding the one namespace to watch (a namespaced project's
    Deployment sets WATCH_NAMESPACE to its own); unset or empty, every namespace is watched.
    """
    from pyscaffold_op.runtime.log import setup_logging
    from pyscaffold_op.runtime.loops import run
    from pyscaffold_op.runtime.manager.manager import LeaderElectionLost, ShutdownTimeout
    from pyscaffold_op.runtime.manager.startup import BindError, CacheSyncTimeout

    flags = parse_manager_flags(argv, prog=prog, description=description)
    setup_logging(
        flags.log_level,
        flags.log_format,
        time_encoding=flags.zap_time_encoding,
        stacktrace_level=flags.zap_stacktrace_level,
    )
    log = logging.getLogger(prog or "manager")
    namespace = (os.environ.get(watch_namespace_env) or None) if watch_namespace_env else None
    try:
        mgr = build_manager(flags, setup, leader_election_id=leader_election_id, namespace=namespace)
    except PyopError as err:  # no cluster configuration, for example: one line, not a traceback
        log.error("%s", err)
        return 1
    log.info("starting manager")
    try:
        run(mgr.start())  # asyncio.run; on uvloop where installed, unless PYOP_RUNTIME_LOOP=asyncio
    except BindError as err:  # a port taken by another manager: name the flag that moves it
        log.error("%s", err.hint())
        return 1
    except (LeaderElectionLost, ShutdownTimeout, CacheSyncTimeout) as err:  # one line, not a traceback
        log.error("%s", err)
        return 1
    return 0
