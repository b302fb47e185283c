"""`--sharding` and its companions on a manager's command line.

    parser = argparse.ArgumentParser()
    add_sharding_flags(parser)
    args = parser.parse_args()
    ManagerOptions(..., sharding=sharding_options(args))   # None unless --sharding

Scale the Deployment to N replicas and each takes ~1/N of every sharded controller's keys.
"""

from __future__ import annotations

import argparse
from typing import Any

from pyscaffold_op.runtime.sharding.shards import ShardingOptions


def _duration(text: str) -> float:
    from pyscaffold_op.runtime.manager.startup import parse_duration

    try:
        return parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_sharding_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("sharding")
    group.add_argument(
        "--sharding",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="Split the controllers' objects among the running replicas (one Lease each), instead of "
        "one active replica: scale the Deployment to scale reconciling.",
    )
    group.add_argument(
        "--shard-by",
        choices=["object", "owner"],
        default="object",
        help='Assign a request by its own namespace/name ("object") or by its controller owner\'s '
        '("owner", keeps an object and its children on one replica).',
    )
    group.add_argument(
        "--shard-group", default="", help="The shard group's name (default: the leader election id)."
    )
    group.add_argument(
        "--shard-identity", default=None, help="This replica's member name (default: hostname + random)."
    )
    group.add_argument(
        "--shard-lease-duration",
        type=_duration,
        default=15.0,
        help="How long a silent replica keeps its objects, e.g. 15s.",
    )


def sharding_options(args: argparse.Namespace | Any) -> ShardingOptions | None:
    """The options `--sharding` and its companions ask for (an argparse namespace or the manager's
    parsed flags); None unless `--sharding`."""
    if not getattr(args, "sharding", False):
        return None
    duration = args.shard_lease_duration
    return ShardingOptions(
        name=args.shard_group,
        identity=args.shard_identity,
        by=args.shard_by,
        lease_duration=duration,
        renew_deadline=duration * 2 / 3,
        retry_period=duration * 2 / 15,
    )
