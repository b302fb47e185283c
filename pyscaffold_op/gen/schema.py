"""pydantic model -> structural OpenAPI v3 schema, as the API server defines it.

Steps, per node of `model_json_schema(by_alias=True)`:
- `$ref`/`$defs` are inlined (a recursive model is an error: structural schemas cannot recurse);
- `anyOf: [X, {type: null}]` becomes X. Nullable policy: `nullable: true` only with the `+nullable`
  marker or the `Nullable` annotation. Why: our wire form (`to_dict()`) never sends nulls, and the
  API server drops nulls of non-nullable fields before validation, so `X | None` means "optional";
- `int | str` becomes `x-kubernetes-int-or-string`; other unions of scalars, unions of models,
  tuples and Decimal are errors naming the model and field;
- `const` -> `enum`; numeric `exclusiveMinimum: n` -> `minimum: n, exclusiveMinimum: true`;
- `title`, `examples`, `readOnly`, `writeOnly`, `discriminator`, `deprecated` are dropped;
- `Any` and `dict[str, Any]` -> `x-kubernetes-preserve-unknown-fields: true`;
- `set[...]` (`uniqueItems`) -> `x-kubernetes-list-type: set` (the API server forbids uniqueItems);
- field markers (`+kubebuilder:validation:*`, `+optional`, `+kubebuilder:default`, `+nullable`,
  `+listType`, ...) are applied on top; a marker contradicting a pydantic constraint is an error.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pydantic_core
from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema

from pyscaffold_op.errors import GenerateError
from pyscaffold_op.gen.builtin import builtin_schema, complete_builtin_models, definition_of
from pyscaffold_op.gen.fastschema import FastSchema, Unsupported
from pyscaffold_op.gen.markers import ITEMS_PREFIX, SPECS, ClassMarkers, Marker, MarkerSpec, class_markers

_MODEL_KEY = "x-pyop-model"
_BUILTIN_KEY = "x-pyop-builtin"
_UNSUPPORTED_KEY = "x-pyop-unsupported"
# Formats the API server knows (k8s.io/kube-openapi strfmt) and pydantic's wire form matches; others are
# dropped. Not `duration`: pydantic writes timedelta as ISO 8601 (PT1H), the server expects Go's (1h).
K8S_FORMATS = {
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "datetime",
    "date-time",
    "int32",
    "int64",
    "float",
    "double",
}
_DROP = {
    "title",
    "examples",
    "readOnly",
    "writeOnly",
    "discriminator",
    "deprecated",
    "$comment",
    "contentMediaType",
    "contentEncoding",
    "$schema",
}
_UNSUPPORTED = {
    "prefixItems": "tuples are not supported (use a list or a model)",
    "oneOf": "unions of several shapes are not structural (use one model with optional fields)",
    "allOf": "allOf is not supported here",
    "not": "'not' schemas are not supported",
    "patternProperties": "dict keys with constraints are not supported",
    "propertyNames": "dict keys with constraints are not supported",
    "dependentRequired": "dependent fields are not supported",
    "dependentSchemas": "dependent fields are not supported",
    "unevaluatedProperties": "unevaluatedProperties is not supported",
    "if": "conditional schemas are not supported",
}
_SHAPE_KEYS = {
    "type",
    "enum",
    "const",
    "anyOf",
    "properties",
    "items",
    "additionalProperties",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    _MODEL_KEY,
    _BUILTIN_KEY,
}
_NUMERIC = {"minimum", "maximum", "multipleOf"}
_TYPES = {"array", "boolean", "integer", "number", "object", "string"}  # what the API server accepts
# pydantic leaks a constraint's own name into the JSON schema when it sits on a validated type
# (`Annotated[Int64, Field(ge=0)]`): the JSON schema keyword each one means
_LEAKED = {
    "ge": "minimum",
    "le": "maximum",
    "gt": "exclusiveMinimum",
    "lt": "exclusiveMaximum",
    "multiple_of": "multipleOf",
    "min_length": "minLength",
    "max_length": "maxLength",
}
_LEAKED_ARRAY = {**_LEAKED, "min_length": "minItems", "max_length": "maxItems"}
_KEEP = {
    "description",
    "type",
    "format",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "properties",
    "additionalProperties",
    "nullable",
    "anyOf",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
    "example",
    "externalDocs",
}

API_VERSION_DESCRIPTION = (
    "APIVersion defines the versioned schema of this representation of an object.\n"
    "Servers should convert recognized schemas to the latest internal value, and\n"
    "may reject unrecognized values.\n"
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
)
KIND_DESCRIPTION = (
    "Kind is a string value representing the REST resource this object represents.\n"
    "Servers may infer this from the endpoint the client submits requests to.\n"
    "Cannot be updated.\n"
    "In CamelCase.\n"
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)

_NO_SPEC = MarkerSpec()
_VALIDATION = "kubebuilder:validation:"
_OPTIONAL = {"optional", "k8s:optional", "kubebuilder:validation:Optional"}
_REQUIRED = {"required", "k8s:required", "kubebuilder:validation:Required"}
_REQUIREDNESS = _OPTIONAL | _REQUIRED
# type-level markers that count the fields set, in the order controller-gen writes their rules
# (after the XValidation rules), with its rule operator and message
_ONE_OF = {
    _VALIDATION + "AtMostOneOf": ("<= 1", "at most one of the fields in {} may be set"),
    _VALIDATION + "ExactlyOneOf": ("== 1", "exactly one of the fields in {} must be set"),
    _VALIDATION + "AtLeastOneOf": (">= 1", "at least one of the fields in {} must be set"),
}
_IMMUTABLE = {"message": "field is immutable", "rule": "self == oldSelf"}


def _holds_model(value: Any) -> bool:
    if isinstance(value, BaseModel):
        return True
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_holds_model(item) for item in value)
    if isinstance(value, dict):
        return any(_holds_model(item) for item in value.values())
    return False


def _generator(models: dict[str, type]) -> type[GenerateJsonSchema]:
    """pydantic's generator, tagging each model's schema with its class (recorded in `models`, one dict
    per conversion, so conversions never share state) so that markers can be found."""

    class Generator(GenerateJsonSchema):
        def encode_default(self, dft: Any) -> Any:
            # a model default (`resources: Resources = Resources()`) goes on the wire like `to_dict()`:
            # its unset (None) fields left out, since the server rejects a default holding a null
            if dft is None or type(dft) in (str, int, bool):
                return dft  # what pydantic's encoding gives, without its TypeAdapter per default (0.1 ms)
            if _holds_model(dft):
                return pydantic_core.to_jsonable_python(dft, by_alias=True, exclude_none=True)
            return super().encode_default(dft)

        def complex_schema(self, schema: Any) -> Any:
            # pydantic writes `complex` as a plain string: a CRD would silently take any text
            return {_UNSUPPORTED_KEY: "complex numbers have no Kubernetes type (use two numbers or a string)"}

        def generate_inner(self, schema: Any) -> Any:
            # A built-in model is its name (below): put it straight into the definitions, without
            # pydantic's per-node handlers, which cost 1.5-2 ms per kind for PodSpec's ~30 models.
            if schema.get("type") == "model" and "ref" in schema:
                builtin = definition_of(schema["cls"])
                if builtin is not None:
                    defs_ref, reference = self.get_cache_defs_ref_schema(schema["ref"])
                    self.definitions[defs_ref] = {_BUILTIN_KEY: builtin}
                    return reference
            return super().generate_inner(schema)

        def model_schema(self, schema: Any) -> Any:
            cls = schema["cls"]
            builtin = definition_of(cls)
            if builtin is not None:  # a built-in type: its schema comes from the Kubernetes spec
                return {_BUILTIN_KEY: builtin}
            result = super().model_schema(schema)
            if schema.get("root_model"):
                return result  # a RootModel is its root's schema, not an object
            key = f"{cls.__module__}:{cls.__qualname__}"
            models[key] = cls
            result[_MODEL_KEY] = key
            return result

    return Generator


class SchemaConverter:
    """Converts pydantic models to structural schemas; one instance per generation run."""

    def __init__(
        self, markers_of: Callable[[type], ClassMarkers] = class_markers, *, fast: bool = True
    ) -> None:
        self._read_markers = markers_of
        self._sources: dict[str, str | None] = {}  # file texts for the run (gen.markers.class_markers)
        # pydantic's JSON schema written from the fields (gen.fastschema), pydantic's own path for
        # what it does not know; `fast=False` takes pydantic's path for every model
        self._fast = FastSchema(_generator, definition_of, _MODEL_KEY, _BUILTIN_KEY) if fast else None
        self.fast_models = 0  # models the fast path converted (tests check it was taken)
        # per class, for the run: a base (CustomResource, KubeModel) is met once per kind, and reading
        # it means reading its file again (the parse itself is cached by content)
        self._markers: dict[type, ClassMarkers] = {}

    def _markers_of(self, cls: type) -> ClassMarkers:
        if cls not in self._markers:
            reader = self._read_markers
            self._markers[cls] = reader(cls, self._sources) if reader is class_markers else reader(cls)
        return self._markers[cls]

    def markers_of(self, cls: type) -> ClassMarkers:
        """`class_markers(cls)`, read once per run."""
        return self._markers_of(cls)

    # ---------------------------------------------------------- entry points

    def model_schema(self, cls: type[BaseModel]) -> dict[str, Any]:
        """The structural schema of any pydantic model (no Kubernetes root rules)."""
        schema = self.fast_schema(cls)
        if schema is not None:
            self.fast_models += 1
            return schema
        return self.pydantic_schema(cls)

    def fast_schema(self, cls: type[BaseModel]) -> dict[str, Any] | None:
        """The schema from the model's fields (`gen.fastschema`), or None where pydantic's path must
        answer: a shape it does not know, or an error (pydantic's path words it, as it always has)."""
        if self._fast is None:
            return None
        models: dict[str, type] = {}
        try:
            raw = self._fast.json_schema(cls, models)
        except Unsupported:
            return None
        defs = raw.pop("$defs", {})
        try:
            return _Run(self, defs, models).convert(raw, (), cls.__name__)
        except GenerateError:
            return None

    def pydantic_schema(self, cls: type[BaseModel]) -> dict[str, Any]:
        """The schema from pydantic's `model_json_schema` (builds the class if it is deferred)."""
        models: dict[str, type] = {}
        complete_builtin_models(sys.modules.get(cls.__module__))
        raw = cls.model_json_schema(by_alias=True, schema_generator=_generator(models))
        defs = raw.pop("$defs", {})
        return _Run(self, defs, models).convert(raw, (), f"{cls.__name__}")

    def kind_schema(self, cls: type) -> dict[str, Any]:
        """The openAPIV3Schema of a CustomResource: apiVersion/kind strings, metadata `type: object`."""
        schema = self.model_schema(cls)
        props = schema.setdefault("properties", {})
        props["apiVersion"] = {"description": API_VERSION_DESCRIPTION, "type": "string"}
        props["kind"] = {"description": KIND_DESCRIPTION, "type": "string"}
        props["metadata"] = {"type": "object"}
        required = [r for r in schema.get("required", []) if r not in ("apiVersion", "kind", "metadata")]
        if required:
            schema["required"] = required
        else:
            schema.pop("required", None)
        return schema


class _Run:
    """One model's conversion: its `$defs`, its models by key, and the converter's marker lookup."""

    def __init__(self, owner: SchemaConverter, defs: dict[str, Any], models: dict[str, type]) -> None:
        self.owner = owner
        self.defs = defs
        self.models = models
        self.lines: dict[str, str] = {}  # "Model.field" -> "path:line"

    def fail(self, where: str, message: str) -> GenerateError:
        """An error naming the model and field, after the file and line that declare the field."""
        field_path = where.split("[", 1)[0].split("{", 1)[0]
        line = self.lines.get(field_path)
        return GenerateError(f"{_relative(line)}: {where}: {message}" if line else f"{where}: {message}")

    # ---------------------------------------------------------- nodes

    def convert(
        self, node: dict[str, Any], stack: tuple[str, ...], where: str, overlay: bool = False
    ) -> dict[str, Any]:
        """Convert one node; `overlay` marks a partial node (keywords beside a $ref or an anyOf)."""
        node = dict(node)
        if "allOf" in node and len(node["allOf"]) == 1 and "$ref" in node["allOf"][0]:
            node.update(node.pop("allOf")[0])  # older pydantic wraps refs with siblings in allOf
        if "$ref" in node:
            return self._ref(node, stack, where)
        if _BUILTIN_KEY in node:
            return builtin_schema(node[_BUILTIN_KEY])
        if _UNSUPPORTED_KEY in node:
            raise self.fail(where, node[_UNSUPPORTED_KEY])
        for key, why in _UNSUPPORTED.items():
            if key in node:
                raise self.fail(where, why)
        if "anyOf" in node:
            return self._any_of(node, stack, where)
        if node.get("type") == "null":
            raise self.fail(where, "a field that can only be None has no schema")
        if isinstance(node.get("type"), list):
            raise self.fail(where, f"several types {node['type']} are not structural")
        out: dict[str, Any] = {}
        leaked = _LEAKED_ARRAY if node.get("type") == "array" else _LEAKED
        node = {leaked.get(key, key): value for key, value in node.items()}
        for key, value in node.items():
            if key in _DROP or key == _MODEL_KEY or key == "uniqueItems":
                continue
            if key == "const":
                out["enum"] = [value]
            elif key in ("exclusiveMinimum", "exclusiveMaximum") and not isinstance(value, bool):
                bound = int(value) if isinstance(value, float) and value.is_integer() else value
                out["minimum" if key == "exclusiveMinimum" else "maximum"] = bound
                out[key] = True
            elif key == "items":
                if isinstance(value, list):
                    raise self.fail(where, "tuples are not supported (use a list or a model)")
                out["items"] = self.convert(value, stack, f"{where}[]")
            elif key == "additionalProperties":
                self._additional(out, value, stack, where)
            elif key == "properties":
                pass  # handled below with the model's markers
            elif key == "format":
                if value in K8S_FORMATS:
                    out["format"] = value
            elif key in _NUMERIC and isinstance(value, float) and value.is_integer():
                out[key] = int(value)  # `maximum: 1`, as controller-gen writes it
            elif key in _KEEP:
                out[key] = copy.deepcopy(value)
            else:
                raise self.fail(where, f"JSON schema keyword {key!r} has no Kubernetes equivalent")
        if node.get("uniqueItems"):
            out.setdefault("x-kubernetes-list-type", "set")
        if "properties" in node or _MODEL_KEY in node:
            self._model(node, out, stack, where)
        if "enum" in out and "type" not in out:
            out["type"] = _enum_type(out["enum"], lambda m: self.fail(where, m))
        if not overlay and not any(k in node for k in _SHAPE_KEYS):  # Any: no shape at all
            out["x-kubernetes-preserve-unknown-fields"] = True
        return out

    def _ref(self, node: dict[str, Any], stack: tuple[str, ...], where: str) -> dict[str, Any]:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name in stack:
            raise self.fail(
                where,
                f"recursive model {name} is not supported (structural schemas cannot "
                "recurse; use FreeForm for the recursive part)",
            )
        target = self.convert(self.defs[name], (*stack, name), where)
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if siblings:
            target.update(self.convert(siblings, stack, where, overlay=True))
        return target

    def _any_of(self, node: dict[str, Any], stack: tuple[str, ...], where: str) -> dict[str, Any]:
        branches = [b for b in node["anyOf"] if b.get("type") != "null"]
        outer = {k: v for k, v in node.items() if k != "anyOf"}
        if outer.get("default", 0) is None:
            del outer["default"]
        if not branches:
            raise self.fail(where, "a field that can only be None has no schema")
        if len(branches) == 1:
            merged = self.convert(branches[0], stack, where)
            if outer:
                merged.update(self.convert(outer, stack, where, overlay=True))
            return merged
        converted = [self.convert(b, stack, where) for b in branches]
        types = [c.get("type") for c in converted]
        if sorted(t or "" for t in types) == ["integer", "string"]:
            out: dict[str, Any] = {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": True,
            }
            for c in converted:
                out.update({k: v for k, v in c.items() if k != "type"})
            out.update(self.convert(outer, stack, where, overlay=True) if outer else {})
            return out
        if (
            len(set(types)) == 1
            and types[0] not in (None, "object", "array")
            and all("enum" in c for c in converted)
        ):
            out = {"type": types[0], "enum": [v for c in converted for v in c["enum"]]}
            out.update(self.convert(outer, stack, where, overlay=True) if outer else {})
            return out
        shown = " | ".join(str(t) for t in types)
        if all(t == "object" for t in types):
            raise self.fail(
                where, f"a union of models ({shown}) is not structural; use one model with optional fields"
            )
        raise self.fail(
            where,
            f"the union {shown} is not structural (Decimal and unions of different "
            "scalar types are not supported; use IntOrString or Quantity for int|str)",
        )

    def _additional(self, out: dict[str, Any], value: Any, stack: tuple[str, ...], where: str) -> None:
        if value is True:
            out["x-kubernetes-preserve-unknown-fields"] = True
        elif value is False:
            return  # extra="forbid": the API server prunes unknown fields instead
        else:
            converted = self.convert(value, stack, f"{where}{{}}")
            if converted == {"x-kubernetes-preserve-unknown-fields": True}:
                out["x-kubernetes-preserve-unknown-fields"] = True
            else:
                out["additionalProperties"] = converted

    # ---------------------------------------------------------- models and markers

    def _inherited_markers(self, cls: type) -> ClassMarkers:
        """Field markers and docstrings of `cls` and its model bases (a subclass overrides a base);
        kind and type-level markers only from `cls` itself."""
        merged = ClassMarkers(kind=self.owner._markers_of(cls).kind)
        for klass in reversed(cls.__mro__):
            if getattr(klass, "__pydantic_fields__", None) is None or klass.__module__.startswith(
                "pydantic."
            ):
                continue  # object, BaseModel and its bases, mixins
            own = self.owner._markers_of(klass)
            merged.fields.update(own.fields)
            merged.docs.update(own.docs)
            merged.lines.update(own.lines)
        return merged

    def _model(self, node: dict[str, Any], out: dict[str, Any], stack: tuple[str, ...], where: str) -> None:
        cls = self.models.get(node.get(_MODEL_KEY, ""))
        markers = self._inherited_markers(cls) if cls is not None else ClassMarkers()
        model_name = cls.__name__ if cls is not None else where
        names = _alias_to_field(cls)
        required = set(node.get("required", []))
        props: dict[str, Any] = {}
        immutable: list[str] = []
        for alias, sub in node.get("properties", {}).items():
            field_name = names.get(alias, alias)
            here = f"{model_name}.{field_name}"
            if field_name in markers.lines:
                self.lines[here] = markers.lines[field_name]
            prop = self.convert(sub, stack, here)
            if "description" not in sub and field_name in markers.docs:
                prop["description"] = markers.docs[field_name]  # the attribute docstring
            for marker in markers.fields.get(field_name, []):
                if marker.name in _OPTIONAL:
                    required.discard(alias)
                elif marker.name in _REQUIRED:
                    required.add(alias)
                elif marker.name == "k8s:immutable":
                    immutable.append(alias)
            prop = apply_markers(prop, markers.fields.get(field_name, []), here)
            if prop.get("default", 0) is None and not prop.get("nullable"):
                del prop["default"]
            props[alias] = prop
        if props:
            out["properties"] = props
        out["type"] = "object"
        if required:
            out["required"] = sorted(required)
        else:
            out.pop("required", None)
        # `+k8s:immutable` on an optional field: its own rule cannot see it removed, so the parent's
        # rule forbids that (controller-gen writes these before the type's own rules)
        once_set = [
            {
                "message": f"field {name} is immutable once set",
                "rule": f"!has(oldSelf.{name}) || has(self.{name})",
            }
            for name in immutable
            if name not in required
        ]
        if once_set:
            out["x-kubernetes-validations"] = once_set
        # type-level markers above the class (CEL rules, Min/MaxProperties, ...) apply to its schema
        type_markers = [
            m
            for m in markers.kind
            if SPECS.get(m.name, _NO_SPEC).keyword
            or SPECS.get(m.name, _NO_SPEC).sets
            or m.name in ("kubebuilder:validation:XValidation", "kubebuilder:externalDocs")
        ]
        out.update(apply_markers(dict(out), type_markers, model_name))
        for name in _ONE_OF:
            for marker in (m for m in markers.kind if m.name == name):
                _one_of_rule(out, marker, required, model_name)


def _one_of_rule(out: dict[str, Any], marker: Marker, required: set[str], where: str) -> None:
    """controller-gen's rule for `+kubebuilder:validation:AtMostOneOf=a;b` (and Exactly/AtLeast)."""
    fields = list(marker.value)
    nested = [f for f in fields if "." in f]
    if nested:
        raise GenerateError(
            f"{marker.where}: +{marker.name} cannot reference nested fields: {','.join(nested)}"
        )
    for name in fields:
        if name not in out.get("properties", {}):
            raise GenerateError(f"{marker.where}: +{marker.name} names {name!r}, not a field of {where}")
        if name in required:
            raise GenerateError(
                f"{marker.where}: field {name} is part of a +{marker.name} constraint and cannot be "
                f"required ({where}: give it a default or mark it +optional)"
            )
    if not fields:
        return
    operator, message = _ONE_OF[marker.name]
    count = "[" + ",".join(f"has(self.{f})" for f in fields) + "].filter(x,x==true).size()"
    rule = {"message": message.format("[" + " ".join(fields) + "]"), "rule": f"{count} {operator}"}
    out["x-kubernetes-validations"] = [*out.get("x-kubernetes-validations", []), rule]


def _relative(location: str) -> str:
    """`path:line` with the path relative to the working folder when it is inside it."""
    from pathlib import Path

    path, _, line = location.rpartition(":")
    full, here = Path(path).resolve(), Path.cwd().resolve()
    return f"{full.relative_to(here) if full.is_relative_to(here) else path}:{line}"


def _alias_to_field(cls: type | None) -> dict[str, str]:
    if cls is None:
        return {}
    out = {}
    for name, info in getattr(cls, "model_fields", {}).items():
        alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
        out[alias or name] = name
    return out


def _enum_type(values: list[Any], fail: Callable[[str], GenerateError]) -> str:
    kinds = set()
    for v in values:
        if isinstance(v, bool):
            kinds.add("boolean")
        elif isinstance(v, int):
            kinds.add("integer")
        elif isinstance(v, float):
            kinds.add("number")
        elif isinstance(v, str):
            kinds.add("string")
        else:
            kinds.add(type(v).__name__)
    if kinds == {"integer", "number"}:
        return "number"
    if len(kinds) != 1:
        raise fail(f"enum {values!r} mixes types {sorted(kinds)}; a structural enum has one type")
    return kinds.pop()


def _coerce_enum(values: list[Any], type_: str | None) -> list[Any]:
    if type_ == "string":
        return [
            v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v) for v in values
        ]
    return values


def apply_markers(schema: dict[str, Any], markers: list[Marker], where: str) -> dict[str, Any]:
    """Apply field markers to a converted field schema; conflicts with pydantic's constraints fail."""
    out = dict(schema)
    item_markers = [m for m in markers if m.name.startswith(ITEMS_PREFIX)]
    if item_markers:
        if not isinstance(out.get("items"), dict):
            raise GenerateError(
                f"{item_markers[0].where}: +{item_markers[0].name} needs a list field ({where})"
            )
        unprefixed = [replace(m, name=_VALIDATION + m.name[len(ITEMS_PREFIX) :]) for m in item_markers]
        out["items"] = apply_markers(out["items"], unprefixed, f"{where}[]")
        markers = [m for m in markers if not m.name.startswith(ITEMS_PREFIX)]
    list_keys: list[str] = []
    if any(m.name == "kubebuilder:default" for m in markers):
        markers = [m for m in markers if m.name != "default"]  # controller-gen: kubebuilder's wins
    for marker in markers:
        name = marker.name
        if name in _REQUIREDNESS or (name == "default" and marker.value is None):
            continue
        if name == "k8s:immutable":
            out["x-kubernetes-validations"] = [*out.get("x-kubernetes-validations", []), dict(_IMMUTABLE)]
            continue
        if name == "kubebuilder:externalDocs":
            out["externalDocs"] = {k: marker.args[k] for k in ("description", "url") if k in marker.args}
            continue
        if name == "structType" and (
            out.get("type", "object") != "object" or marker.value not in ("granular", "atomic")
        ):
            raise GenerateError(
                f"{marker.where}: +structType must be granular or atomic, on a model field ({where})"
            )
        if name == "listMapKey":
            list_keys.append(marker.value)
            continue
        if name == "kubebuilder:validation:XValidation":
            out["x-kubernetes-validations"] = [*out.get("x-kubernetes-validations", []), dict(marker.args)]
            continue
        if name == "kubebuilder:validation:Schemaless":
            out = {k: v for k, v in out.items() if k == "description"}
            continue
        if name == "kubebuilder:validation:UniqueItems":
            if marker.value:
                _set(out, "x-kubernetes-list-type", "set", marker, where)
            continue
        spec = SPECS.get(name, _NO_SPEC)
        if spec.sets is not None:
            key, value = spec.sets
            out[key] = value
            if key == "x-kubernetes-int-or-string":
                out.pop("type", None)
                out.setdefault("anyOf", [{"type": "integer"}, {"type": "string"}])
            continue
        keyword = spec.keyword
        if keyword is None:
            raise GenerateError(f"{marker.where}: +{name} cannot be used on a field ({where})")
        key = keyword
        value = marker.value
        if key == "enum":
            value = _coerce_enum(list(value), out.get("type"))
        if key == "type" and value not in _TYPES:
            raise GenerateError(
                f"{marker.where}: +{name}={value}: supported values: {', '.join(sorted(_TYPES))} ({where})"
            )
        if (
            key in ("minimum", "maximum", "multipleOf")
            and out.get("type") == "integer"
            and isinstance(value, float)
        ) and value.is_integer():
            value = int(value)
        if key in ("exclusiveMinimum", "exclusiveMaximum") and value is False:
            continue  # controller-gen writes these booleans only when true (omitempty in JSONSchemaProps)
        _set(out, key, value, marker, where)
    if list_keys:
        _set(out, "x-kubernetes-list-map-keys", list_keys, None, where)
        out.setdefault("x-kubernetes-list-type", "map")
    return out


def _set(out: dict[str, Any], key: str, value: Any, marker: Marker | None, where: str) -> None:
    if key in out and out[key] != value:
        origin = f"+{marker.name}" if marker else "the listMapKey markers"
        raise GenerateError(
            f"{where}: {origin} sets {key}={value!r} but the Python type already says {key}={out[key]!r}"
        )
    out[key] = value
