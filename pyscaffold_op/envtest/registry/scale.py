"""The `/scale` subresource: an autoscaling/v1 Scale view of an object's replicas."""

from __future__ import annotations

from typing import Any

from pyscaffold_op.envtest.registry.resources import ServedResource


def get_path(obj: Any, path: str) -> Any:
    for part in path.lstrip(".").split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def set_path(obj: dict[str, Any], path: str, value: Any) -> None:
    parts = path.lstrip(".").split(".")
    for part in parts[:-1]:
        obj = obj.setdefault(part, {})
    obj[parts[-1]] = value


def to_scale(info: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
    sc = info.scale or {}
    meta = obj["metadata"]
    selector = get_path(obj, sc.get("labelSelectorPath", ".status.selector") or ".status.selector")
    if isinstance(selector, dict):
        selector = ",".join(f"{k}={v}" for k, v in (selector.get("matchLabels") or {}).items())
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": get_path(obj, sc.get("specReplicasPath", ".spec.replicas")) or 0},
        "status": {
            "replicas": get_path(obj, sc.get("statusReplicasPath", ".status.replicas")) or 0,
            **({"selector": selector} if selector else {}),
        },
    }
