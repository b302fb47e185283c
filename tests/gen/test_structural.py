"""prune / apply_defaults / validate: what the API server does to a custom resource."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from pyscaffold_op.gen.structural import apply_defaults, prune, quick_validate, validate

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


def test_validate_reports_paths_and_messages() -> None:
    assert validate(sample(command="x", replicas=2, port=None), SCHEMA) == []
    errors = dict(validate(sample(replicas=-1, mode="C", when="yesterday", tags=["a", "a"],
                                  ports=[{"name": "a", "port": 80}, {"name": "a", "port": "http"}],
                                  template={"metadata": {}}), SCHEMA))  # fmt: skip
    assert errors["spec.command"] == "Required value"
    assert "minimum" in errors["spec.replicas"] or "less than" in errors["spec.replicas"]
    assert errors["spec.mode"].startswith("Unsupported value: 'C'")
    assert errors["spec.tags[1]"] == "Duplicate value: 'a'"
    assert errors["spec.ports[1]"] == "Duplicate value: map[name='a']"
    assert errors["spec.template.apiVersion"].startswith("Required value")
    assert errors["spec.template.kind"].startswith("Required value")


def test_validate_int_or_string_and_types() -> None:
    assert validate(sample(command="x", ports=[{"name": "a", "port": "http"}]), SCHEMA) == []
    errors = validate(sample(command="x", ports=[{"name": "a", "port": 1.5}]), SCHEMA)
    assert errors and errors[0][0] == "spec.ports[0].port"


def test_module_is_cheap_to_import() -> None:
    for name in [m for m in sys.modules if m.startswith(("openapi_schema_validator", "jsonschema"))]:
        sys.modules.pop(name)
    sys.modules.pop("pyscaffold_op.gen.structural", None)
    import pyscaffold_op.gen.structural  # noqa: F401

    assert "openapi_schema_validator" not in sys.modules


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
]


@pytest.mark.parametrize(("value", "schema"), AGREEMENT_CASES)
def test_quick_validate_agrees_with_the_reference_validator(value: Any, schema: dict[str, Any]) -> None:
    assert bool(quick_validate(value, schema)) == bool(validate(value, schema))
