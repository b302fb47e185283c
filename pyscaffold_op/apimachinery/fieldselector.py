"""Field selectors as k8s.io/apimachinery/pkg/fields parses and matches them.

One grammar for the emulator (the `fieldSelector` query parameter) and the runtime (the cache's
`list(fields=...)`): `path=value`, `path==value`, `path!=value`, joined by commas. Which paths a kind
may be selected by is the server's business (`envtest.selectors`), not the grammar's.

    selector = parse("status.phase=Running,metadata.name!=a")
    selector.matches({"status": {"phase": "Running"}, "metadata": {"name": "b"}})   # True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyscaffold_op.apimachinery.labels import SelectorLike

__all__ = ["FieldRequirement", "FieldSelector", "FieldSelectorError", "field_value", "matcher", "parse"]

_TERM = re.compile(r"([^=!]+?)\s*(==|=|!=)\s*(.*)")


class FieldSelectorError(ValueError):
    """A selector the API server would refuse (400 Bad Request); the message is the server's."""


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """The string a selector compares against: "" when absent (as the server), booleans lower-case."""
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, Mapping):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    equal: bool  # `=`/`==` when True, `!=` when False
    value: str

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return (field_value(obj, self.field) == self.value) == self.equal


@dataclass(frozen=True)
class FieldSelector:
    requirements: tuple[FieldRequirement, ...] = ()

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return all(r.matches(obj) for r in self.requirements)

    def empty(self) -> bool:
        return not self.requirements


def parse(text: str) -> FieldSelector:
    """Parse `fields.ParseSelector`'s grammar; "" selects everything."""
    reqs: list[FieldRequirement] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        m = _TERM.fullmatch(part)
        if not m:
            raise FieldSelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        reqs.append(FieldRequirement(m[1].strip(), m[2] != "!=", m[3].strip()))
    return FieldSelector(tuple(reqs))


def matcher(selector: SelectorLike) -> FieldSelector:
    """A `FieldSelector` from what callers pass: a dict of equalities, a selector string, or None."""
    if not selector:
        return FieldSelector()
    if isinstance(selector, str):
        return parse(selector)
    return FieldSelector(tuple(FieldRequirement(k, True, str(v)) for k, v in selector.items()))
