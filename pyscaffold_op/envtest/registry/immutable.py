"""The fields of built-in kinds an update may not change, as kube-apiserver v1.37.2's validation has
them (`ValidateImmutableField` and its kin in `pkg/apis/*/validation/validation.go`): each gives
`<path>: Invalid value: <new value>: field is immutable`.

The selectors of Deployments, ReplicaSets, StatefulSets and DaemonSets, a Job's template, and the
data of immutable ConfigMaps and Secrets are checked by `strategies` itself.
"""

from __future__ import annotations

import json
from typing import Any

from pyscaffold_op.apimachinery.fielderrors import Cause, cause
from pyscaffold_op.envtest.types import GR

_RBAC = "rbac.authorization.k8s.io"

# group-resource -> (path in the object, the field path the error names); Go's own names win where
# they differ (a PersistentVolume's `volumeMode` is reported without `spec.`, a CSIDriver's
# `attachRequired` as `attachedRequired`)
IMMUTABLE: dict[GR, tuple[tuple[tuple[str, ...], str], ...]] = {
    ("", "secrets"): ((("type",), "type"),),
    ("", "persistentvolumes"): ((("spec", "volumeMode"), "volumeMode"),),
    ("", "persistentvolumeclaims"): ((("spec", "volumeMode"), "volumeMode"),),
    ("apps", "statefulsets"): (
        (("spec", "volumeClaimTemplates"), "spec.volumeClaimTemplates"),
        (("spec", "serviceName"), "spec.serviceName"),
        (("spec", "podManagementPolicy"), "spec.podManagementPolicy"),
    ),
    ("batch", "jobs"): (
        (("spec", "selector"), "spec.selector"),
        (("spec", "completionMode"), "spec.completionMode"),
        (("spec", "podFailurePolicy"), "spec.podFailurePolicy"),
        (("spec", "backoffLimitPerIndex"), "spec.backoffLimitPerIndex"),
        (("spec", "managedBy"), "spec.managedBy"),
        (("spec", "successPolicy"), "spec.successPolicy"),
    ),
    (_RBAC, "rolebindings"): ((("roleRef",), "roleRef"),),
    (_RBAC, "clusterrolebindings"): ((("roleRef",), "roleRef"),),
    ("storage.k8s.io", "storageclasses"): (
        (("parameters",), "parameters"),
        (("provisioner",), "provisioner"),
        (("reclaimPolicy",), "reclaimPolicy"),
        (("volumeBindingMode",), "volumeBindingMode"),
    ),
    ("storage.k8s.io", "csidrivers"): (
        (("spec", "attachRequired"), "spec.attachedRequired"),
        (("spec", "volumeLifecycleModes"), "spec.volumeLifecycleModes"),
    ),
    ("scheduling.k8s.io", "priorityclasses"): ((("preemptionPolicy",), "preemptionPolicy"),),
    ("networking.k8s.io", "ingressclasses"): ((("spec", "controller"), "spec.controller"),),
    ("node.k8s.io", "runtimeclasses"): ((("handler",), "handler"),),
    ("discovery.k8s.io", "endpointslices"): ((("addressType",), "addressType"),),
}


def _at(obj: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        obj = obj.get(step) if isinstance(obj, dict) else None
    return obj


def go_value(value: Any) -> str:
    """A field.Invalid value as the server prints it: strings quoted, scalars plain, nil `null`
    (structs are printed with Go's %#v there: shown as JSON here)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, separators=(",", ":"))


# kinds whose immutable fields kube-apiserver v1.37.2 checks declaratively (`+k8s:immutable`): the
# error shows no value ("Invalid value: null")
DECLARATIVE: frozenset[GR] = frozenset(
    {
        ("storage.k8s.io", "storageclasses"),
        ("node.k8s.io", "runtimeclasses"),
        ("discovery.k8s.io", "endpointslices"),
    }
)


def update_causes(gr: GR, obj: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """The immutable fields of `gr` that `obj` changes from `old`."""
    out: list[Cause] = []
    if gr == ("scheduling.k8s.io", "priorityclasses") and obj.get("value") != old.get("value"):
        out.append(cause("FieldValueForbidden", "value", "Forbidden: may not be changed in an update."))
    for path, field in IMMUTABLE.get(gr, ()):
        new_value, old_value = _at(obj, path), _at(old, path)
        if new_value != old_value:
            shown = "null" if gr in DECLARATIVE else go_value(new_value)
            out.append(cause("FieldValueInvalid", field, f"Invalid value: {shown}: field is immutable"))
    return out
