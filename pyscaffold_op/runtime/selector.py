"""Label and field selectors: rendering for the API and matching for the cache (same grammar as
apimachinery's `labels.Parse`: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Selector = Mapping[str, str] | str | None

_REQ = re.compile(
    r"^\s*(?:(?P<neg>!)\s*(?P<nkey>[\w./-]+)"
    r"|(?P<key>[\w./-]+)\s*(?:(?P<op>==|=|!=)\s*(?P<val>[\w./-]*)"
    r"|\s+(?P<setop>in|notin)\s*\((?P<vals>[^)]*)\))?)\s*$"
)


def render(selector: Selector) -> str | None:
    """The query-string form (`labelSelector=`/`fieldSelector=`)."""
    if selector is None:
        return None
    if isinstance(selector, str):
        return selector or None
    return ",".join(f"{k}={v}" for k, v in selector.items()) or None


def _split(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def parse(selector: Selector) -> Callable[[Mapping[str, Any]], bool]:
    """A predicate over a label (or field-value) mapping."""
    if not selector:
        return lambda _labels: True
    if not isinstance(selector, str):
        wanted = dict(selector)
        return lambda labels: all(labels.get(k) == v for k, v in wanted.items())
    checks: list[Callable[[Mapping[str, Any]], bool]] = []
    for part in _split(selector):
        m = _REQ.match(part)
        if not m:
            raise ValueError(f"invalid selector requirement {part!r}")
        if m["neg"]:
            k = m["nkey"]
            checks.append(lambda labels, k=k: k not in labels)
        elif m["op"]:
            k, v, op = m["key"], m["val"], m["op"]
            if op == "!=":
                checks.append(lambda labels, k=k, v=v: labels.get(k) != v)
            else:
                checks.append(lambda labels, k=k, v=v: labels.get(k) == v)
        elif m["setop"]:
            k, vals = m["key"], {x.strip() for x in m["vals"].split(",") if x.strip()}
            if m["setop"] == "in":
                checks.append(lambda labels, k=k, vals=vals: labels.get(k) in vals)
            else:
                checks.append(lambda labels, k=k, vals=vals: labels.get(k) not in vals)
        else:
            k = m["key"]
            checks.append(lambda labels, k=k: k in labels)
    return lambda labels: all(check(labels) for check in checks)
