"""The `labelSelector` and `fieldSelector` query parameters as predicates over stored objects.

Label selectors are apimachinery's (`pyscaffold_op.apimachinery.labels`, shared with the runtime); field
selectors are the server's own: only the fields a kind indexes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pyscaffold_op.apimachinery import labels
from pyscaffold_op.envtest.status import bad_request

Predicate = Callable[[dict[str, Any]], bool]


def parse_label_selector(text: str | None) -> Predicate | None:
    """A predicate over an object's labels, or None for "everything". Raises 400 on bad syntax."""
    if not text or not text.strip():
        return None
    try:
        selector = labels.parse(text)
    except labels.SelectorError as err:
        raise bad_request(str(err)) from None
    return lambda obj: selector.matches(obj.get("metadata", {}).get("labels") or {})


def field_value(obj: dict[str, Any], path: str) -> str:
    """The string form a field selector compares against ("" when absent; booleans lower-case)."""
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def parse_field_selector(text: str | None, allowed: tuple[str, ...]) -> Predicate | None:
    """A predicate for `metadata.name=x,status.phase!=Running`; 400 for fields the kind does not index."""
    if not text or not text.strip():
        return None
    reqs: list[tuple[str, bool, str]] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"([^=!]+?)\s*(==|=|!=)\s*(.*)", part)
        if not m:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        path, op, value = m[1].strip(), m[2], m[3].strip()
        if path not in ("metadata.name", "metadata.namespace") and path not in allowed:
            raise bad_request(f"field label not supported: {path}")
        reqs.append((path, op != "!=", value))

    def match(obj: dict[str, Any]) -> bool:
        return all((field_value(obj, p) == v) == eq for p, eq, v in reqs)

    return match


def combine(*preds: Predicate | None) -> Predicate | None:
    active = [p for p in preds if p is not None]
    if not active:
        return None
    if len(active) == 1:
        return active[0]
    return lambda obj: all(p(obj) for p in active)


__all__ = [
    "combine",
    "field_value",
    "parse_field_selector",
    "parse_label_selector",
]
