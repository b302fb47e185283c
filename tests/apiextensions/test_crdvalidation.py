# ruff: noqa: E501 - expected messages read best on one line
"""Each rule apiextensions-apiserver applies to a CRD schema, with a schema the real server rejects.

The failing schemas are written from the server's rules (schema/validation.go `ValidateStructural`,
`validateStructuralCompleteness`, and the CRD validation `ValidateCustomResourceDefinitionOpenAPISchema`),
not from our generator's output.
"""

from __future__ import annotations

from typing import Any

import pytest

from pyscaffold_op.apiextensions.crdvalidation import check_crd, check_schema, crd_causes


def root(**spec: Any) -> dict[str, Any]:
    """A root schema whose `spec` property is `spec`."""
    return {"type": "object", "properties": {"spec": spec}}


OK_CASES = {
    "plain": root(type="object", properties={"a": {"type": "string"}}),
    "int-or-string anyOf": root(
        type="object",
        properties={
            "p": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
        },
    ),
    "int-or-string allOf": root(
        type="object",
        properties={
            "p": {
                "x-kubernetes-int-or-string": True,
                "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"pattern": "^a"}],
            }
        },
    ),
    "preserve unknown without type": root(**{"x-kubernetes-preserve-unknown-fields": True}),
    "metadata name restriction": {
        "type": "object",
        "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}}}
        },
    },
    "value validation with known property": root(
        type="object",
        properties={"a": {"type": "string"}, "b": {"type": "string"}},
        anyOf=[{"required": ["a"]}, {"properties": {"b": {"minLength": 1}}}],
    ),
    "embedded resource": root(
        type="object",
        **{"x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True},
    ),
    "list map": root(
        type="array",
        items={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
    ),
    "valid default": root(type="object", properties={"a": {"type": "integer", "default": 1, "minimum": 0}}),
}


@pytest.mark.parametrize("schema", list(OK_CASES.values()), ids=list(OK_CASES))
def test_accepted(schema: dict[str, Any]) -> None:
    assert check_schema(schema) == []


REJECTED = [
    # --- ValidateStructural: invariants
    ("array without items", root(type="array"), "properties[spec].items: Required value: must be specified"),
    (
        "no type at the root",
        {"properties": {}},
        "openAPIV3Schema.type: Required value: must not be empty at the root",
    ),
    (
        "no type on a field",
        root(description="x"),
        "properties[spec].type: Required value: must not be empty for specified object fields",
    ),
    (
        "no type on items",
        root(type="array", items={"description": "x"}),
        "items.type: Required value: must not be empty for specified array items",
    ),
    (
        "root not an object",
        {"type": "string"},
        'openAPIV3Schema.type: Invalid value: "string": must be object at the root',
    ),
    (
        "additionalProperties at the root",
        {"type": "object", "additionalProperties": {"type": "string"}},
        "openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root",
    ),
    (
        "embedded resource not an object",
        root(type="string", **{"x-kubernetes-embedded-resource": True}),
        "must be object if x-kubernetes-embedded-resource is true",
    ),
    (
        "embedded resource with additionalProperties",
        root(
            type="object",
            additionalProperties={"type": "string"},
            **{"x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True},
        ),
        "Forbidden: must not be used if x-kubernetes-embedded-resource is set",
    ),
    (
        "embedded resource without properties",
        root(type="object", **{"x-kubernetes-embedded-resource": True}),
        "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
    ),
    (
        "int-or-string with preserve-unknown",
        root(**{"x-kubernetes-int-or-string": True, "x-kubernetes-preserve-unknown-fields": True}),
        "x-kubernetes-preserve-unknown-fields: must be false if x-kubernetes-int-or-string is true",
    ),
    (
        "int-or-string with embedded",
        root(
            type="object",
            **{
                "x-kubernetes-int-or-string": True,
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            },
        ),
        "x-kubernetes-embedded-resource: must be false if x-kubernetes-int-or-string is true",
    ),
    (
        "kind not a string",
        {"type": "object", "properties": {"kind": {"type": "integer"}}},
        "properties[kind].type: must be string",
    ),
    (
        "apiVersion not a string",
        {"type": "object", "properties": {"apiVersion": {"type": "object"}}},
        "properties[apiVersion].type: must be string",
    ),
    (
        "metadata not an object",
        {"type": "object", "properties": {"metadata": {"type": "string"}}},
        "properties[metadata].type: must be object",
    ),
    (
        "metadata restricts labels",
        {
            "type": "object",
            "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}},
        },
        "must not specify anything other than name and generateName",
    ),
    (
        "metadata with description",
        {"type": "object", "properties": {"metadata": {"type": "object", "description": "x"}}},
        "must not specify anything other than name and generateName",
    ),
    # --- ValidateStructural: value validations (junctors)
    (
        "type inside anyOf",
        root(type="string", anyOf=[{"type": "string"}]),
        "properties[spec].anyOf[0].type: Forbidden: must be empty to be structural",
    ),
    (
        "default inside allOf",
        root(type="string", allOf=[{"default": "x"}]),
        "allOf[0].default: Forbidden: must be undefined to be structural",
    ),
    (
        "description inside oneOf",
        root(type="string", oneOf=[{"description": "x"}]),
        "oneOf[0].description: Forbidden: must be empty to be structural",
    ),
    (
        "nullable inside not",
        root(type="string", **{"not": {"nullable": True}}),
        "not.nullable: Forbidden: must be false to be structural",
    ),
    (
        "additionalProperties inside anyOf",
        root(type="object", anyOf=[{"additionalProperties": {"type": "string"}}]),
        "anyOf[0].additionalProperties: Forbidden: must be undefined to be structural",
    ),
    (
        "title inside anyOf",
        root(type="string", anyOf=[{"title": "x"}]),
        "anyOf[0].title: Forbidden: must be empty to be structural",
    ),
    (
        "x-kubernetes-validations inside anyOf",
        root(type="string", anyOf=[{"x-kubernetes-validations": [{"rule": "true"}]}]),
        "anyOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural",
    ),
    (
        "list-type inside oneOf",
        root(type="array", items={"type": "string"}, oneOf=[{"x-kubernetes-list-type": "set"}]),
        "oneOf[0].x-kubernetes-list-type: Forbidden: must be undefined to be structural",
    ),
    (
        "metadata inside a junctor",
        {
            "type": "object",
            "properties": {"metadata": {"type": "object"}},
            "anyOf": [{"properties": {"metadata": {}}}],
        },
        "anyOf[0].properties[metadata]: Forbidden: must not be specified in a nested context",
    ),
    (
        "invalid pattern",
        root(type="string", pattern="(unclosed"),
        'properties[spec].pattern: Invalid value: "(unclosed": must be a valid regular expression',
    ),
    (
        "lookahead pattern (RE2)",
        root(type="string", pattern="^(?!x).*$"),
        "RE2 has no lookaround or backreferences",
    ),
    (
        "backreference pattern (RE2)",
        root(type="string", pattern=r"^(a)\1$"),
        "RE2 has no lookaround or backreferences",
    ),
    # --- validateStructuralCompleteness
    (
        "property only in a junctor",
        root(type="object", anyOf=[{"properties": {"ghost": {"minLength": 1}}}]),
        "properties[spec].properties[ghost]: Required value: because it is defined in openAPIV3Schema.properties[spec].anyOf[0].properties[ghost]",
    ),
    (
        "items only in a junctor",
        root(type="object", allOf=[{"items": {"minLength": 1}}]),
        "properties[spec].items: Required value: because it is defined in openAPIV3Schema.properties[spec].allOf[0].items",
    ),
    # --- ValidateCustomResourceDefinitionOpenAPISchema
    (
        "uniqueItems",
        root(type="array", items={"type": "string"}, uniqueItems=True),
        "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
    ),
    (
        "properties and additionalProperties",
        root(type="object", properties={"a": {"type": "string"}}, additionalProperties={"type": "string"}),
        "additionalProperties and properties are mutual exclusive",
    ),
    (
        "additionalProperties false",
        root(type="object", additionalProperties=False),
        "additionalProperties cannot be set to false",
    ),
    ("$ref", root(type="object", **{"$ref": "#/definitions/x"}), "$ref: Forbidden: $ref is not supported"),
    (
        "definitions",
        {"type": "object", "definitions": {"x": {"type": "string"}}},
        "definitions: Forbidden: definitions is not supported",
    ),
    (
        "patternProperties",
        root(type="object", patternProperties={"^a": {"type": "string"}}),
        "patternProperties is not supported",
    ),
    ("dependencies", root(type="object", dependencies={"a": ["b"]}), "dependencies is not supported"),
    (
        "additionalItems",
        root(type="array", items={"type": "string"}, additionalItems=False),
        "additionalItems is not supported",
    ),
    ("id", root(type="object", id="x"), "id: Forbidden: id is not supported"),
    (
        "items as an array",
        root(type="array", items=[{"type": "string"}]),
        "items must be a schema object and not an array",
    ),
    ("type null", root(type="null"), "type cannot be set to null"),
    (
        "several types",
        root(type=["string", "integer"]),
        "multiple values via an array for Type is not supported",
    ),
    (
        "preserve-unknown false",
        root(type="object", **{"x-kubernetes-preserve-unknown-fields": False}),
        "must be true or undefined",
    ),
    (
        "map-type on a string",
        root(type="string", **{"x-kubernetes-map-type": "atomic"}),
        "must be object if x-kubernetes-map-type is specified",
    ),
    (
        "unknown map-type",
        root(type="object", **{"x-kubernetes-map-type": "merge"}),
        'x-kubernetes-map-type: Unsupported value: "merge"',
    ),
    (
        "list-type on an object",
        root(type="object", **{"x-kubernetes-list-type": "set"}),
        "must be array if x-kubernetes-list-type is specified",
    ),
    (
        "unknown list-type",
        root(type="array", items={"type": "string"}, **{"x-kubernetes-list-type": "bag"}),
        'x-kubernetes-list-type: Unsupported value: "bag"',
    ),
    (
        "list-map-keys without map",
        root(
            type="array",
            items={"type": "object"},
            **{"x-kubernetes-list-type": "set", "x-kubernetes-list-map-keys": ["a"]},
        ),
        "must be map if x-kubernetes-list-map-keys is non-empty",
    ),
    (
        "map without keys",
        root(type="array", items={"type": "object"}, **{"x-kubernetes-list-type": "map"}),
        "x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map",
    ),
    (
        "map of strings",
        root(
            type="array",
            items={"type": "string"},
            **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a"]},
        ),
        "must be object if parent array's x-kubernetes-list-type is map",
    ),
    (
        "map key not a property",
        root(
            type="array",
            items={"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["b"]},
        ),
        "entries must all be names of item properties",
    ),
    (
        "map key not scalar",
        root(
            type="array",
            items={"type": "object", "properties": {"a": {"type": "object"}}, "required": ["a"]},
            **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a"]},
        ),
        "must be a scalar type if parent array's x-kubernetes-list-type is map",
    ),
    (
        "map key optional without default",
        root(
            type="array",
            items={"type": "object", "properties": {"a": {"type": "string"}}},
            **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a"]},
        ),
        "must have a default or be a required property",
    ),
    (
        "set of granular objects",
        root(
            type="array",
            items={"type": "object", "properties": {"a": {"type": "string"}}},
            **{"x-kubernetes-list-type": "set"},
        ),
        "items.x-kubernetes-map-type: must be atomic as item of a list with x-kubernetes-list-type=set",
    ),
    (
        "CEL rule empty",
        root(type="string", **{"x-kubernetes-validations": [{"rule": " "}]}),
        "x-kubernetes-validations[0].rule: Required value: rule is not specified",
    ),
    (
        "CEL message with line break",
        root(type="string", **{"x-kubernetes-validations": [{"rule": "true", "message": "a\nb"}]}),
        "message must not contain line breaks",
    ),
    (
        "CEL multi-line rule without message",
        root(type="string", **{"x-kubernetes-validations": [{"rule": "true &&\ntrue"}]}),
        "message must be specified if rule contains line breaks",
    ),
    (
        "CEL unknown reason",
        root(type="string", **{"x-kubernetes-validations": [{"rule": "true", "reason": "Nope"}]}),
        "reason: Unsupported value",
    ),
    (
        "default in top-level metadata",
        {"type": "object", "properties": {"metadata": {"type": "object", "default": {"name": "x"}}}},
        "properties[metadata].default: Forbidden: in top-level metadata",
    ),
    # --- defaults must validate and be pruned
    (
        "default of the wrong type",
        root(type="object", properties={"a": {"type": "integer", "default": "x"}}),
        "properties[a].default: Invalid value",
    ),
    (
        "default breaking a bound",
        root(type="object", properties={"a": {"type": "integer", "minimum": 5, "default": 1}}),
        "properties[a].default: Invalid value",
    ),
    (
        "default with unknown fields",
        root(
            type="object",
            properties={
                "a": {"type": "object", "properties": {"b": {"type": "string"}}, "default": {"c": "x"}}
            },
        ),
        "must not have unknown fields (c)",
    ),
    (
        "null default on non-nullable",
        root(type="object", properties={"a": {"type": "string", "default": None}}),
        "must not be null for non-nullable field",
    ),
]


@pytest.mark.parametrize(
    ("schema", "message"), [(s, m) for _, s, m in REJECTED], ids=[n for n, _, _ in REJECTED]
)
def test_rejected(schema: dict[str, Any], message: str) -> None:
    errors = check_schema(schema)
    assert any(message in e for e in errors), errors


def _crd(versions: list[dict[str, Any]], name: str = "widgets.demo.example.com") -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {
            "group": "demo.example.com",
            "names": {"kind": "Widget", "listKind": "WidgetList", "plural": "widgets", "singular": "widget"},
            "scope": "Namespaced",
            "versions": versions,
        },
    }


def _version(name: str, storage: bool) -> dict[str, Any]:
    return {
        "name": name,
        "served": True,
        "storage": storage,
        "schema": {"openAPIV3Schema": {"type": "object"}},
    }


def test_crd_level_rules() -> None:
    assert check_crd(_crd([_version("v1", True)])) == []
    assert any("exactly one version marked as storage" in e for e in check_crd(_crd([_version("v1", False)])))
    two = check_crd(_crd([_version("v1", True), _version("v2", True)]))
    assert any("exactly one version marked as storage" in e for e in two)
    dup = check_crd(_crd([_version("v1", True), _version("v1", False)]))
    assert any("unique version names" in e for e in dup)
    assert any(
        "metadata.name" in e for e in check_crd(_crd([_version("v1", True)], name="x.demo.example.com"))
    )
    no_schema = _crd([{"name": "v1", "served": True, "storage": True}])
    assert any("schemas are required" in e for e in check_crd(no_schema))


def test_the_emulator_gets_the_same_errors_as_422_causes() -> None:
    crd = _crd([_version("v1", True)], name="x.demo.example.com")
    crd["spec"]["scope"] = "Galaxy"
    crd["spec"]["names"]["plural"] = "Widgets"
    assert crd_causes(crd) == [
        {
            "reason": "FieldValueInvalid",
            "field": "metadata.name",
            "message": 'Invalid value: "x.demo.example.com": must be spec.names.plural+"."+spec.group',
        },
        {
            "reason": "FieldValueNotSupported",
            "field": "spec.scope",
            "message": 'Unsupported value: "Galaxy": supported values: "Cluster", "Namespaced"',
        },
        {
            "reason": "FieldValueInvalid",
            "field": "spec.names.plural",
            "message": 'Invalid value: "Widgets": a lowercase RFC 1035 label must consist of lower case '
            "alphanumeric characters or '-', start with an alphabetic character, and end with an "
            "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
            "'[a-z]([-a-z0-9]*[a-z0-9])?')",
        },
    ]
    assert [c["field"] for c in crd_causes({**crd, "spec": {**crd["spec"], "group": ""}})][:1] == [
        "spec.group"
    ]


def test_names_columns_and_scale_rules() -> None:
    crd = _crd([_version("v1", True)])
    crd["spec"]["names"].update(shortNames=["Bad_Name"], categories=["all"], listKind="Widget")
    version = crd["spec"]["versions"][0]
    version["additionalPrinterColumns"] = [
        {"name": "A", "type": "string", "jsonPath": ".spec.a"},
        {"name": "A", "type": "text", "jsonPath": "spec.a", "format": "fancy", "priority": -1},
    ]
    version["subresources"] = {"scale": {"specReplicasPath": ".status.replicas", "statusReplicasPath": ".spec.x",
                                         "labelSelectorPath": ".metadata.labels"}}  # fmt: skip
    errors = "\n".join(check_crd(crd))
    for message in (
        'spec.names.shortNames[0]: Invalid value: "Bad_Name"',
        'spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same',
        'additionalPrinterColumns[1].name: Duplicate value: "A"',
        'additionalPrinterColumns[1].type: Unsupported value: "text"',
        'additionalPrinterColumns[1].format: Unsupported value: "fancy"',
        "additionalPrinterColumns[1].priority: Invalid value: -1",
        'additionalPrinterColumns[1].jsonPath: Invalid value: "spec.a"',
        "scale.specReplicasPath: Invalid value: should be a json path under .spec",
        "scale.statusReplicasPath: Invalid value: should be a json path under .status",
        "scale.labelSelectorPath: Invalid value: should be a json path under either .spec or .status",
    ):
        assert message in errors, message
