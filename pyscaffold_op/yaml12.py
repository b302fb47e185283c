"""Read YAML 1.2 (the core schema, as ruamel.yaml's safe loader reads it) with PyYAML's libyaml parser.

PROJECT is written by ruamel.yaml, which speaks YAML 1.2: `group: no` is the string "no" there, and
PyYAML (YAML 1.1) would read False; `017` is 17, not 15. Reading a PROJECT with ruamel costs ~1 ms
per resource (pure Python), libyaml ~0.1 ms, so readers that only load it (the generator, `create api`
before it rewrites the file) use this loader: PyYAML with YAML 1.2's plain-scalar rules. A test holds
it equal to ruamel's safe loader on the scalars where the two YAML versions differ.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

_Base: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Loader(_Base):  # type: ignore[misc, valid-type]
    """PyYAML's safe loader with YAML 1.2's resolution of plain scalars (bool, int, float, null)."""


Loader.yaml_implicit_resolvers = {}  # drop YAML 1.1's (yes/no/on/off booleans, sexagesimals, 017 octals)
_IMPLICIT = (
    ("bool", r"true|True|TRUE|false|False|FALSE", "tTfF"),
    (
        "float",
        r"[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+"
        r"|[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)"
        r"|\.(?:nan|NaN|NAN)",
        "-+0123456789.",
    ),
    ("int", r"[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+", "-+0123456789"),
    ("merge", r"<<", "<"),
    ("null", r"~|null|Null|NULL|", ["~", "n", "N", ""]),
    (
        "timestamp",
        r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
        r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?"
        r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?",
        "0123456789",
    ),
)
for _tag, _pattern, _first in _IMPLICIT:
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
