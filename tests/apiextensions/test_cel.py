"""The CEL subset for x-kubernetes-validations: what evaluates, what is skipped (None)."""

from __future__ import annotations

from typing import Any

import pytest

from pyscaffold_op.apiextensions.cel import MISSING, evaluate


@pytest.mark.parametrize(
    ("rule", "value", "expected"),
    [
        ("self.minReplicas <= self.maxReplicas", {"minReplicas": 1, "maxReplicas": 3}, True),
        ("self.minReplicas <= self.maxReplicas", {"minReplicas": 5, "maxReplicas": 3}, False),
        ("has(self.foo) || self.bar > 0", {"bar": 1}, True),
        ("!has(self.foo)", {"foo": 1}, False),
        ("self.name.startsWith('x-') && size(self.name) < 10", {"name": "x-abc"}, True),
        ("self.items.all(i, i > 0)", {"items": [1, 2]}, True),
        ("self.items.exists(i, i == 3)", {"items": [1, 2]}, False),
        ("self.items.exists_one(i, i == 2)", {"items": [1, 2]}, True),
        ("self.items.filter(i, i > 1).size() == 1", {"items": [1, 2]}, True),
        ("self.mode in ['A', 'B']", {"mode": "C"}, False),
        ("self.x.matches('^[a-z]+$')", {"x": "abc"}, True),
        ("self.size() <= 3", [1, 2], True),
        ("self.a ? self.b : true", {"a": True, "b": False}, False),
        ("self.missing == 1", {}, False),  # no such key: the real server rejects too
        ("self.replicas % 2 == 0 && -self.replicas < 0", {"replicas": 4}, True),
        ("self.x.frob()", {"x": 1}, None),  # unsupported: skipped
        ("self == oldSelf", "a", None),  # transition rule on create: skipped
        ("'a' + 'b' == 'ab' && 7 / 2 == 3", {}, True),
    ],
)
def test_evaluate(rule: str, value: Any, expected: bool | None) -> None:
    assert evaluate(rule, value) is expected


def test_transition_rules() -> None:
    assert evaluate("self == oldSelf", "a", "a") is True
    assert evaluate("self == oldSelf", "a", "b") is False
    assert evaluate("self >= oldSelf", 3, MISSING) is None
