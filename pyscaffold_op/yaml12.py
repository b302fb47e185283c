"""Read YAML 1.2 (the core schema, as ruamel.yaml's safe loader reads it) with PyYAML's libyaml parser.

PROJECT is written by ruamel.yaml, which speaks YAML 1.2: `group: no` is the string "no" there, and
PyYAML (YAML 1.1) would read False; `017` is 17, not 15. Reading or writing a PROJECT with ruamel
costs ~0.5-1 ms per resource (pure Python), libyaml a tenth of it, and `create api` did both, so it
slowed down as kinds accumulated. PROJECT is therefore read and written here: PyYAML with YAML 1.2's
plain-scalar rules. Tests hold both equal to ruamel's, on the scalars where the two YAML versions
differ.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BaseDumper: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class Loader(_BaseLoader):
    """PyYAML's safe loader with YAML 1.2's resolution of plain scalars (bool, int, float, null)."""


class Dumper(_BaseDumper):
    """PyYAML's safe dumper that quotes what YAML 1.2 would not read back as a string (`'3'`, not `no`)."""


# drop YAML 1.1's resolvers (yes/no/on/off booleans, sexagesimals, 017 octals)
Loader.yaml_implicit_resolvers = {}
Dumper.yaml_implicit_resolvers = {}
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
    for _cls in (Loader, Dumper):
        _cls.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(f"^(?:{_pattern})$"), list(_first))


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


# Where ruamel's emitter and libyaml's write the same text (tests hold it): ruamel moves a plain
# scalar past the line width to the next line and double-quotes strings holding `'` or a line break.
_SAME_MAX_LEN = 50


def _same_in_both(data: Any) -> bool:
    if isinstance(data, str):
        return len(data) <= _SAME_MAX_LEN and "'" not in data and data.isprintable()
    if isinstance(data, dict):
        return all(_same_in_both(k) and _same_in_both(v) for k, v in data.items())
    if isinstance(data, list):
        return all(_same_in_both(item) for item in data)
    return isinstance(data, bool | int | float) or data is None


def dump(data: Any) -> str:
    """`data` as ruamel.yaml writes it with 2-space mappings and sequences at their key's column
    (PROJECT's layout), keys in their order; by libyaml when the text is the same."""
    if not _same_in_both(data):
        import io

        from ruamel.yaml import YAML

        ruamel = YAML()
        ruamel.indent(mapping=2, sequence=2, offset=0)
        out = io.StringIO()
        ruamel.dump(data, out)
        return out.getvalue()
    return yaml.dump(data, Dumper=Dumper, default_flow_style=False, sort_keys=False, allow_unicode=True)
