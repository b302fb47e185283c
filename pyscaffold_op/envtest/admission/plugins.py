"""The mutating admission plugins a default kube-apiserver runs that change what gets stored
(their defaults are not the registry's: see strategies.py for those)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyscaffold_op.envtest.registry.resources import ServedResource

# DefaultTolerationSeconds: --default-not-ready-toleration-seconds and --default-unreachable-... (300)
_DEFAULT_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
DEFAULT_TOLERATION_SECONDS = 300


# StorageObjectInUseProtection: the finalizer it adds on create, per group-resource; the protection
# controllers (controllers/protection.py) remove it once the object is unused
PROTECTION_FINALIZERS = {
    ("", "persistentvolumeclaims"): "kubernetes.io/pvc-protection",
    ("", "persistentvolumes"): "kubernetes.io/pv-protection",
    ("storage.k8s.io", "volumeattributesclasses"): "kubernetes.io/vac-protection",
}


def admit_create(info: ServedResource, obj: dict[str, Any]) -> None:
    if info.group_resource == ("", "pods"):
        default_toleration_seconds(obj)
    finalizer = PROTECTION_FINALIZERS.get(info.group_resource)
    if finalizer is not None:
        meta = obj.setdefault("metadata", {})
        finalizers = meta.get("finalizers") if isinstance(meta.get("finalizers"), list) else []
        if finalizer not in finalizers:
            meta["finalizers"] = [*finalizers, finalizer]


def default_toleration_seconds(pod: dict[str, Any]) -> None:
    """Pods tolerate NoExecute not-ready/unreachable taints for 300 s unless they say otherwise."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    tolerations = spec.get("tolerations")
    if not isinstance(tolerations, list):
        tolerations = []
    for key in _DEFAULT_TOLERATIONS:
        if any(_tolerates(t, key) for t in tolerations if isinstance(t, dict)):
            continue
        tolerations.append(
            {
                "key": key,
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
            }
        )
    spec["tolerations"] = tolerations


def _tolerates(t: dict[str, Any], key: str) -> bool:
    """Whether a toleration already covers the NoExecute taint `key` (then the plugin adds none)."""
    if t.get("effect") not in (None, "", "NoExecute"):
        return False
    return t.get("key") in (None, "", key)
