"""Validation regexes match whole values and CRD patterns run with RE2's semantics, as the API server does.

Python's `$` also matches before a trailing newline and its `\\d` matches any Unicode digit; Go's
regexp (RE2) does neither, so each case below is one the real server refuses.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from pyscaffold_op.apiextensions import cel
from pyscaffold_op.apiextensions.crdvalidation import check_crd
from pyscaffold_op.apiextensions.patterns import pattern_problem, search
from pyscaffold_op.apiextensions.validation import validate
from pyscaffold_op.apimachinery import Quantity

PATTERN = {"type": "string", "pattern": "^[a-z]+$"}
ARABIC_INDIC_DIGITS = "\u0662\u0660\u0662\u0664"  # "2024" in Arabic-Indic digits: \d in Python, not in RE2


@pytest.mark.parametrize(
    ("pattern", "value", "matches"),
    [
        ("^[a-z]+$", "abc", True),
        ("^[a-z]+$", "abc\n", False),
        (r"^\d+$", "2024", True),
        (r"^\d+$", ARABIC_INDIC_DIGITS, False),
        (r"^\w+$", "caf\u00e9", False),
        ("[a-z]", "1a2", True),  # unanchored: a match anywhere, like Go's MatchString
        (r"\Aab\z", "ab", True),  # RE2 spells the end of text \z
        (r"^\pL+$", "caf\u00e9", True),  # Unicode classes: RE2 has them, Python's re does not
    ],
)
def test_search_has_go_semantics(pattern: str, value: str, matches: bool) -> None:
    assert search(pattern, value) is matches


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("^[a-z]+$", ""),
        (r"^\pL+$", ""),
        ("(?=a)b", "RE2 has no lookaround or backreferences ('(?=')"),
        ("a(", "missing ): a("),
    ],
)
def test_pattern_problem_is_re2s(pattern: str, problem: str) -> None:
    assert pattern_problem(pattern) == problem


@pytest.mark.parametrize(
    ("value", "schema"),
    [
        ("abc\n", PATTERN),
        (f"{ARABIC_INDIC_DIGITS}-01-01T00:00:00Z", {"type": "string", "format": "date-time"}),
        (f"{ARABIC_INDIC_DIGITS}-01-01", {"type": "string", "format": "date"}),
    ],
)
def test_validation_refuses_what_the_api_server_refuses(value: str, schema: dict[str, Any]) -> None:
    assert validate(value, schema) != []
    assert validate(value.replace(ARABIC_INDIC_DIGITS, "2024").strip(), schema) == []


def test_cel_matches_uses_re2() -> None:
    program = cel.compile_rule("self.matches('^[a-z]+$')", {"type": "string"})
    assert program.run("abc") is True
    assert program.run("abc\n") is False


@pytest.mark.parametrize("value", ["1Gi\n", "500m\n", "\n"])
def test_quantity_matches_the_whole_value(value: str) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(Quantity).validate_python(value)
    assert TypeAdapter(Quantity).validate_python(value.strip() or "0") == (value.strip() or "0")


def test_crd_short_names_match_whole() -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "ats.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": "At", "plural": "ats", "singular": "at", "shortNames": ["at\n"]},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
            ],
        },
    }
    assert any("shortNames[0]" in error for error in check_crd(crd))
    crd["spec"]["names"]["shortNames"] = ["at"]
    assert not any("shortNames" in error for error in check_crd(crd))
