"""Binding a Pod to a Node, as the pods/binding subresource does it (BindingREST.setPodNodeAndMetadata):
one write of the stored Pod (no strategy, no managedFields entry: the field manager tracks the Binding
object, not the Pod) that sets spec.nodeName, merges the binding's annotations and sets the
PodScheduled condition True. The subresource and the simulated scheduler both bind through it."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.types import Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Store

PODS = ("", "pods")


def bind(
    store: Store,
    namespace: str,
    name: str,
    node: str,
    now: str,
    *,
    annotations: dict[str, str] | None = None,
    dry_run: bool = False,
) -> Obj:
    """Bind the Pod; 409 (the real texts) when it is being deleted, already bound or gated."""
    old = store.find(PODS, namespace, name)
    if old is None:
        raise E.not_found("", "pods", name)
    spec = old.get("spec") or {}
    if old["metadata"].get("deletionTimestamp"):
        raise E.conflict(
            "", "pods/binding", name, f"pod {name} is being deleted, cannot be assigned to a host"
        )
    if spec.get("nodeName"):
        raise E.conflict(
            "", "pods/binding", name, f'pod {name} is already assigned to node "{spec["nodeName"]}"'
        )
    if spec.get("schedulingGates"):
        raise E.conflict("", "pods/binding", name, f"pod {name} has non-empty .spec.schedulingGates")
    new = copy.deepcopy(old)
    new["spec"]["nodeName"] = node
    status = new.setdefault("status", {})
    status.pop("nominatedNodeName", None)  # ClearingNominatedNodeNameAfterBinding
    if annotations:
        new["metadata"]["annotations"] = {**(new["metadata"].get("annotations") or {}), **annotations}
    conditions = status.get("conditions") or []
    current = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
    if current is None:
        conditions.append(
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
        )
    elif current.get("status") != "True":  # UpdatePodCondition: a changed status is a transition
        current.update({"status": "True", "lastTransitionTime": now})
        current.pop("reason", None)
        current.pop("message", None)
    status["conditions"] = conditions
    if dry_run:
        return new
    store.put(PODS, (namespace, name), old, new)
    store.run_controllers()
    return store.find(PODS, namespace, name) or new
