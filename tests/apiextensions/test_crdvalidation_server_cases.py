# ruff: noqa: E501 - the API server's messages are compared verbatim
"""Schemas and the exact violations the real API server reports for them.

Cases re-created from apiextensions-apiserver's integration test of non-structural schemas
(`TestNonStructuralSchemaCondition`): each schema below is one the server flags, with the messages
it reports (path prefix `spec.versions[0].schema.openAPIV3Schema`).
"""

from __future__ import annotations

import pytest
import yaml

from pyscaffold_op.apiextensions.crdvalidation import check_schema

P = "spec.versions[0].schema.openAPIV3Schema"

CASES = {
    "forbidden in nested value validation": (
        """
type: object
properties:
  foo:
    type: string
not:
  type: string
  additionalProperties: true
  title: hello
  description: world
  nullable: true
allOf:
- properties:
    foo:
      type: string
      additionalProperties: true
      title: hello
      description: world
      nullable: true
anyOf:
- items:
    type: string
    additionalProperties: true
    title: hello
    description: world
    nullable: true
oneOf:
- properties:
    foo:
      type: string
      additionalProperties: true
      title: hello
      description: world
      nullable: true
""",
        [
            f"{P}.anyOf[0].items.type: Forbidden: must be empty to be structural",
            f"{P}.anyOf[0].items.additionalProperties: Forbidden: must be undefined to be structural",
            f"{P}.anyOf[0].items.title: Forbidden: must be empty to be structural",
            f"{P}.anyOf[0].items.description: Forbidden: must be empty to be structural",
            f"{P}.anyOf[0].items.nullable: Forbidden: must be false to be structural",
            f"{P}.allOf[0].properties[foo].type: Forbidden: must be empty to be structural",
            f"{P}.allOf[0].properties[foo].additionalProperties: Forbidden: must be undefined to be structural",
            f"{P}.allOf[0].properties[foo].title: Forbidden: must be empty to be structural",
            f"{P}.allOf[0].properties[foo].description: Forbidden: must be empty to be structural",
            f"{P}.allOf[0].properties[foo].nullable: Forbidden: must be false to be structural",
            f"{P}.oneOf[0].properties[foo].type: Forbidden: must be empty to be structural",
            f"{P}.oneOf[0].properties[foo].nullable: Forbidden: must be false to be structural",
            f"{P}.not.type: Forbidden: must be empty to be structural",
            f"{P}.not.additionalProperties: Forbidden: must be undefined to be structural",
            f"{P}.not.title: Forbidden: must be empty to be structural",
            f"{P}.not.description: Forbidden: must be empty to be structural",
            f"{P}.not.nullable: Forbidden: must be false to be structural",
            f"{P}.items: Required value: because it is defined in {P}.anyOf[0].items",
        ],
        [f"{P}.not.default"],
    ),
    "missing types without extensions": (
        """
properties:
  foo:
    properties:
      a: {}
  bar:
    items:
      additionalProperties:
        properties:
          a: {}
        items: {}
  abc:
    additionalProperties:
      properties:
        a:
          items:
            additionalProperties:
              items:
""",
        [
            f"{P}.properties[foo].properties[a].type: Required value: must not be empty for specified object fields",
            f"{P}.properties[foo].type: Required value: must not be empty for specified object fields",
            f"{P}.properties[abc].additionalProperties.properties[a].items.additionalProperties.type: Required value: must not be empty for specified object fields",
            f"{P}.properties[abc].additionalProperties.properties[a].items.type: Required value: must not be empty for specified array items",
            f"{P}.properties[abc].additionalProperties.properties[a].type: Required value: must not be empty for specified object fields",
            f"{P}.properties[abc].additionalProperties.type: Required value: must not be empty for specified object fields",
            f"{P}.properties[abc].type: Required value: must not be empty for specified object fields",
            f"{P}.properties[bar].items.additionalProperties.items.type: Required value: must not be empty for specified array items",
            f"{P}.properties[bar].items.additionalProperties.properties[a].type: Required value: must not be empty for specified object fields",
            f"{P}.properties[bar].items.additionalProperties.type: Required value: must not be empty for specified object fields",
            f"{P}.properties[bar].items.type: Required value: must not be empty for specified array items",
            f"{P}.properties[bar].type: Required value: must not be empty for specified object fields",
            f"{P}.type: Required value: must not be empty at the root",
        ],
        [],
    ),
    "int-or-string variants": (
        """
type: object
properties:
  a:
    x-kubernetes-int-or-string: true
  b:
    x-kubernetes-int-or-string: true
    anyOf:
    - type: integer
    - type: string
    allOf:
    - pattern: abc
  c:
    x-kubernetes-int-or-string: true
    allOf:
    - anyOf:
      - type: integer
      - type: string
    - pattern: abc
    - pattern: abc
  d:
    x-kubernetes-int-or-string: true
    anyOf:
    - type: integer
    - type: string
      pattern: abc
  e:
    x-kubernetes-int-or-string: true
    allOf:
    - anyOf:
      - type: integer
      - type: string
        pattern: abc
    - pattern: abc
  f:
    x-kubernetes-int-or-string: true
    anyOf:
    - type: integer
    - type: string
    - pattern: abc
  g:
    x-kubernetes-int-or-string: true
    anyOf:
    - type: string
    - type: integer
""",
        [
            f"{P}.properties[d].anyOf[0].type: Forbidden: must be empty to be structural",
            f"{P}.properties[d].anyOf[1].type: Forbidden: must be empty to be structural",
            f"{P}.properties[e].allOf[0].anyOf[0].type: Forbidden: must be empty to be structural",
            f"{P}.properties[e].allOf[0].anyOf[1].type: Forbidden: must be empty to be structural",
            f"{P}.properties[f].anyOf[0].type: Forbidden: must be empty to be structural",
            f"{P}.properties[f].anyOf[1].type: Forbidden: must be empty to be structural",
            f"{P}.properties[g].anyOf[0].type: Forbidden: must be empty to be structural",
            f"{P}.properties[g].anyOf[1].type: Forbidden: must be empty to be structural",
        ],
        [f"{P}.properties[a]", f"{P}.properties[b]", f"{P}.properties[c]"],
    ),
    "forbidden additionalProperties at the root": (
        "type: object\nadditionalProperties: false\n",
        [f"{P}.additionalProperties: Forbidden: must not be used at the root"],
        [],
    ),
    "structural incomplete": (
        """
type: object
properties:
  b:
    type: object
    properties:
      b:
        type: array
  c:
    type: array
    items:
      type: object
  d:
    type: array
not:
  properties:
    a: {}
    b:
      not:
        properties:
          a: {}
          b:
            items: {}
    c:
      items:
        not:
          items:
            properties:
              a: {}
    d:
      items: {}
allOf:
- properties:
    e: {}
anyOf:
- properties:
    f: {}
oneOf:
- properties:
    g: {}
""",
        [
            f"{P}.properties[d].items: Required value: because it is defined in {P}.not.properties[d].items",
            f"{P}.properties[a]: Required value: because it is defined in {P}.not.properties[a]",
            f"{P}.properties[b].properties[a]: Required value: because it is defined in {P}.not.properties[b].not.properties[a]",
            f"{P}.properties[b].properties[b].items: Required value: because it is defined in {P}.not.properties[b].not.properties[b].items",
            f"{P}.properties[c].items.items: Required value: because it is defined in {P}.not.properties[c].items.not.items",
            f"{P}.properties[e]: Required value: because it is defined in {P}.allOf[0].properties[e]",
            f"{P}.properties[f]: Required value: because it is defined in {P}.anyOf[0].properties[f]",
            f"{P}.properties[g]: Required value: because it is defined in {P}.oneOf[0].properties[g]",
        ],
        [],
    ),
    "metadata with non-properties": (
        "type: object\nproperties:\n  metadata:\n    minimum: 42.0\n",
        [
            f"{P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
            f"{P}.properties[metadata].type: Required value: must not be empty for specified object fields",
        ],
        [],
    ),
    "metadata with other properties": (
        """
type: object
properties:
  metadata:
    properties:
      name:
        pattern: "^[a-z]+$"
      labels:
        type: object
        maxLength: 4
""",
        [
            f"{P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
            f"{P}.properties[metadata].type: Required value: must not be empty for specified object fields",
            f"{P}.properties[metadata].properties[name].type: Required value: must not be empty for specified object fields",
        ],
        [],
    ),
}

ACCEPTED = {
    "structural complete": """
type: object
properties:
  a: {type: string}
  b: {type: object, properties: {a: {type: string}, b: {type: array, items: {type: string}}}}
  c: {type: array, items: {type: array, items: {type: object, properties: {a: {type: string}}}}}
  d: {type: array, items: {type: string}}
  e: {type: string}
  f: {type: string}
  g: {type: string}
not:
  properties:
    a: {}
    b: {not: {properties: {a: {}, b: {items: {}}}}}
    c: {items: {not: {items: {properties: {a: {}}}}}}
    d: {items: {}}
allOf:
- properties: {e: {}}
anyOf:
- properties: {f: {}}
oneOf:
- properties: {g: {}}
""",
    "metadata with name and generateName": """
type: object
properties:
  metadata:
    type: object
    properties:
      name: {type: string, pattern: "^[a-z]+$"}
      generateName: {type: string, pattern: "^[a-z]+$"}
""",
    "embedded resource with properties": """
type: object
x-kubernetes-embedded-resource: true
properties:
  apiVersion: {type: string}
  kind: {type: string}
  metadata: {type: object}
""",
}


@pytest.mark.parametrize("name", list(CASES))
def test_server_violations(name: str) -> None:
    text, expected, unexpected = CASES[name]
    errors = check_schema(yaml.safe_load(text), P)
    for message in expected:
        assert message in errors, f"missing: {message}\ngot: {errors}"
    for prefix in unexpected:
        assert not any(e.startswith(prefix) for e in errors), errors


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_server_accepts(name: str) -> None:
    assert check_schema(yaml.safe_load(ACCEPTED[name]), P) == []
