"""Differences between the emulator and kube-apiserver the corpus accepts (docs/envtest.md, "The
conformance corpus"), as scenario name patterns (fnmatch) with the reason each is accepted.

`DELIBERATE`: the emulator differs on purpose (or the oracle runs without a controller-manager).
`KNOWN_GAPS`: differences the corpus found and no one has closed yet; each is a fidelity bug to fix,
listed so the corpus guards everything else meanwhile. Shrink this list; never grow it silently.
"""

from __future__ import annotations

import fnmatch

_R1 = "JSON patch error codes, patches producing wrong types, unsupported patch types"
_R2 = "CRD schema corner cases: error causes and codes of invalid values, list/table details"

_GAP5 = (
    "Apply managedFields of Update entries and after force; empty maps of built-ins dropped by Go's "
    "omitempty; typed-patch errors (500 on the server)"
)

DELIBERATE: dict[str, str] = {
    "delete/foreground": "the emulator's garbage collector runs; the oracle has no kube-controller-manager, "
    "so the owner stays with its foregroundDeletion finalizer",
    "delete/orphan": "as delete/foreground, with the orphan finalizer",
    "crud/pod@v1/*": "the oracle runs without the ServiceAccount admission plugin (no controller-manager "
    "makes the default ServiceAccount); the emulator sets serviceAccountName like a cluster",
    "discovery/version": "the emulator answers /version with its own build fields",
    "crud/job@batch-v1/delete": "batch/v1 Jobs orphan their pods by default: the emulator's garbage "
    "collector removes the orphan finalizer at once, the oracle's Job stays (no controller-manager)",
    "crud/persistentvolumeclaim@v1/delete": "the emulator's pvc-protection controller removes the "
    "kubernetes.io/pvc-protection finalizer of an unused claim; the oracle's claim stays "
    "(no controller-manager)",
    "fieldvalidation/pod@v1/*": "as crud/pod@v1/*",
    "protobuf/pod@v1/*": "as crud/pod@v1/*",
}

KNOWN_GAPS: dict[str, str] = {
    "patch/json-bad-op": _R1,
    "patch/json-remove-missing": _R1,
    "patch/json-rv-test": _R1,
    "patch/json-test-fails": _R1,
    "patch/patch-deployment-replicas-string": _R1,
    "patch/patch-strict-unknown": _R1,
    "patch/patch-wrong-type": _R1,
    "patch/unsupported-patch-type": _R1,
    "apply/deployment": _GAP5,
    "apply/deployment-containers-by-name": _GAP5,
    "apply/deployment-drop-container": _GAP5,
    "apply/deployment-replicas-conflict": _GAP5,
    "apply/deployment-replicas-force": _GAP5,
    "apply/deployment-unknown-nested": _GAP5,
    "apply/deployment-wrong-type": _GAP5,
    "apply/empty-map-only": _GAP5,
    "apply/empty-map-then-key": _GAP5,
    "apply/same-value-shared": _GAP5,
    "apply/strict-unknown": _GAP5,
    "custom/apply-atomic": _R2,
    "custom/apply-atomic-force": _R2,
    "custom/apply-list-map": _R2,
    "custom/cluster-scoped-in-namespace-path": _R2,
    "custom/create-strict/date-time-bad": _R2,
    "custom/create-strict/enabled-string": _R2,
    "custom/create-strict/int-or-string-bool": _R2,
    "custom/create-strict/labels-wrong-type": _R2,
    "custom/create-strict/max-items": _R2,
    "custom/create-strict/not-nullable-null": _R2,
    "custom/create-strict/ports-missing-key": _R2,
    "custom/create-strict/ratio-string": _R2,
    "custom/create-strict/replicas-float": _R2,
    "custom/create-strict/replicas-negative": _R2,
    "custom/create-strict/replicas-string": _R2,
    "custom/create-strict/size-enum": _R2,
    "custom/create-strict/spec-wrong-type": _R2,
    "custom/create/date-time-bad": _R2,
    "custom/create/enabled-string": _R2,
    "custom/create/int-or-string-bool": _R2,
    "custom/create/labels-wrong-type": _R2,
    "custom/create/max-items": _R2,
    "custom/create/not-nullable-null": _R2,
    "custom/create/ports-missing-key": _R2,
    "custom/create/ratio-string": _R2,
    "custom/create/replicas-float": _R2,
    "custom/create/replicas-negative": _R2,
    "custom/create/replicas-string": _R2,
    "custom/create/size-enum": _R2,
    "custom/create/spec-wrong-type": _R2,
    "custom/delete": _R2,
    "custom/list": _R2,
    "custom/unknown-resource": _R2,
    "custom/unknown-version": _R2,
    "custom/wrong-kind": _R2,
}


def reason_for(name: str) -> str | None:
    for table, label in ((DELIBERATE, "deliberate"), (KNOWN_GAPS, "known gap")):
        for pattern, reason in table.items():
            if fnmatch.fnmatchcase(name, pattern):
                return f"{label}: {reason}"
    return None
