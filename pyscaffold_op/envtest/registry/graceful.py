"""Graceful deletion: how long a DELETE leaves an object in place (the pod strategy's
CheckGracefulDelete). Only Pods have a grace period; the kubelet removes them once stopped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyscaffold_op.envtest.registry.resources import ServedResource

DEFAULT_POD_GRACE = 30


def grace_seconds(info: ServedResource, obj: dict[str, Any], requested: int | None) -> int:
    """The grace period of a DELETE: the request's `gracePeriodSeconds`, else the Pod's
    `terminationGracePeriodSeconds`; 0 (removed at once) for anything but a Pod bound to a node
    and not yet terminal, as nothing else would ever finish the deletion."""
    if info.group_resource != ("", "pods"):
        return 0
    spec = obj.get("spec") or {}
    if not spec.get("nodeName") or (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return 0
    if requested is None:
        requested = spec.get("terminationGracePeriodSeconds", DEFAULT_POD_GRACE)
    if not isinstance(requested, int) or requested < 0:
        return 1  # a negative grace period means 1 since Kubernetes 1.27
    return requested


def deadline(grace: int) -> str:
    """The deletionTimestamp of a deletion with this grace period: when it should be over."""
    return (datetime.now(UTC) + timedelta(seconds=grace)).strftime("%Y-%m-%dT%H:%M:%SZ")


def deleted_at_once(info: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
    """The answer to a DELETE that removed `obj` at once. A Pod's strategy is a graceful one: its
    BeforeDelete stamped the object (deletionTimestamp now, grace 0, generation bumped) before the
    zero grace period let the store remove it, and the DELETE answers with that stamped object."""
    if info.group_resource != ("", "pods"):
        return obj
    meta = {**obj["metadata"], "deletionTimestamp": deadline(0), "deletionGracePeriodSeconds": 0}
    if meta.get("generation", 0) > 0:
        meta["generation"] += 1
    return {**obj, "metadata": meta}
