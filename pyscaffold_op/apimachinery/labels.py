"""Label selectors as k8s.io/apimachinery/pkg/labels parses and matches them.

One grammar for the emulator (the `labelSelector` query parameter) and the runtime (the cache's
`list(labels=...)` and the selectors it sends): `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`,
`a`, `!a`, `a>1`, `a<1`, joined by commas. Keys must be qualified names and values label values, as
the server checks them; a bad selector raises `SelectorError` with the server's message.

    selector = parse("app=web,tier in (a, b)")
    selector.matches({"app": "web", "tier": "a"})   # True
    render({"app": "web"})                           # "app=web", the query-string form
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyscaffold_op.apimachinery.validation import is_qualified_name, is_valid_label_value

__all__ = [
    "Requirement",
    "Selector",
    "SelectorError",
    "SelectorLike",
    "from_label_selector",
    "matcher",
    "parse",
    "render",
]

SelectorLike = Mapping[str, str] | str | None
"""What callers pass: a dict of equalities, a selector string, or None for everything."""

_OPERATORS = "in, notin, =, ==, !=, gt, lt"
_SPECIAL = frozenset({"!=", "==", "=", "!", ">", "<", "(", ")", ","})
_TOKEN = re.compile(r"\s*(?:(?P<op>!=|==|=|!|>|<|\(|\)|,)|(?P<id>[^\s!=<>(),]+))")


class SelectorError(ValueError):
    """A selector the API server would refuse (400 Bad Request); the message is the server's."""


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # "=", "==", "!=", "in", "notin", "exists", "!", "gt", "lt"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op, present = self.operator, self.key in labels
        if op == "exists":
            return present
        if op == "!":
            return not present
        if op in ("=", "==", "in"):
            return present and labels[self.key] in self.values
        if op in ("!=", "notin"):
            return not present or labels[self.key] not in self.values
        if not present:  # gt, lt: an integer label compared with the one value
            return False
        try:
            have = int(labels[self.key])
        except ValueError:
            return False
        want = int(self.values[0])
        return have > want if op == "gt" else have < want

    def __str__(self) -> str:
        if self.operator == "exists":
            return self.key
        if self.operator == "!":
            return f"!{self.key}"
        if self.operator in ("in", "notin"):
            return f"{self.key} {self.operator} ({','.join(self.values)})"
        shown = {"gt": ">", "lt": "<"}.get(self.operator, self.operator)
        return f"{self.key}{shown}{self.values[0]}"


@dataclass(frozen=True)
class Selector:
    """Requirements that must all hold; no requirements selects everything."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    def empty(self) -> bool:
        return not self.requirements

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            break
        if m["op"] or m["id"]:
            out.append(m["op"] or m["id"])
        pos = m.end()
    return out


def _requirement(key: str, operator: str, values: tuple[str, ...]) -> Requirement:
    """`NewRequirement`: the key a qualified name, the values label values (integers for gt/lt)."""
    problems = [f'key: Invalid value: "{key}": {why}' for why in is_qualified_name(key)]
    if operator in ("in", "notin") and not values:
        problems.append("values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty")
    if operator in ("gt", "lt"):
        if not re.fullmatch(r"-?\d+", values[0]):
            problems.append(
                f"values[0]: Invalid value: \"{values[0]}\": for 'Gt', 'Lt' operators, the value must be "
                "an integer"
            )
    else:
        for index, value in enumerate(values):
            problems += [
                f'values[{index}][{key}]: Invalid value: "{value}": {why}'
                for why in is_valid_label_value(value)
            ]
    if problems:
        raise ValueError(problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")
    return Requirement(key, operator, values)


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.i = 0

    def peek(self) -> str:
        return self.tokens[self.i] if self.i < len(self.tokens) else ""

    def take(self) -> str:
        token = self.peek()
        self.i += 1
        return token

    def identifier(self) -> str | None:
        token = self.peek()
        return None if token in _SPECIAL or not token else token

    def requirement(self) -> Requirement:
        negated = self.peek() == "!"
        if negated:
            self.take()
        key = self.identifier()
        if key is None:
            raise ValueError(f"found '{self.peek()}', expected: identifier")
        self.take()
        if negated or self.peek() in ("", ","):
            return _requirement(key, "!" if negated else "exists", ())
        op = self.take()
        if op in ("in", "notin"):
            return _requirement(key, op, self.value_set())
        if op not in ("=", "==", "!=", ">", "<"):
            raise ValueError(f"found '{op}', expected: {_OPERATORS}")
        value = self.identifier()
        if value is not None:
            self.take()
        elif self.peek() not in ("", ","):
            raise ValueError(f"found '{self.peek()}', expected: identifier")
        return _requirement(key, {">": "gt", "<": "lt"}.get(op, op), (value or "",))

    def value_set(self) -> tuple[str, ...]:
        found = self.take()
        if found != "(":
            raise ValueError(f"found '{found}', expected: '('")
        values: dict[str, None] = {}  # a set that keeps the order written
        if self.peek() == ")":
            self.take()
            return ()
        while True:
            token = self.take()
            if token == ",":  # `(,x`, `x,,y`: the empty value
                values[""] = None
                continue
            if token in _SPECIAL or not token:
                raise ValueError(f"found '{token}', expected: ',', or identifier")
            values[token] = None
            after = self.take()
            if after == ")":
                return tuple(values)
            if after != ",":
                raise ValueError(f"found '{after}', expected: ',' or ')'")
            if self.peek() == ")":  # `x,)`: the empty value too
                self.take()
                values[""] = None
                return tuple(values)


def parse(text: str) -> Selector:
    """Parse a selector string (`labels.Parse`); "" selects everything."""
    parser, reqs = _Parser(text), []
    if parser.peek() and parser.peek() != "!" and parser.identifier() is None:
        raise SelectorError(f"found '{parser.peek()}', expected: !, identifier, or 'end of string'")
    while parser.peek():
        try:
            reqs.append(parser.requirement())
        except ValueError as err:
            raise SelectorError(f"unable to parse requirement: {err}") from None
        following = parser.take()
        if following not in ("", ","):
            raise SelectorError(f"found '{following}', expected: ',' or 'end of string'")
        if following == "," and parser.peek() != "!" and parser.identifier() is None:
            raise SelectorError(f"found '{parser.peek()}', expected: identifier after ','")
    return Selector(tuple(reqs))


def matcher(selector: SelectorLike) -> Selector:
    """A `Selector` from what callers pass: a dict of equalities, a selector string, or None."""
    if not selector:
        return Selector()
    if isinstance(selector, str):
        return parse(selector)
    return Selector(tuple(_requirement(k, "=", (v,)) for k, v in selector.items()))


_EXPRESSION_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def from_label_selector(selector: Mapping[str, Any]) -> Selector:
    """A `Selector` from a structured metav1.LabelSelector (`matchLabels` + `matchExpressions`), as
    `metav1.LabelSelectorAsSelector` builds it; an unknown operator raises `SelectorError`."""
    reqs: list[Requirement] = []
    try:
        match_labels = selector.get("matchLabels") or {}
        for key, value in sorted(match_labels.items()):
            reqs.append(_requirement(key, "=", (str(value),)))
        for expr in selector.get("matchExpressions") or []:
            operator = _EXPRESSION_OPERATORS.get(expr.get("operator", ""))
            if operator is None:
                raise ValueError(f'"{expr.get("operator")}" is not a valid label selector operator')
            values = tuple(expr.get("values") or ()) if operator in ("in", "notin") else ()
            reqs.append(_requirement(expr.get("key", ""), operator, values))
    except ValueError as err:
        raise SelectorError(str(err)) from None
    return Selector(tuple(reqs))


def selects(selector: Any, obj: Mapping[str, Any]) -> bool:
    """Whether a structured metav1.LabelSelector selects `obj` as a PodDisruptionBudget's does
    (`LabelSelectorAsSelector`): a missing selector selects nothing, an empty one everything, one that
    does not parse nothing."""
    if not isinstance(selector, dict):
        return False
    try:
        parsed = from_label_selector(selector)
    except SelectorError:
        return False
    return parsed.matches((obj.get("metadata") or {}).get("labels") or {})


def render(selector: SelectorLike) -> str | None:
    """The query-string form (`labelSelector=`/`fieldSelector=`), None for "everything"."""
    if selector is None:
        return None
    if isinstance(selector, str):
        return selector or None
    return ",".join(f"{k}={v}" for k, v in selector.items()) or None
