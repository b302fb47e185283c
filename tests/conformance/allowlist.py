"""Differences between the emulator and kube-apiserver the corpus accepts (docs/envtest.md, "The
conformance corpus"), as scenario name patterns (fnmatch) with the reason each is accepted.

`DELIBERATE`: the emulator differs on purpose (or the oracle runs without a controller-manager).
`KNOWN_GAPS`: differences the corpus found and no one has closed yet; each is a fidelity bug to fix,
listed so the corpus guards everything else meanwhile. Shrink this list; never grow it silently.
"""

from __future__ import annotations

import fnmatch

DELIBERATE: dict[str, str] = {
    "delete/foreground": "the emulator's garbage collector runs; the oracle has no kube-controller-manager, "
    "so the owner stays with its foregroundDeletion finalizer",
    "delete/orphan": "as delete/foreground, with the orphan finalizer",
    "crud/job@batch-v1/delete": "batch/v1 Jobs orphan their pods by default: the emulator's garbage "
    "collector removes the orphan finalizer at once, the oracle's Job stays (no controller-manager)",
    "crud/persistentvolumeclaim@v1/delete": "the emulator's pvc-protection controller removes the "
    "kubernetes.io/pvc-protection finalizer of an unused claim; the oracle's claim stays "
    "(no controller-manager)",
}

KNOWN_GAPS: dict[str, str] = {}  # empty: every gap the corpus found is closed

# DELIBERATE scenarios judged by a cluster's control plane (test_cluster.py) that do not agree, each with
# why; the issue 36 items are being fixed by NAME=fidelity (branch h-fidelity): shrink this as they land
CLUSTER_PENDING: dict[str, str] = {
    "crud/job@batch-v1/delete": "the DELETE answers with the Job as its controller has written it so far, "
    "a moment after the create: which status fields are there is a race on both servers (the GETs after "
    "it, once the garbage collector is done, agree)",
}


def cluster_reason_for(name: str) -> str | None:
    for pattern, reason in CLUSTER_PENDING.items():
        if fnmatch.fnmatchcase(name, pattern):
            return reason
    return None


def reason_for(name: str) -> str | None:
    for table, label in ((DELIBERATE, "deliberate"), (KNOWN_GAPS, "known gap")):
        for pattern, reason in table.items():
            if fnmatch.fnmatchcase(name, pattern):
                return f"{label}: {reason}"
    return None
