"""The compiled schema against the interpreters it replaced (`interpreted.py`, the oracle): same pruned
paths, same pruned and defaulted object (key order included), same causes in the same order.

Schemas: every CRD of the repository's YAML (testdata and tests), every schema or CRD a test module of
tests/apiextensions and tests/envtest holds at module level, schemas the generator makes from built-in
models (a CronJob's spec: pod templates, int-or-string, quantities, list-map keys), and a catalogue of
the keywords the others may miss. Objects: seeded random ones drawn from each schema, most of them
spoiled in places (wrong types, missing required, out-of-range numbers, strings off their pattern or
format, unknown fields, nulls, duplicate set items and map keys).
"""

from __future__ import annotations

import copy
import importlib
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from pyscaffold_op.apiextensions import apply_defaults, prune, validate
from pyscaffold_op.apiextensions.compiled import compile_schema

from . import interpreted as oracle

ROOT = Path(__file__).resolve().parents[2]
Schema = dict[str, Any]

CATALOGUE: dict[str, Schema] = {
    "numbers": {
        "type": "object",
        "properties": {
            "i": {"type": "integer", "minimum": 1, "maximum": 10, "multipleOf": 2},
            "x": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 1.5},
            "y": {"type": "number", "maximum": 5, "exclusiveMaximum": True, "default": 1.5},
            "e": {"type": "integer", "enum": [1, 2, 3]},
        },
    },
    "strings": {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
            "when": {"type": "string", "format": "date-time"},
            "day": {"type": "string", "format": "date"},
            "id": {"type": "string", "format": "uuid"},
            "ip": {"type": "string", "format": "ipv4"},
            "ip6": {"type": "string", "format": "ipv6"},
            "net": {"type": "string", "format": "cidr"},
            "data": {"type": "string", "format": "byte"},
            "other": {"type": "string", "format": "email"},
            "mode": {"type": "string", "enum": ["A", "B", 'q"uote'], "default": "A"},
        },
    },
    "lists": {
        "type": "object",
        "properties": {
            "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "unique": {"type": "array", "uniqueItems": True, "minItems": 1, "maxItems": 3},
            "ports": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name", "protocol"],
                "items": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {
                        "name": {"type": "string"},
                        "protocol": {"type": "string", "default": "TCP"},
                        "port": {"x-kubernetes-int-or-string": True},
                    },
                },
            },
            "nested": {
                "type": "array",
                "items": {
                    "type": "array",
                    "items": {"type": "object", "additionalProperties": {"type": "integer"}},
                },
            },
        },
    },
    "maps": {
        "type": "object",
        "minProperties": 1,
        "maxProperties": 3,
        "additionalProperties": {
            "type": "object",
            "nullable": True,
            "properties": {
                "a": {"type": "string", "default": "z"},
                "b": {"type": "integer", "nullable": True},
            },
        },
    },
    "map_defaults": {
        "type": "object",
        "properties": {
            "m": {"type": "object", "additionalProperties": {"type": "string", "default": "d"}},
            "n": {"type": "object", "additionalProperties": {"type": "string"}},
            "free": {"type": "object", "additionalProperties": True},
        },
    },
    "preserve_embedded": {
        "type": "object",
        "properties": {
            "anything": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "template": {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "properties": {
                    "spec": {"type": "object", "properties": {"r": {"type": "integer", "default": 1}}}
                },
            },
            "loose": {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            },
            "objects": {
                "type": "array",
                "items": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                },
            },
        },
    },
    "nullable_defaults": {
        "type": "object",
        "properties": {
            "a": {"type": "string", "nullable": True, "default": "x"},
            "b": {"type": "string", "default": "y"},
            "c": {
                "type": "object",
                "default": {"k": [1]},
                "properties": {"k": {"type": "array", "items": {"type": "integer"}}},
            },
            "d": {"type": "integer"},
            "e": {
                "type": "object",
                "nullable": True,
                "properties": {"f": {"type": "boolean", "default": True}},
            },
        },
    },
    "combinators": {
        "type": "object",
        "properties": {
            "any": {
                "anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^[0-9]+%$"}],
                "x-kubernetes-int-or-string": True,
            },
            "one": {
                "type": "object",
                "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
                "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            },
            "all": {"type": "integer", "allOf": [{"minimum": 0}, {"maximum": 9}]},
            "not": {"type": "string", "not": {"enum": ["forbidden"]}},
            "untyped": {},
        },
    },
}


def _schemas_in(value: Any, out: list[Schema], depth: int = 0) -> None:
    """Schemas anywhere in a module-level value: a CRD's `openAPIV3Schema`, or a dict that looks like a
    schema root (an object type with properties)."""
    if depth > 12:
        return
    if isinstance(value, dict):
        if isinstance(value.get("openAPIV3Schema"), dict):
            out.append(value["openAPIV3Schema"])
            return
        if value.get("type") == "object" and isinstance(value.get("properties"), dict):
            out.append(value)
            return
        for v in value.values():
            _schemas_in(v, out, depth + 1)
    elif isinstance(value, list | tuple):
        for v in value:
            _schemas_in(v, out, depth + 1)


def _yaml_schemas() -> Iterator[tuple[str, Schema]]:
    for base in ("testdata", "tests"):
        for path in sorted((ROOT / base).rglob("*.yaml")):
            text = path.read_text(errors="replace")
            if "CustomResourceDefinition" not in text:
                continue
            found: list[Schema] = []
            try:
                _schemas_in(list(yaml.safe_load_all(text)), found)
            except yaml.YAMLError:
                continue
            for i, s in enumerate(found):
                yield f"{path.relative_to(ROOT)}#{i}", s


def _module_schemas() -> Iterator[tuple[str, Schema]]:
    for package in ("apiextensions", "envtest"):
        for path in sorted((ROOT / "tests" / package).glob("test_*.py")):
            if path.stem == Path(__file__).stem:
                continue
            module = importlib.import_module(f"{package}.{path.stem}")  # tests/ is on sys.path (pytest)
            found: list[Schema] = []
            for name, value in vars(module).items():
                if not name.startswith("_"):
                    _schemas_in(value, found)
            for i, s in enumerate(found):
                yield f"{package}/{path.stem}#{i}", s


def _generated_schemas() -> Iterator[tuple[str, Schema]]:
    from pyscaffold_op.gen.schema import SchemaConverter
    from pyscaffold_op.models.apps_v1 import DeploymentSpec
    from pyscaffold_op.models.batch_v1 import CronJobSpec

    for model in (CronJobSpec, DeploymentSpec):
        yield f"generated/{model.__name__}", SchemaConverter().model_schema(model)


def all_schemas() -> list[tuple[str, Schema]]:
    seen: set[str] = set()
    out: list[tuple[str, Schema]] = []
    sources = (CATALOGUE.items(), _yaml_schemas(), _module_schemas(), _generated_schemas())
    for source in sources:
        for name, schema in source:
            key = json.dumps(schema, sort_keys=True, default=str)
            if key not in seen:
                seen.add(key)
                out.append((name, schema))
    return out


# -- random objects --------------------------------------------------------------------------------------

_JUNK: list[Any] = [
    None, True, False, 0, -3, 7, 2.5, 1e20, "", "abc", "ABC-1", "a\n", "2024-02-30", "2024-01-01T00:00:00Z",
    "10.0.0.1", "::1", "10.0.0.0/8", "aGk=", "not base64!", "123e4567-e89b-12d3-a456-426614174000",
    "50%", {}, {"x": 1}, {"name": "a"}, [], [1, 1.0], ["a", "a"], [{"name": "a"}, {"name": "a"}],
]  # fmt: skip
_STRINGS = ["abc", "ab", "a", "abcdefgh", "x-y", "", "ABC", "2024-01-01", "2024-01-01T10:00:00+02:00",
            "10.1.2.3", "fe80::1", "192.168.0.0/16", "aGVsbG8=", "123e4567-e89b-12d3-a456-426614174000",
            "A", "B", "forbidden", "42%", "TCP", "UDP", "v1", "Pod"]  # fmt: skip


class Draw:
    """Values for a schema from a seeded generator; `spoil` is the chance of a wrong value per node."""

    def __init__(self, rng: random.Random, spoil: float) -> None:
        self.rng, self.spoil = rng, spoil

    def junk(self) -> Any:
        return copy.deepcopy(self.rng.choice(_JUNK))

    def value(self, s: Schema, depth: int = 0) -> Any:
        rng = self.rng
        if rng.random() < self.spoil or depth > 7:
            return self.junk()
        if "enum" in s and s["enum"] and rng.random() < 0.8:
            return copy.deepcopy(rng.choice(s["enum"]))
        if "default" in s and rng.random() < 0.2:
            return copy.deepcopy(s["default"])
        for key in ("anyOf", "oneOf", "allOf"):
            if s.get(key) and not s.get("type") and rng.random() < 0.5:
                return self.value({**s, key: None, **rng.choice(s[key])}, depth)
        if s.get("x-kubernetes-int-or-string"):
            return rng.choice([rng.randint(-5, 100), rng.choice(_STRINGS)])
        typ = s.get("type")
        if typ == "object" or (not typ and ("properties" in s or "additionalProperties" in s)):
            return self.object(s, depth)
        if typ == "array":
            items = s.get("items") if isinstance(s.get("items"), dict) else {}
            n = rng.choice([0, 1, 2, 3])
            out = [self.value(items, depth + 1) for _ in range(n)]
            if out and rng.random() < 0.3:
                out.append(copy.deepcopy(out[0]))  # a duplicate, for sets and map keys
            return out
        if typ == "string":
            return rng.choice(_STRINGS)
        if typ == "integer":
            low, high = s.get("minimum", -20), s.get("maximum", 20)
            if rng.random() < 0.1:
                return float(rng.randint(0, 4))  # an integral float is an integer to the server
            return rng.randint(int(low) - 2, int(high) + 2)
        if typ == "number":
            return rng.choice([rng.uniform(-2, 12), rng.randint(-3, 8)])
        if typ == "boolean":
            return rng.random() < 0.5
        return self.junk()

    def object(self, s: Schema, depth: int) -> dict[str, Any]:
        rng = self.rng
        out: dict[str, Any] = {}
        if s.get("x-kubernetes-embedded-resource") and rng.random() < 0.9:
            out["apiVersion"] = rng.choice(["v1", "", "apps/v1"])
            out["kind"] = rng.choice(["Pod", "ConfigMap", ""])
            out["metadata"] = {"name": "x", "labels": {"a": "b"}, "bogus": 1}
        required = set(s.get("required") or [])
        for key, child in (s.get("properties") or {}).items():
            if (key in required and rng.random() > self.spoil) or rng.random() < 0.6:
                out[key] = self.value(child, depth + 1) if isinstance(child, dict) else self.junk()
        additional = s.get("additionalProperties")
        if isinstance(additional, dict) or additional is True:
            for i in range(rng.choice([0, 1, 2])):
                kid = additional if isinstance(additional, dict) else {}
                out[f"k{i}"] = self.value(kid, depth + 1)
        if rng.random() < 0.3 + self.spoil:
            out[rng.choice(["extra", "zzz", "Spec"])] = self.junk()
        return out

    def resource(self, schema: Schema) -> dict[str, Any]:
        obj = self.value(schema) if schema.get("type") in ("object", None) else {}
        if not isinstance(obj, dict):
            obj = {"spec": obj}
        meta = {"name": "n", "namespace": "default", "labels": {"a": "b"}, "junk": {"x": 1}}
        return {"apiVersion": "x.io/v1", "kind": "X", "metadata": meta, **obj}


def _nodes(s: Any, out: list[Schema], depth: int = 0) -> list[Schema]:
    """Every schema node under `s` (for validating values of a subtree alone, as the generator does with
    defaults)."""
    if isinstance(s, dict) and depth < 40:
        out.append(s)
        for key in ("properties",):
            for child in (s.get(key) or {}).values():
                _nodes(child, out, depth + 1)
        for key in ("items", "additionalProperties", "not"):
            _nodes(s.get(key), out, depth + 1)
        for key in ("allOf", "anyOf", "oneOf"):
            for child in s.get(key) or []:
                _nodes(child, out, depth + 1)
    return out


# -- the comparison --------------------------------------------------------------------------------------


def _outcome(fn: Any, *args: Any, **kw: Any) -> Any:
    try:
        return ("ok", fn(*args, **kw))
    except Exception as err:  # the oracle's failures must be the compiled path's too
        return ("raised", type(err).__name__)


def _text(obj: Any) -> str:
    return json.dumps(obj)  # not sorted: key order is part of the result


def _compare(schema: Schema, compiled: Any, obj: Any, resource_root: bool) -> None:
    a, b, c = copy.deepcopy(obj), copy.deepcopy(obj), copy.deepcopy(obj)
    # each step alone on the raw object, through the public functions
    assert _outcome(validate, obj, schema, "p") == _outcome(oracle.validate, obj, schema, "p")
    want = _outcome(oracle.prune, a, schema, is_resource_root=resource_root)
    assert _outcome(prune, b, schema, is_resource_root=resource_root) == want
    assert _outcome(compiled.prune, c, is_resource_root=resource_root) == want
    assert _text(b) == _text(a) == _text(c)
    # then as the server runs them: prune, default, validate
    want = _outcome(oracle.apply_defaults, a, schema)
    assert _outcome(apply_defaults, b, schema)[0] == want[0]
    assert _outcome(compiled.apply_defaults, c)[0] == want[0]
    assert _text(b) == _text(a) == _text(c)
    want = _outcome(oracle.validate, a, schema)
    assert _outcome(validate, b, schema) == want
    assert _outcome(compiled.validate, c) == want


SCHEMAS = all_schemas()


def test_the_schemas_cover_what_the_compiler_specialises() -> None:
    text = json.dumps([s for _, s in SCHEMAS])
    keywords = [
        "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string",
        "x-kubernetes-preserve-unknown-fields", '"x-kubernetes-list-type": "map"',
        '"x-kubernetes-list-type": "set"', "nullable", "default", "additionalProperties", "pattern",
        "format", "enum", "minimum", "exclusiveMaximum", "multipleOf", "maxLength", "minItems",
        "maxProperties", "anyOf", "oneOf", "allOf", '"not"', "required",
    ]  # fmt: skip
    assert [k for k in keywords if k not in text] == []
    assert len(SCHEMAS) > 30


@pytest.mark.parametrize("spoil", [0.0, 0.05, 0.25])
def test_compiled_equals_interpreted_on_random_objects(spoil: float) -> None:
    rng = random.Random(18 + int(spoil * 100))
    draw = Draw(rng, spoil)
    runs = 0
    for name, schema in SCHEMAS:
        compiled = compile_schema(schema)  # one per schema, as the emulator keeps it across writes
        for _ in range(12):
            obj = draw.resource(schema)
            try:
                _compare(schema, compiled, obj, True)
            except AssertionError as err:
                raise AssertionError(f"{name}: {_text(obj)}") from err
            runs += 1
        nodes = _nodes(schema, [])
        for node in rng.sample(nodes, min(len(nodes), 15)):
            sub = compile_schema(node)
            value = draw.value(node)
            try:
                _compare(node, sub, value, False)
            except AssertionError as err:
                raise AssertionError(f"{name} (node {_text(node)[:200]}): {_text(value)}") from err
            runs += 1
    assert runs > 500


def test_a_shared_subtree_compiles_once_and_serves_every_place() -> None:
    shared = {"type": "object", "properties": {"n": {"type": "integer", "default": 3}}}
    schema = {"type": "object", "properties": {"a": shared, "b": {"type": "array", "items": shared}}}
    compiled = compile_schema(schema)
    obj = compiled.apply_defaults({"a": {}, "b": [{}, {"n": "x"}]})
    assert obj == {"a": {"n": 3}, "b": [{"n": 3}, {"n": "x"}]}
    assert [c["field"] for c in compiled.validate(obj)] == ["b[1].n"]
    assert compiled.node(shared) is compiled.node(schema["properties"]["b"]["items"])
