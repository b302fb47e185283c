"""Read YAML 1.2 (the core schema, as ruamel.yaml's safe loader reads it) with PyYAML's libyaml parser.

PROJECT was written by ruamel.yaml, which speaks YAML 1.2: `group: no` is the string "no" there, and
PyYAML (YAML 1.1) would read False; `017` is 17, not 15. Reading or writing a PROJECT with ruamel
costs ~0.5-1 ms per resource (pure Python), libyaml a tenth of it, and `create api` did both, so it
slowed down as kinds accumulated. PROJECT is therefore read here: PyYAML with YAML 1.2's plain-scalar
rules (tests hold it equal to ruamel's on the scalars where the two YAML versions differ), and written by
`pyscaffold_op.yamlio.dump_project`, which quotes what any of YAML 1.1, 1.2 or Go's YAML (kubebuilder
reads PROJECT) would read otherwise.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from pyscaffold_op.yamlio import YAML12_IMPLICIT, dump_project

__all__ = ["Loader", "dump", "load"]

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Loader(_BaseLoader):
    """PyYAML's safe loader with YAML 1.2's resolution of plain scalars (bool, int, float, null)."""


# drop YAML 1.1's resolvers (yes/no/on/off booleans, sexagesimals, 017 octals)
Loader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in YAML12_IMPLICIT:
    Loader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(f"^(?:{_pattern})$"), list(_first))


def _int(loader: Any, node: yaml.ScalarNode) -> int:
    text = loader.construct_scalar(node).replace("_", "")
    sign = -1 if text[0] == "-" else 1
    digits = text.lstrip("+-")
    for prefix, base in (("0b", 2), ("0o", 8), ("0x", 16)):
        if digits.startswith(prefix):
            return sign * int(digits[2:], base)
    return sign * int(digits)  # `017` is 17 in YAML 1.2


def _float(loader: Any, node: yaml.ScalarNode) -> float:
    text = loader.construct_scalar(node).replace("_", "").lower()
    sign = -1.0 if text[0] == "-" else 1.0
    digits = text.lstrip("+-")
    if digits == ".inf":
        return sign * float("inf")
    if digits == ".nan":
        return float("nan")
    return sign * float(digits)


Loader.add_constructor("tag:yaml.org,2002:int", _int)
Loader.add_constructor("tag:yaml.org,2002:float", _float)


def load(text: str) -> Any:
    """One YAML document, read as YAML 1.2's core schema."""
    return yaml.load(text, Loader=Loader)  # a safe loader (PyYAML's SafeLoader underneath)


dump = dump_project  # PROJECT is written by the one YAML writer (Go-safe quoting)
