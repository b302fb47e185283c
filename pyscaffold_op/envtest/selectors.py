"""Label selectors (equality- and set-based) and field selectors, parsed like k8s.io/apimachinery/labels."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pyscaffold_op.envtest.errors import bad_request

Predicate = Callable[[dict[str, Any]], bool]

_KEY = r"[A-Za-z0-9./_-]+"
_SET_RE = re.compile(rf"\s*(!?)\s*({_KEY})\s*(?:(notin|in)\s*\(([^)]*)\)|(==|!=|=)\s*([^,\s]*))?\s*")


# labels.Lexer's operator tokens: a value starting with one is that token, not an identifier
_SYMBOLS = ("!=", "==", "=", "!", "(", ")", "<", ">")


def _split_top(text: str) -> list[str]:
    """Split on commas that are not inside parentheses (`a in (x,y),b` -> two requirements)."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p for p in parts if p.strip()]


def parse_label_selector(text: str | None) -> Predicate | None:
    """A predicate over an object's labels, or None for "everything". Raises 400 on bad syntax."""
    if not text or not text.strip():
        return None
    reqs: list[Callable[[dict[str, str]], bool]] = []
    for part in _split_top(text):
        m = _SET_RE.fullmatch(part)
        if not m:
            raise bad_request(
                f"unable to parse requirement: found '{part.strip()}', expected: in, notin, =, ==, !=, gt, lt"
            )
        neg, key, setop, values, op, value = m.groups()
        if neg and (setop or op):
            raise bad_request(f"unable to parse requirement: '{part.strip()}'")
        if op and value[:1] and value[0] in "!=()<>":  # `a===b`: the lexer reads `==` then `=`
            lit = next(sym for sym in _SYMBOLS if value.startswith(sym))
            raise bad_request(f"unable to parse requirement: found '{lit}', expected: identifier")
        if setop:
            vals = {v.strip() for v in values.split(",") if v.strip()}
            if setop == "in":
                reqs.append(lambda labels, k=key, vs=vals: labels.get(k) in vs)
            else:
                reqs.append(lambda labels, k=key, vs=vals: labels.get(k) not in vs)
        elif op in ("=", "=="):
            reqs.append(lambda labels, k=key, v=value: labels.get(k) == v)
        elif op == "!=":
            reqs.append(lambda labels, k=key, v=value: labels.get(k) != v)
        elif neg:
            reqs.append(lambda labels, k=key: k not in labels)
        else:
            reqs.append(lambda labels, k=key: k in labels)

    def match(obj: dict[str, Any]) -> bool:
        labels = obj.get("metadata", {}).get("labels") or {}
        return all(r(labels) for r in reqs)

    return match


def selector_from_label_selector(sel: dict[str, Any] | None) -> Predicate | None:
    """A predicate from a structured metav1.LabelSelector (matchLabels + matchExpressions)."""
    if not sel:
        return None
    parts = [f"{k}={v}" for k, v in (sel.get("matchLabels") or {}).items()]
    for e in sel.get("matchExpressions") or []:
        op, key, values = e.get("operator"), e.get("key"), e.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return parse_label_selector(",".join(parts))


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
    "selector_from_label_selector",
]
