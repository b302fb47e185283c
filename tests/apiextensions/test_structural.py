"""prune / apply_defaults / validate: what the API server does to a custom resource."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from openapi_schema_validator import OAS30Validator, oas30_format_checker

from pyscaffold_op.apiextensions import apply_defaults, prune, unknown_fields, validate

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["command"],
            "properties": {
                "command": {"type": "string", "minLength": 1},
                "replicas": {"type": "integer", "default": 1, "minimum": 0},
                "mode": {"type": "string", "enum": ["A", "B"], "default": "A"},
                "when": {"type": "string", "format": "date-time"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                },
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string"},
                            "protocol": {"type": "string", "default": "TCP"},
                            "port": {
                                "anyOf": [{"type": "integer"}, {"type": "string"}],
                                "x-kubernetes-int-or-string": True,
                            },
                        },
                    },
                },
                "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                "nothing": {"type": "string", "nullable": True},
                "settings": {
                    "type": "object",
                    "properties": {"debug": {"type": "boolean", "default": False}},
                    "default": {},
                },
            },
        },
    },
}


def sample(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "x.io/v1",
        "kind": "X",
        "metadata": {"name": "a", "labels": {"k": "v"}},
        "spec": spec,
    }


def test_prune_drops_unknown_fields_and_reports_them() -> None:
    obj = sample(command="x", typo=1, ports=[{"name": "http", "extra": True}], config={"deep": {"any": 1}},
                 template={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}},
                 labels={"a": "b"})  # fmt: skip
    obj["status"] = {"phase": "x"}
    assert prune(obj, SCHEMA) == ["spec.typo", "spec.ports[0].extra", "status"]
    assert obj["metadata"] == {"name": "a", "labels": {"k": "v"}}
    assert obj["spec"]["config"] == {"deep": {"any": 1}}
    assert obj["spec"]["template"]["spec"] == {"x": 1}
    assert obj["spec"]["labels"] == {"a": "b"}


def test_apply_defaults_fills_missing_and_null_fields() -> None:
    obj = sample(command="x", mode=None, nothing=None, when=None, ports=[{"name": "http"}])
    apply_defaults(obj, SCHEMA)
    assert obj["spec"]["replicas"] == 1
    assert obj["spec"]["mode"] == "A"  # null in a non-nullable field with a default
    assert obj["spec"]["nothing"] is None  # nullable: kept
    assert "when" not in obj["spec"]  # null in a non-nullable field without a default: dropped
    assert obj["spec"]["ports"] == [{"name": "http", "protocol": "TCP"}]
    assert obj["spec"]["settings"] == {"debug": False}  # defaults apply inside defaults, top-down


def test_prune_coerces_metadata_of_the_root_and_of_embedded_resources() -> None:
    template = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "junk": 1}}
    obj = sample(command="x", template=template)
    obj["metadata"]["bogus"] = True
    assert unknown_fields(obj, SCHEMA) == ["metadata.bogus", "spec.template.metadata.junk"]
    assert obj["metadata"]["bogus"] is True  # unknown_fields leaves the object alone
    assert prune(obj, None) == ["metadata.bogus"]  # no schema: ObjectMeta is still coerced
    assert prune(obj, SCHEMA) == ["spec.template.metadata.junk"]


def causes(obj: Any) -> dict[str, dict[str, str]]:
    return {c["field"]: c for c in validate(obj, SCHEMA)}


def test_validate_reports_paths_and_messages() -> None:
    assert validate(sample(command="x", replicas=2, port=None), SCHEMA) == []
    errors = causes(sample(replicas=-1, mode="C", when="yesterday", tags=["a", "a"],
                           ports=[{"name": "a", "port": 80}, {"name": "a", "port": "http"}],
                           template={"metadata": {}}))  # fmt: skip
    assert errors["spec.command"] == {
        "reason": "FieldValueRequired",
        "field": "spec.command",
        "message": "Required value",
    }
    assert errors["spec.replicas"]["message"] == (
        "Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
    )
    assert errors["spec.mode"]["message"] == 'Unsupported value: "C": supported values: "A", "B"'
    assert errors["spec.when"]["message"] == (
        'Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"'
    )
    assert errors["spec.tags[1]"]["message"] == 'Duplicate value: "a"'
    assert errors["spec.ports[1]"]["reason"] == "FieldValueDuplicate"
    assert errors["spec.template.apiVersion"]["message"] == "Required value: must not be empty"
    assert errors["spec.template.kind"]["reason"] == "FieldValueRequired"


def test_validate_int_or_string_and_types() -> None:
    assert validate(sample(command="x", ports=[{"name": "a", "port": "http"}]), SCHEMA) == []
    errors = validate(sample(command="x", ports=[{"name": "a", "port": 1.5}]), SCHEMA)
    assert errors and errors[0]["field"] == "spec.ports[0].port"
    assert validate(True, {"x-kubernetes-int-or-string": True})  # without the anyOf pair too


def test_package_imports_no_third_party_validator() -> None:
    # A fresh interpreter: popping modules here would leave two copies of each (two QuantityError
    # classes, say) for every later test in this process.
    heavy = ("openapi_schema_validator", "jsonschema")
    probe = (
        "import sys, pyscaffold_op.apiextensions\n"
        f"print(sorted(m for m in sys.modules if m.startswith({heavy!r})))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


AGREEMENT_CASES = [
    (5, {"type": "integer", "minimum": 5}),
    (5, {"type": "integer", "minimum": 5, "exclusiveMinimum": True}),
    (5.5, {"type": "integer"}),
    (True, {"type": "integer"}),
    ("a", {"type": "string", "enum": ["a", "b"]}),
    ("c", {"type": "string", "enum": ["a", "b"]}),
    ("", {"type": "string", "minLength": 1}),
    ("abc", {"type": "string", "pattern": "^[a-z]+$"}),
    ("ABC", {"type": "string", "pattern": "^[a-z]+$"}),
    ("2024-01-01T00:00:00Z", {"type": "string", "format": "date-time"}),
    ([1, 2, 3], {"type": "array", "items": {"type": "integer"}, "maxItems": 2}),
    ({"a": 1}, {"type": "object", "required": ["b"], "properties": {"a": {"type": "integer"}}}),
    ({"a": "x"}, {"type": "object", "additionalProperties": {"type": "integer"}}),
    (None, {"type": "string"}),
    (None, {"type": "string", "nullable": True}),
    ("http", {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}),
    (1.5, {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}),
    (7, {"type": "integer", "multipleOf": 2}),
    (8, {"type": "integer", "multipleOf": 2}),
    (5, {"type": "integer", "maximum": 5, "exclusiveMaximum": True}),
    (2.5, {"type": "number", "minimum": 1, "maximum": 3}),
    ("2024-02-30", {"type": "string", "format": "date"}),
    ("2024-02-03", {"type": "string", "format": "date"}),
    ("2024-01-01T00:00:00", {"type": "string", "format": "date-time"}),
    ("toolong", {"type": "string", "maxLength": 3}),
    ("Name-1", {"type": "string", "pattern": "[0-9]$"}),
    ([], {"type": "array", "items": {"type": "string"}, "minItems": 1}),
    (["a", 1], {"type": "array", "items": {"type": "string"}}),
    ({}, {"type": "object", "minProperties": 1}),
    ({"a": 1, "b": 2}, {"type": "object", "maxProperties": 1}),
    ({"a": {"b": "x"}}, {"type": "object", "properties": {"a": {"properties": {"b": {"type": "integer"}}}}}),
    (3, {"type": "integer", "allOf": [{"minimum": 1}, {"maximum": 2}]}),
    (3, {"type": "integer", "anyOf": [{"minimum": 5}, {"maximum": 4}]}),
    (3, {"type": "integer", "oneOf": [{"minimum": 1}, {"maximum": 4}]}),
    (3, {"type": "integer", "oneOf": [{"minimum": 4}, {"maximum": 4}]}),
    (3, {"type": "integer", "not": {"minimum": 2}}),
    (1, {"type": "integer", "not": {"minimum": 2}}),
    (True, {"type": "boolean", "enum": [True]}),
    ("x", {"type": "object"}),
    ({"a": 1}, {"type": "array"}),
]


@pytest.mark.parametrize(("value", "schema"), AGREEMENT_CASES)
def test_validate_agrees_with_the_oas30_reference_validator(value: Any, schema: dict[str, Any]) -> None:
    reference = list(OAS30Validator(schema, format_checker=oas30_format_checker).iter_errors(value))
    assert bool(validate(value, schema)) == bool(reference)
