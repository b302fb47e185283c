"""The Namespace registry's own rules (kube-apiserver v1.37.2's `pkg/registry/core/namespace`): the
`kubernetes` finalizer in `spec.finalizers`, which only the `/finalize` subresource may change, the
phase `/status` may set, and when a terminating namespace is finally removed.

A namespace is removed when it is being deleted and neither `metadata.finalizers` nor
`spec.finalizers` hold it (`ShouldDeleteNamespaceDuringUpdate`). Without a namespace controller
(envtest's bare kube-apiserver) nothing removes `kubernetes` from `spec.finalizers`, so a deleted
namespace stays `Terminating` until a client PUTs `/finalize` without it, as Go's envtest suites do.
"""

from __future__ import annotations

from typing import Any

from pyscaffold_op.apimachinery.fielderrors import Cause, cause
from pyscaffold_op.apimachinery.validation import is_qualified_name
from pyscaffold_op.envtest.types import GR, NAMESPACES, Obj, as_obj

KUBERNETES = "kubernetes"
_STANDARD = ("kubernetes", "orphan", "foregroundDeletion")  # helper.IsStandardFinalizerName


def spec_finalizers(obj: Obj) -> list[Any]:
    spec = obj.get("spec")
    finalizers = spec.get("finalizers") if isinstance(spec, dict) else None
    return finalizers if isinstance(finalizers, list) else []


def held(gr: GR, obj: Obj) -> bool:
    """Whether a namespace's `spec.finalizers` keep it although its metadata no longer does."""
    return gr == NAMESPACES and bool(spec_finalizers(obj))


def prepare_create(obj: Obj) -> None:
    """PrepareForCreate: phase Active, `kubernetes` added to the finalizers given; the name label
    (Canonicalize)."""
    obj["status"] = {"phase": "Active"}
    spec = as_obj(obj.get("spec"))
    finalizers = spec_finalizers(obj)
    if KUBERNETES not in finalizers:
        finalizers = [*finalizers, KUBERNETES]
    obj["spec"] = {**spec, "finalizers": finalizers}
    meta = obj.setdefault("metadata", {})
    meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta.get("name", "")


def prepare_update(old: Obj, new: Obj, subresource: str) -> None:
    """PrepareForUpdate: a plain update keeps the stored `spec.finalizers`; `/finalize` changes only
    them (and metadata). The status is the stored one either way (the caller keeps it)."""
    if subresource == "finalize":
        spec = new.get("spec")
        if isinstance(spec, dict) and spec.get("finalizers") == []:
            del spec["finalizers"]  # omitempty: an emptied list is not there
        return
    spec = as_obj(new.get("spec"))
    kept = (old.get("spec") or {}).get("finalizers")
    spec = {k: v for k, v in spec.items() if k != "finalizers"}
    if kept is not None:
        spec["finalizers"] = kept
    if spec or "spec" in old:
        new["spec"] = spec
    else:
        new.pop("spec", None)


def _name_causes(name: Any, field: str) -> list[Cause]:
    """validateFinalizerName: a qualified name, and without a domain a standard one."""
    if not isinstance(name, str):
        return []
    out = [
        cause("FieldValueInvalid", field, f'Invalid value: "{name}": {why}')
        for why in is_qualified_name(name)
    ]
    if "/" not in name and name not in _STANDARD:
        out.append(
            cause(
                "FieldValueInvalid",
                field,
                f'Invalid value: "{name}": '
                "name is neither a standard finalizer name nor is it fully qualified",
            )
        )
    return out


def create_causes(obj: Obj) -> list[Cause]:
    """ValidateNamespace's `spec.finalizers` (the list's path, not the item's)."""
    return [c for name in spec_finalizers(obj) for c in _name_causes(name, "spec.finalizers")]


def finalize_causes(obj: Obj) -> list[Cause]:
    """ValidateNamespaceFinalizeUpdate: each of `spec.finalizers` on its own path."""
    return [
        c for i, name in enumerate(spec_finalizers(obj)) for c in _name_causes(name, f"spec.finalizers[{i}]")
    ]


def status_causes(obj: Obj) -> list[Cause]:
    """ValidateNamespaceStatusUpdate: the phase follows `deletionTimestamp`."""
    phase = (obj.get("status") or {}).get("phase", "") if isinstance(obj.get("status"), dict) else ""
    if obj["metadata"].get("deletionTimestamp"):
        want, why = "Terminating", "may only be 'Terminating' if `deletionTimestamp` is not empty"
    else:
        want, why = "Active", "may only be 'Active' if `deletionTimestamp` is empty"
    if phase == want:
        return []
    return [cause("FieldValueInvalid", "status.Phase", f'Invalid value: "{phase}": {why}')]
