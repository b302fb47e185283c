"""Differences between the emulator and the cluster the workload corpus accepts, each with its reason
(docs/envtest.md, "The workload corpus"): `(scenario pattern, difference pattern) -> reason`, both
fnmatch patterns (a difference reads `path: what`).

`FIDELITY`: the emulator differs and should not; each is an item of issue 36 being fixed (NAME=fidelity
on branch h-fidelity) or found by this corpus. Shrink it as fixes land; never grow it silently.
`DELIBERATE`: the emulator differs on purpose, or the cluster is not what a kind cluster would be
(kwok plays the kubelet; see docs/envtest.md, "Cluster mode").
"""

from __future__ import annotations

import fnmatch

FIDELITY: dict[tuple[str, str], str] = {}

DELIBERATE: dict[tuple[str, str], str] = {}


def reason_for(scenario: str, difference: str) -> str | None:
    for table, label in ((DELIBERATE, "deliberate"), (FIDELITY, "fidelity")):
        for (name, what), reason in table.items():
            if fnmatch.fnmatchcase(scenario, name) and fnmatch.fnmatchcase(difference, what):
                return f"{label}: {reason}"
    return None
