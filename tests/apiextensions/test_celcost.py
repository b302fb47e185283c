"""The CEL cost estimate without a server: cel-go's figures for known rules, the budgets, the advice."""

from __future__ import annotations

from typing import Any

import pytest

from pyscaffold_op.apiextensions.celcost import (
    MAX_REQUEST_SIZE_BYTES,
    cost_error_message,
    decl_of,
    rule_cost,
    schema_cost_errors,
)
from pyscaffold_op.apiextensions.crdvalidation import check_crd, crd_causes
from tests.apiextensions.cel_cost_corpus import CORPUS, OVER_BUDGET, crd

STR: dict[str, Any] = {"type": "string"}


def test_sizes_come_from_bounds_else_from_the_request_size() -> None:
    assert decl_of({"type": "string", "maxLength": 10}).max_elements == 40  # runes, up to 4 bytes each
    assert decl_of(STR).max_elements == MAX_REQUEST_SIZE_BYTES - 2
    assert decl_of({"type": "string", "enum": ["a", "bcd"]}).max_elements == 3
    assert decl_of({"type": "array", "items": STR}).max_elements == (MAX_REQUEST_SIZE_BYTES - 2) // 3
    assert decl_of({"type": "array", "items": STR, "maxItems": 7}).max_elements == 7
    assert (
        decl_of({"type": "object", "additionalProperties": STR}).max_elements
        == (MAX_REQUEST_SIZE_BYTES - 2) // 8
    )
    required = decl_of({"type": "object", "required": ["ab"], "properties": {"ab": STR}})
    assert required.min_size == 2 + 2 + 2 + 4


@pytest.mark.parametrize(
    ("rule", "schema", "cost"),
    [
        # (400 + 1) * 0.1 -> 41, times len('^[a-z]+$') * 0.25 = 2, plus `self`
        ("self.matches('^[a-z]+$')", {"type": "string", "maxLength": 100}, 83),
        ("self > 0", {"type": "integer"}, 2),
        ("has(self.a)", {"type": "object", "properties": {"a": STR}}, 1),  # presence tests are free
        # self + 10 items * (step `@result && x.size() < 3`: 1 + (1 + 1 + 1), condition: 1 + 1) + @result
        ("self.all(x, x.size() < 3)", {"type": "array", "items": STR, "maxItems": 10}, 1 + 10 * 6 + 1),
    ],
)
def test_costs_are_cel_gos(rule: str, schema: dict[str, Any], cost: int) -> None:
    got = rule_cost(rule, schema, cardinality=1)
    assert got is not None and got.cost == cost


def test_a_rule_runs_as_often_as_its_node_can_occur() -> None:
    unbounded = rule_cost("self.matches('^a')", {"type": "string", "maxLength": 1})
    assert unbounded is not None and unbounded.cardinality == MAX_REQUEST_SIZE_BYTES // 3
    bounded = rule_cost("self.matches('^a')", {"type": "string", "maxLength": 1}, cardinality=6)
    assert bounded is not None and bounded.total == bounded.cost * 6


def test_the_servers_messages() -> None:
    assert "by factor of 1.000001x (try simplifying" in cost_error_message(
        "estimated rule cost", 10_000_006, 10_000_000
    )
    assert "by factor of 5.9x" in cost_error_message("x", 59_000_000, 10_000_000)
    assert "by factor of more than 100x" in cost_error_message("x", 10**12, 10_000_000)


def test_an_over_budget_rule_is_named_with_the_bounds_to_add() -> None:
    spec = dict(CORPUS)["all-matches-unbounded-list"]
    errors = check_crd(crd("x", spec))
    rule = [e for e in errors if "estimated rule cost exceeds" in e]
    assert len(rule) == 1
    field = "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
    assert rule[0].startswith(f"{field}: Forbidden: ")
    assert "[pyop: rule \"self.tags.all(t, t.matches('^[a-z0-9-]+$'))\"" in rule[0]
    assert "maxItems on .spec.tags" in rule[0] and "maxLength on .spec.tags[*]" in rule[0]
    # the emulator's 422 carries the server's words only
    assert all("[pyop:" not in c["message"] for c in crd_causes(crd("x", spec)))


def test_an_unbounded_parent_list_is_named() -> None:
    spec = dict(CORPUS)["rule-on-unbounded-items"]
    (error,) = [e for e in check_crd(crd("x", spec)) if "estimated rule cost exceeds" in e]
    assert "maxItems on .spec.items" in error


def test_totals_over_the_crd_budget() -> None:
    errors = schema_cost_errors(
        crd("x", dict(CORPUS)["total-over-root-rules"])["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    )
    assert sum("contributed to" in e.message for e in errors) == 4
    assert errors[-1].field == "openAPIV3Schema"
    assert (
        "estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.9x"
        in errors[-1].message
    )


@pytest.mark.parametrize(("name", "spec"), CORPUS, ids=[n for n, _ in CORPUS])
def test_corpus_verdicts_as_kube_apiserver_gave_them(name: str, spec: dict[str, Any]) -> None:
    over = any("budget" in c["message"] or "contributed" in c["message"] for c in crd_causes(crd(name, spec)))
    assert over == (name in OVER_BUDGET)
