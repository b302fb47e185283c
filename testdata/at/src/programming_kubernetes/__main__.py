# Copyright The programming-kubernetes Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""The programming-kubernetes manager: runs every controller of the project.

Start it with `python -m programming_kubernetes` (`make run`); the container image runs the same command.
"""

from __future__ import annotations

import argparse
import logging
import sys

from pyscaffold_op.errors import PyopError
from pyscaffold_op.runtime import (
    BindError,
    CacheSyncTimeout,
    LeaderElectionLost,
    Manager,
    ManagerOptions,
    ShutdownTimeout,
    load_config,
    parse_duration,
    run,
    setup_logging,
)

from programming_kubernetes.controllers.at_controller import AtReconciler

# +pyop:scaffold:imports

# The name of the Lease used for leader election; stable for the project, unique within its namespace.
LEADER_ELECTION_ID = "6f5b1bd9.viper.run"

log = logging.getLogger("programming_kubernetes")


def _duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="programming_kubernetes",
        description="The programming-kubernetes controller manager.",
    )
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
        help="Folder holding tls.crt and tls.key for the metrics server (reloaded when they change). "
        "Default: a self-signed certificate made at start.",
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
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="The lowest level of log messages to print.",
    )
    parser.add_argument(
        "--log-format",
        default="text",
        choices=["json", "text"],
        help="Print logs as human-readable text or as one JSON object per line.",
    )
    return parser.parse_args(argv)


def build_manager(args: argparse.Namespace) -> Manager:
    """Create the manager and register every controller with it."""
    mgr = Manager(
        load_config(kubeconfig=args.kubeconfig),
        ManagerOptions(
            metrics_bind_address=args.metrics_bind_address,
            metrics_secure=args.metrics_secure,
            metrics_cert_dir=args.metrics_cert_path,
            health_probe_bind_address=args.health_probe_bind_address,
            leader_election=args.leader_elect,
            leader_election_id=LEADER_ELECTION_ID,
            cache_sync_timeout=args.cache_sync_timeout,
        ),
    )
    AtReconciler(
        client=mgr.client,
        recorder=mgr.get_event_recorder_for("at-controller"),
    ).setup_with_manager(mgr)
    # +pyop:scaffold:controllers
    return mgr


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    setup_logging(args.log_level, args.log_format)
    try:
        mgr = build_manager(args)
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


if __name__ == "__main__":
    sys.exit(main())
