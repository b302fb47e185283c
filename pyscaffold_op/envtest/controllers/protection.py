"""The storage protection controllers (kube-controller-manager's pvc-protection, pv-protection and
vac-protection): they remove the finalizer the StorageObjectInUseProtection admission plugin adds
(`admission.plugins.PROTECTION_FINALIZERS`) once the object being deleted is no longer used: a claim
by no scheduled pod's volume, a volume by no bound claim, a class by no claim or volume.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyscaffold_op.envtest.admission.plugins import PROTECTION_FINALIZERS
from pyscaffold_op.envtest.storage.storeaccess import StoreAccess, write_metadata
from pyscaffold_op.envtest.types import GR, Key, Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Event

_PODS: GR = ("", "pods")
_PVCS: GR = ("", "persistentvolumeclaims")
_PVS: GR = ("", "persistentvolumes")
_VACS: GR = ("storage.k8s.io", "volumeattributesclasses")
# a change of these may free a protected object: look at every terminating one again
_USERS: frozenset[GR] = frozenset({_PODS, _PVCS, _PVS})


class StorageProtection:
    def __init__(self, store: StoreAccess) -> None:
        self.store = store
        self._terminating: set[tuple[GR, Key]] = set()  # protected objects being deleted
        self._dirty = False

    def observe(self, event: Event) -> None:
        meta = event.obj["metadata"]
        if event.gr in PROTECTION_FINALIZERS:
            key = (meta.get("namespace", ""), meta["name"])
            held = PROTECTION_FINALIZERS[event.gr] in (meta.get("finalizers") or [])
            if event.type != "DELETED" and meta.get("deletionTimestamp") and held:
                self._terminating.add((event.gr, key))
                self._dirty = True
            else:
                self._terminating.discard((event.gr, key))
        if event.gr in _USERS and self._terminating:
            self._dirty = True

    def reconcile(self) -> bool:
        if not self._dirty:
            return False
        self._dirty = False
        worked = False
        for gr, key in sorted(self._terminating):
            obj = self.store.find(gr, *key)
            if obj is None or self._in_use(gr, obj):
                continue
            finalizer = PROTECTION_FINALIZERS[gr]
            rest = [f for f in obj["metadata"].get("finalizers") or [] if f != finalizer]
            self._terminating.discard((gr, key))
            write_metadata(self.store, gr, key, obj, {"finalizers": rest or None})
            worked = True
        return worked

    def _objects(self, gr: GR, namespace: str | None = None) -> list[Obj]:
        keys = [k for k in self.store.keys_in(gr) if namespace is None or k[0] == namespace]
        return [o for k in keys if (o := self.store.find(gr, *k)) is not None]

    def _in_use(self, gr: GR, obj: Obj) -> bool:
        name = obj["metadata"]["name"]
        if gr == _PVCS:
            return any(
                _pod_uses_claim(p, name) for p in self._objects(_PODS, obj["metadata"].get("namespace", ""))
            )
        if gr == _PVS:
            return (obj.get("status") or {}).get("phase") == "Bound"
        return any(
            (o.get("spec") or {}).get("volumeAttributesClassName") == name
            for o in (*self._objects(_PVCS), *self._objects(_PVS))
        )


def _pod_uses_claim(pod: Obj, claim: str) -> bool:
    """podUsesPVCForDeletion: a scheduled pod naming the claim, or its generic ephemeral volume's
    claim (`<pod>-<volume>`) while the pod is not shut down."""
    spec = pod.get("spec") or {}
    if not spec.get("nodeName"):
        return False
    meta = pod["metadata"]
    shut_down = bool(meta.get("deletionTimestamp")) and meta.get("deletionGracePeriodSeconds") == 0
    for volume in spec.get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        if (volume.get("persistentVolumeClaim") or {}).get("claimName") == claim:
            return True
        if "ephemeral" in volume and not shut_down and f"{meta['name']}-{volume.get('name')}" == claim:
            return True
    return False
