"""Documented deliberate differences between the emulator and kube-apiserver (docs/envtest.md,
"The conformance corpus"): scenario name patterns (fnmatch) and the reason each is accepted."""

from __future__ import annotations

import fnmatch

DELIBERATE: dict[str, str] = {}


def reason_for(name: str) -> str | None:
    for pattern, reason in DELIBERATE.items():
        if fnmatch.fnmatchcase(name, pattern):
            return reason
    return None
