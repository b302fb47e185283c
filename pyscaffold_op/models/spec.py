"""The compact Kubernetes spec the models were generated from (`_spec.json`), for code that needs more
than the models carry: int32/int64 formats, required lists, list/map types and keys, GVKs, plurals and
the `+default` overlay. The emulator's defaulting reads it; the CRD generator can embed from it.

Definitions are keyed by short name (`core_v1.PodSpec`, `meta_v1.LabelSelector`); shared apimachinery
types keep their full name (`io.k8s.apimachinery.pkg.util.intstr.IntOrString`). `$ref`s use the same
names. Loaded on first use.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

_PATH = Path(__file__).with_name("_spec.json")


@functools.cache
def load() -> dict[str, Any]:
    """The whole document: `version` (the Kubernetes release), `source`, `definitions`."""
    return json.loads(_PATH.read_text())


def definition(name: str) -> dict[str, Any]:
    """One definition by short name; KeyError when the models have no such type."""
    return load()["definitions"][name]


@functools.cache
def kinds() -> dict[tuple[str, str, str], str]:
    """(group, version, kind) -> definition name of every top-level kind."""
    out = {}
    for name, schema in load()["definitions"].items():
        gvk = schema.get("x-kubernetes-group-version-kind")
        if gvk:
            out[(gvk["group"], gvk["version"], gvk["kind"])] = name
    return out
