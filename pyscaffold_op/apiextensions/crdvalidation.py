"""The rules apiextensions-apiserver applies to a CustomResourceDefinition before it accepts it.

The structural rules are ported from `k8s.io/apiextensions-apiserver/pkg/apiserver/schema`
(`ValidateStructural`: invariants, value-validation junctors, metadata, completeness) and from the
CRD validation (`ValidateCustomResourceDefinitionOpenAPISchema`: forbidden keywords, uniqueItems,
x-kubernetes-* constraints, CEL rule shape, defaults valid and pruned). Messages name the field path
the way the API server does (`spec.versions[0].schema.openAPIV3Schema.properties[spec].type`).

    check_crd(crd) -> ["field: message", ...]      # the generator's one-line problems
    crd_causes(crd) -> [Cause, ...]                 # the emulator's 422 causes: the same errors

A `properties` map registered with `apiextensions.shared` (a built-in type's, embedded by many CRDs, never
mutated) is checked once per process and context: its errors are kept with a placeholder for the
path above it and re-rooted wherever it appears. Everything else is walked on every call.
re2 is imported for the first `pattern`, pruning and value validation for the first `default`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from pyscaffold_op.apiextensions.shared import is_shared
from pyscaffold_op.apimachinery.fielderrors import Cause, cause, reason_of
from pyscaffold_op.apimachinery.validation import is_dns1035_label

__all__ = ["check_crd", "check_schema", "crd_causes"]

_FORBIDDEN_KEYWORDS = {
    "$ref": "$ref is not supported",
    "$schema": "$schema is not supported",
    "id": "id is not supported",
    "definitions": "definitions is not supported",
    "patternProperties": "patternProperties is not supported",
    "dependencies": "dependencies is not supported",
    "additionalItems": "additionalItems is not supported",
    "prefixItems": "prefixItems is not supported",
    "const": "const is not supported",
    "$defs": "$defs is not supported",
}
_TYPES = {"array", "boolean", "integer", "number", "object", "string"}
_VALUE_VALIDATION = ("allOf", "anyOf", "oneOf", "not")
_NESTED_FORBIDDEN = {
    "type": "must be empty to be structural",
    "additionalProperties": "must be undefined to be structural",
    "default": "must be undefined to be structural",
    "title": "must be empty to be structural",
    "description": "must be empty to be structural",
    "nullable": "must be false to be structural",
    "externalDocs": "must be undefined to be structural",
    "x-kubernetes-preserve-unknown-fields": "must be false to be structural",
    "x-kubernetes-embedded-resource": "must be false to be structural",
    "x-kubernetes-int-or-string": "must be false to be structural",
    "x-kubernetes-list-map-keys": "must be empty to be structural",
    "x-kubernetes-list-type": "must be undefined to be structural",
    "x-kubernetes-map-type": "must be undefined to be structural",
    "x-kubernetes-validations": "must be empty to be structural",
}
_INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]
_REASONS = {"FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"}
_ROOT, _ITEM, _FIELD = "root", "item", "field"
# stands for the path of the node whose shared `properties` were checked; no schema key holds a NUL
_HERE = "\x00"
# (walk, id of a shared properties map, context) -> its errors, paths starting at _HERE
_SHARED_ERRORS: dict[tuple[Any, ...], tuple[str, ...]] = {}


def _q(value: Any) -> str:
    """A value as Go's `%q` shows it in field errors."""
    return json.dumps(value)


def _go_rule(rule: dict[str, Any]) -> str:
    """A rule as the server prints it in field errors (Go's `%#v` of apiextensions.ValidationRule;
    pointers, whose addresses vary, as a fixed address)."""

    def text(key: str) -> str:
        return json.dumps(str(rule.get(key) or ""), ensure_ascii=False)

    def pointer(key: str, typ: str) -> str:
        return f"({typ})(0xc000000000)" if key in rule else f"({typ})(nil)"

    return (
        f"apiextensions.ValidationRule{{Rule:{text('rule')}, Message:{text('message')}, "
        f"MessageExpression:{text('messageExpression')}, "
        f"Reason:{pointer('reason', '*apiextensions.FieldValueErrorReason')}, FieldPath:{text('fieldPath')}, "
        f"OptionalOldSelf:{pointer('optionalOldSelf', '*bool')}}}"
    )


def _key(path: str, key: str) -> str:
    return f"{path}[{key}]"


class _Checker:
    def __init__(self) -> None:
        self.errors: list[str] = []

    def err(self, path: str, message: str) -> None:
        self.errors.append(f"{path}: {message}")

    def each_property(
        self,
        walk: str,
        props: dict[str, Any],
        path: str,
        check: Callable[[_Checker, str, Any, str], None],
        context: tuple[Any, ...] = (),
    ) -> None:
        """`check(checker, name, prop, property_path)` for every property of the node at `path`; a
        shared map's errors are computed once per (walk, context) and re-rooted at `path` (which
        messages may also name, as completeness's do)."""
        if not is_shared(props):
            for name, prop in props.items():
                check(self, name, prop, _key(f"{path}.properties", name))
            return
        key = (walk, id(props), *context)
        errors = _SHARED_ERRORS.get(key)
        if errors is None:
            fresh = _Checker()
            for name, prop in props.items():
                check(fresh, name, prop, _key(f"{_HERE}.properties", name))
            errors = _SHARED_ERRORS[key] = tuple(fresh.errors)
        self.errors.extend(error.replace(_HERE, path) for error in errors)

    # ---------------------------------------------------- CRD validation (static OpenAPI rules)

    def openapi(self, s: Any, path: str, *, root: bool, in_meta: bool = False, no_defaults: str = "") -> None:
        if not isinstance(s, dict):
            self.err(path, "must be a schema object")
            return
        for key, why in _FORBIDDEN_KEYWORDS.items():
            if key in s:
                self.err(f"{path}.{key}", f"Forbidden: {why}")
        if isinstance(s.get("type"), list):
            self.err(f"{path}.type", "Forbidden: multiple values via an array for Type is not supported")
        elif s.get("type") == "null":
            self.err(f"{path}.type", "Forbidden: type cannot be set to null")
        elif "type" in s and s["type"] not in _TYPES:
            supported = ", ".join(_q(t) for t in sorted(_TYPES))
            self.err(f"{path}.type", f"Unsupported value: {_q(s['type'])}: supported values: {supported}")
        if s.get("uniqueItems") is True:
            self.err(
                f"{path}.uniqueItems",
                "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        if "default" in s and no_defaults:
            self.err(f"{path}.default", f"Forbidden: {no_defaults}")
        additional = s.get("additionalProperties")
        if additional is not None:
            if additional is False:
                self.err(
                    f"{path}.additionalProperties", "Forbidden: additionalProperties cannot be set to false"
                )
            if s.get("properties") and (additional is False or isinstance(additional, dict)):
                self.err(
                    f"{path}.additionalProperties",
                    "Forbidden: additionalProperties and properties are mutual exclusive",
                )
            if isinstance(additional, dict):
                sub = "inside additionalProperties applying to object metadata" if in_meta else no_defaults
                self.openapi(
                    additional, f"{path}.additionalProperties", root=False, in_meta=in_meta, no_defaults=sub
                )
        embedded = bool(s.get("x-kubernetes-embedded-resource", False))

        def property_(checker: _Checker, name: str, prop: Any, here: str) -> None:
            meta = (root or embedded) and name in ("metadata", "apiVersion", "kind")
            sub = f"in top-level {name}" if meta and root else no_defaults
            checker.openapi(prop, here, root=False, in_meta=in_meta or meta, no_defaults=sub)

        self.each_property(
            "openapi", s.get("properties") or {}, path, property_, (root, embedded, in_meta, no_defaults)
        )
        for junctor in ("allOf", "anyOf", "oneOf"):
            for index, sub_schema in enumerate(s.get(junctor) or []):
                self.openapi(
                    sub_schema,
                    f"{path}.{junctor}[{index}]",
                    root=False,
                    in_meta=in_meta,
                    no_defaults=no_defaults,
                )
        if "not" in s:
            self.openapi(s["not"], f"{path}.not", root=False, in_meta=in_meta, no_defaults=no_defaults)
        items = s.get("items")
        if isinstance(items, list):
            self.err(f"{path}.items", "Forbidden: items must be a schema object and not an array")
        elif items is not None:
            self.openapi(items, f"{path}.items", root=False, in_meta=in_meta, no_defaults=no_defaults)
        self.extensions(s, path)
        self.cel(s, path, root=root)

    def extensions(self, s: dict[str, Any], path: str) -> None:
        if s.get("x-kubernetes-preserve-unknown-fields") is False:
            self.err(
                f"{path}.x-kubernetes-preserve-unknown-fields",
                "Invalid value: false: must be true or undefined",
            )
        map_type = s.get("x-kubernetes-map-type")
        if map_type is not None:
            if s.get("type") != "object":
                self.err(f"{path}.type", "must be object if x-kubernetes-map-type is specified")
            if map_type not in ("atomic", "granular"):
                self.err(
                    f"{path}.x-kubernetes-map-type",
                    f'Unsupported value: "{map_type}": supported values: "atomic", "granular"',
                )
        list_type = s.get("x-kubernetes-list-type")
        if list_type is not None and s.get("type") != "array":
            self.err(f"{path}.type", "must be array if x-kubernetes-list-type is specified")
        elif list_type == "set" and isinstance(s.get("items"), dict):
            item = s["items"]
            if item.get("type") == "array" and item.get("x-kubernetes-list-type", "atomic") != "atomic":
                self.err(
                    f"{path}.items.x-kubernetes-list-type",
                    "must be atomic as item of a list with x-kubernetes-list-type=set",
                )
            if item.get("type") == "object" and item.get("x-kubernetes-map-type") != "atomic":
                self.err(
                    f"{path}.items.x-kubernetes-map-type",
                    "must be atomic as item of a list with x-kubernetes-list-type=set",
                )
        if list_type is not None and list_type not in ("atomic", "set", "map"):
            self.err(
                f"{path}.x-kubernetes-list-type",
                f'Unsupported value: "{list_type}": supported values: "atomic", "map", "set"',
            )
        keys = s.get("x-kubernetes-list-map-keys") or []
        if keys and list_type != "map":
            self.err(
                f"{path}.x-kubernetes-list-type", "must be map if x-kubernetes-list-map-keys is non-empty"
            )
        if list_type == "map":
            item = s.get("items")
            if not keys:
                self.err(
                    f"{path}.x-kubernetes-list-map-keys",
                    "Required value: must not be empty if x-kubernetes-list-type is map",
                )
            if not isinstance(item, dict):
                self.err(
                    f"{path}.items", "Required value: must have a schema if x-kubernetes-list-type is map"
                )
            elif item.get("type") != "object":
                self.err(
                    f"{path}.items.type", "must be object if parent array's x-kubernetes-list-type is map"
                )
            else:
                props = item.get("properties") or {}
                required = set(item.get("required") or [])
                if len(set(keys)) != len(keys):
                    self.err(f"{path}.x-kubernetes-list-map-keys", "must not contain duplicate entries")
                for k in keys:
                    if k not in props:
                        self.err(
                            f"{path}.x-kubernetes-list-map-keys",
                            "entries must all be names of item properties",
                        )
                        continue
                    if props[k].get("type") in ("array", "object"):
                        self.err(
                            _key(f"{path}.items.properties", k) + ".type",
                            "must be a scalar type if parent array's x-kubernetes-list-type is map",
                        )
                    if k not in required and "default" not in props[k]:
                        self.err(
                            _key(f"{path}.items.properties", k),
                            "Required value: this property is in x-kubernetes-list-map-keys, so it must "
                            "have a default or be a required property",
                        )

    def cel(self, s: dict[str, Any], path: str, *, root: bool) -> None:
        for index, rule in enumerate(s.get("x-kubernetes-validations") or []):
            here = f"{path}.x-kubernetes-validations[{index}]"
            text, message = str(rule.get("rule", "")).strip(), rule.get("message")
            shape_ok = True
            if not text:
                self.err(f"{here}.rule", "Required value: rule is not specified")
                shape_ok = False
            elif message is not None and not str(message).strip():
                self.err(f"{here}.message", "message must be non-empty if specified")
            elif message and "\n" in str(message).strip():
                self.err(f"{here}.message", "message must not contain line breaks")
            elif "\n" in text and not message:
                self.err(
                    f"{here}.message",
                    "Required value: message must be specified if rule contains line breaks",
                )
            if "messageExpression" in rule and not str(rule["messageExpression"]).strip():
                self.err(
                    f"{here}.messageExpression",
                    "Required value: messageExpression must be non-empty if specified",
                )
            if "reason" in rule and rule["reason"] not in _REASONS:
                self.err(f"{here}.reason", f"Unsupported value: {_q(rule['reason'])}")
            if "fieldPath" in rule and ("\n" in str(rule["fieldPath"]) or not str(rule["fieldPath"]).strip()):
                self.err(f"{here}.fieldPath", "fieldPath must be a valid path")
            if shape_ok:
                self.compile_rule(s, rule, here, root=root)

    def compile_rule(self, s: dict[str, Any], rule: dict[str, Any], here: str, *, root: bool) -> None:
        """Compile the rule and its messageExpression against the node's type, as the server does."""
        from pyscaffold_op.apiextensions import cel

        shown = _go_rule(rule)
        try:
            cel.compile_rule(
                str(rule["rule"]), s, root=root, optional_old_self=bool(rule.get("optionalOldSelf"))
            )
        except cel.CompileError as err:
            self.err(f"{here}.rule", f"Invalid value: {shown}: {err}")
        expression = rule.get("messageExpression")
        if isinstance(expression, str) and expression.strip():
            try:
                cel.compile_message_expression(expression, s, root=root)
            except cel.CompileError as err:
                self.err(f"{here}.messageExpression", f"Invalid value: {shown}: {err}")

    # ---------------------------------------------------- structural schema (ValidateStructural)

    def structural(self, s: dict[str, Any], level: str, path: str) -> None:
        if not isinstance(s, dict):
            return
        typ = s.get("type", "")
        if typ == "array" and "items" not in s:
            self.err(f"{path}.items", "Required value: must be specified")
        if isinstance(s.get("items"), dict):
            self.structural(s["items"], _ITEM, f"{path}.items")
        self.each_property(
            "structural", s.get("properties") or {}, path, lambda c, _n, p, at: c.structural(p, _FIELD, at)
        )
        additional = s.get("additionalProperties")
        if additional is not None:
            if level == _ROOT:
                self.err(f"{path}.additionalProperties", "Forbidden: must not be used at the root")
            if isinstance(additional, dict):
                self.structural(additional, _FIELD, f"{path}.additionalProperties")
        int_or_string = s.get("x-kubernetes-int-or-string", False)
        preserve = s.get("x-kubernetes-preserve-unknown-fields", False)
        embedded = s.get("x-kubernetes-embedded-resource", False)
        if int_or_string and preserve:
            self.err(
                f"{path}.x-kubernetes-preserve-unknown-fields",
                "must be false if x-kubernetes-int-or-string is true",
            )
        if int_or_string and embedded:
            self.err(
                f"{path}.x-kubernetes-embedded-resource",
                "must be false if x-kubernetes-int-or-string is true",
            )
        skip_any_of = s.get("anyOf") == _INT_OR_STRING
        all_of = s.get("allOf") or []
        skip_first_all_of = (
            bool(all_of) and isinstance(all_of[0], dict) and all_of[0].get("anyOf") == _INT_OR_STRING
        )
        self.value_validation(s, skip_any_of, skip_first_all_of, path)
        check_meta = level == _ROOT or embedded
        if embedded and typ != "object":
            self.err(f"{path}.type", "must be object if x-kubernetes-embedded-resource is true")
        elif not typ and not int_or_string and not preserve:
            what = {
                _ROOT: "at the root",
                _ITEM: "for specified array items",
                _FIELD: "for specified object fields",
            }
            self.err(f"{path}.type", f"Required value: must not be empty {what[level]}")
        if embedded and "additionalProperties" in s:
            self.err(
                f"{path}.additionalProperties",
                "Forbidden: must not be used if x-kubernetes-embedded-resource is set",
            )
        if level == _ROOT and typ and typ != "object":
            self.err(f"{path}.type", f'Invalid value: "{typ}": must be object at the root')
        props = s.get("properties") or {}
        for name in ("kind", "apiVersion"):
            if name in props and check_meta and props[name].get("type") != "string":
                self.err(_key(f"{path}.properties", name) + ".type", "must be string")
        if "metadata" in props:
            self.metadata(props["metadata"], check_meta, level, _key(f"{path}.properties", "metadata"))
        if embedded and not preserve and not props:
            self.err(
                f"{path}.properties",
                "Required value: must not be empty if x-kubernetes-embedded-resource is "
                "true without x-kubernetes-preserve-unknown-fields",
            )

    def metadata(self, s: dict[str, Any], check_meta: bool, level: str, path: str) -> None:
        if check_meta and s.get("type") != "object":
            self.err(f"{path}.type", "must be object")
        if level == _ROOT:
            rest = {k: v for k, v in s.items() if k not in ("type", "default")}
            props = rest.get("properties") or {}
            if props and set(props) <= {"name", "generateName"}:
                rest.pop("properties")
            if rest:
                self.err(
                    path,
                    "Forbidden: must not specify anything other than name and generateName, but "
                    "metadata is implicitly specified",
                )

    def value_validation(
        self, s: dict[str, Any], skip_any_of: bool, skip_first_all_of: bool, path: str
    ) -> None:
        if not skip_any_of:
            for index, sub in enumerate(s.get("anyOf") or []):
                self.nested(sub, False, f"{path}.anyOf[{index}]")
        for index, sub in enumerate(s.get("allOf") or []):
            self.nested(sub, skip_first_all_of and index == 0, f"{path}.allOf[{index}]")
        for index, sub in enumerate(s.get("oneOf") or []):
            self.nested(sub, False, f"{path}.oneOf[{index}]")
        if isinstance(s.get("not"), dict):
            self.nested(s["not"], False, f"{path}.not")
        if "pattern" in s:
            from pyscaffold_op.apiextensions.patterns import pattern_problem

            problem = pattern_problem(s["pattern"])
            if problem:
                shown = json.dumps(s["pattern"])
                self.err(
                    f"{path}.pattern",
                    f"Invalid value: {shown}: must be a valid regular expression, but isn't: {problem}",
                )

    def nested(self, v: dict[str, Any], skip_any_of: bool, path: str) -> None:
        if not isinstance(v, dict):
            return
        self.value_validation(v, skip_any_of, False, path)
        if isinstance(v.get("items"), dict):
            self.nested(v["items"], False, f"{path}.items")
        self.each_property(
            "nested", v.get("properties") or {}, path, lambda c, _n, p, at: c.nested(p, False, at)
        )
        for key, why in _NESTED_FORBIDDEN.items():
            if key in v and v[key] not in (False, None, "", []):
                self.err(f"{path}.{key}", f"Forbidden: {why}")
        if "metadata" in (v.get("properties") or {}):
            self.err(
                _key(f"{path}.properties", "metadata"), "Forbidden: must not be specified in a nested context"
            )

    def completeness(self, node: Any, here: str) -> None:
        """Every property or items named inside a junctor must also be specified outside it
        (validateStructuralCompleteness): reported at the structural path that is missing."""
        if not isinstance(node, dict):
            return
        for junctor in ("allOf", "anyOf", "oneOf"):
            for index, sub in enumerate(node.get(junctor) or []):
                self.complete_against(node, here, sub, f"{here}.{junctor}[{index}]")
        if isinstance(node.get("not"), dict):
            self.complete_against(node, here, node["not"], f"{here}.not")
        if isinstance(node.get("items"), dict):
            self.completeness(node["items"], f"{here}.items")
        self.each_property(
            "completeness", node.get("properties") or {}, here, lambda c, _n, p, at: c.completeness(p, at)
        )
        if isinstance(node.get("additionalProperties"), dict):
            self.completeness(node["additionalProperties"], f"{here}.additionalProperties")

    def complete_against(
        self, structural: dict[str, Any] | None, struct_path: str, nested: Any, nested_path: str
    ) -> None:
        """What junctor subschema `nested` names that `structural` lacks."""
        if not isinstance(nested, dict):
            return
        structural = structural or {}
        if isinstance(nested.get("items"), dict):
            if not isinstance(structural.get("items"), dict):
                self.err(
                    f"{struct_path}.items",
                    f"Required value: because it is defined in {nested_path}.items",
                )
            else:
                self.complete_against(
                    structural["items"], f"{struct_path}.items", nested["items"], f"{nested_path}.items"
                )
        for name, prop in (nested.get("properties") or {}).items():
            known = (structural.get("properties") or {}).get(name)
            here = _key(f"{struct_path}.properties", name)
            there = _key(f"{nested_path}.properties", name)
            if known is None:
                self.err(here, f"Required value: because it is defined in {there}")
            else:
                self.complete_against(known, here, prop, there)
        for junctor in ("allOf", "anyOf", "oneOf"):
            for index, sub in enumerate(nested.get(junctor) or []):
                self.complete_against(structural, struct_path, sub, f"{nested_path}.{junctor}[{index}]")
        if isinstance(nested.get("not"), dict):
            self.complete_against(structural, struct_path, nested["not"], f"{nested_path}.not")

    # ---------------------------------------------------- defaults (valid and pruned)

    def defaults(self, node: Any, path: str) -> None:
        if not isinstance(node, dict):
            return
        if "default" in node:
            from pyscaffold_op.apiextensions.pruning import prune
            from pyscaffold_op.apiextensions.validation import validate

            value = node["default"]
            if value is None and not node.get("nullable"):
                self.err(f"{path}.default", "Invalid value: null: must not be null for non-nullable field")
            else:
                pruned_copy = copy.deepcopy(value)
                dropped = prune(
                    pruned_copy, node, is_resource_root=node.get("x-kubernetes-embedded-resource", False)
                )
                if dropped:
                    self.err(
                        f"{path}.default",
                        f"Invalid value: must not have unknown fields ({', '.join(dropped)})",
                    )
                for problem in validate(value, node):
                    inner = "" if problem["field"] == "<root>" else f".{problem['field']}"
                    self.err(f"{path}.default{inner}", problem["message"])
        for key in ("items", "additionalProperties", "not"):
            if isinstance(node.get(key), dict):
                self.defaults(node[key], f"{path}.{key}")
        self.each_property(
            "defaults", node.get("properties") or {}, path, lambda c, _n, prop, here: c.defaults(prop, here)
        )


def check_schema(schema: dict[str, Any], path: str = "openAPIV3Schema", *, advice: bool = True) -> list[str]:
    """Every rule the API server applies to a version's openAPIV3Schema; [] when it would accept it.
    A rule over the cost budget is reported in the server's words, followed (`advice`) by pyop's
    `[pyop: rule '...'; bound it with maxItems on .spec.items, ...]`."""
    checker = _Checker()
    checker.openapi(schema, path, root=True)
    checker.structural(schema, _ROOT, path)
    checker.completeness(schema, path)
    if not checker.errors:  # defaults are only meaningful on an otherwise valid schema
        checker.defaults(schema, path)
    if not checker.errors or all(_is_cel_error(e) for e in checker.errors):
        # the server estimates rule costs once the schema is structural and its defaults valid
        from pyscaffold_op.apiextensions.celcost import schema_cost_errors

        for found in schema_cost_errors(schema, path):
            message = found.message + (f" [pyop: {found.advice}]" if advice and found.advice else "")
            checker.err(found.field, message)
    return sorted(set(checker.errors))


def _is_cel_error(error: str) -> bool:
    """A rule or messageExpression that does not compile (the server still estimates the others)."""
    field = error.partition(": ")[0]
    return field.endswith((".rule", ".messageExpression"))


def check_crd(crd: dict[str, Any], *, advice: bool = True) -> list[str]:
    """The CRD-level rules (versions, storage, names) and every version's schema rules; `advice` as
    for `check_schema` (the emulator's 422 leaves it out, as the server does)."""
    errors: list[str] = []
    spec = crd.get("spec") or {}
    versions = spec.get("versions") or []
    if not versions:
        errors.append(
            "spec.versions: Required value: must have exactly one version marked as storage version"
        )
    if sum(1 for v in versions if v.get("storage")) != 1:
        errors.append("spec.versions: Invalid value: must have exactly one version marked as storage version")
    names = [v.get("name") for v in versions]
    if len(set(names)) != len(names):
        errors.append("spec.versions: Invalid value: must contain unique version names")
    plural, group = (spec.get("names") or {}).get("plural", ""), spec.get("group", "")
    name = (crd.get("metadata") or {}).get("name", "")
    if group and plural and name != f"{plural}.{group}":
        errors.append(f'metadata.name: Invalid value: "{name}": must be spec.names.plural+"."+spec.group')
    if not group:
        errors.append("spec.group: Required value")
    elif "." not in group:
        errors.append(f'spec.group: Invalid value: "{group}": should be a domain with at least one dot')
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        shown = json.dumps(spec.get("scope", ""))
        errors.append(f'spec.scope: Unsupported value: {shown}: supported values: "Cluster", "Namespaced"')
    errors += _check_names(spec.get("names") or {})
    for index, version in enumerate(versions):
        errors += _check_version(version, f"spec.versions[{index}]")
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        path = f"spec.versions[{index}].schema.openAPIV3Schema"
        if schema is None:
            errors.append(f"{path}: Required value: schemas are required")
            continue
        errors += check_schema(schema, path, advice=advice)
    return errors


_COLUMN_TYPES = {"integer", "number", "string", "boolean", "date"}
_COLUMN_FORMATS = {"int32", "int64", "float", "double", "byte", "date", "date-time", "password"}


def _check_names(names: dict[str, Any]) -> list[str]:
    """spec.names as ValidateCustomResourceDefinitionNames checks them."""
    errors: list[str] = []

    def label(field: str, value: str) -> None:
        errors.extend(f'{field}: Invalid value: "{value}": {why}' for why in is_dns1035_label(value))

    for key in ("plural", "singular"):
        value = names.get(key, "")
        if not value and key == "plural":
            errors.append("spec.names.plural: Required value")
        elif value:
            label(f"spec.names.{key}", value)
    for index, short in enumerate(names.get("shortNames") or []):
        label(f"spec.names.shortNames[{index}]", short)
    for index, category in enumerate(names.get("categories") or []):
        label(f"spec.names.categories[{index}]", category)
    kind, list_kind = names.get("kind", ""), names.get("listKind", "")
    if not kind:
        errors.append("spec.names.kind: Required value")
    if kind and kind == list_kind:
        errors.append(
            f"spec.names.listKind: Invalid value: {_q(list_kind)}: kind and listKind may not be the same"
        )
    return errors


def _check_version(version: dict[str, Any], path: str) -> list[str]:
    """Printer columns and the scale subresource of one version."""
    errors = []
    seen = set()
    for index, column in enumerate(version.get("additionalPrinterColumns") or []):
        here = f"{path}.additionalPrinterColumns[{index}]"
        if column.get("name") in seen:
            errors.append(f"{here}.name: Duplicate value: {_q(column.get('name'))}")
        seen.add(column.get("name"))
        if column.get("type") not in _COLUMN_TYPES:
            errors.append(f"{here}.type: Unsupported value: {_q(column.get('type'))}")
        if "format" in column and column["format"] not in _COLUMN_FORMATS:
            errors.append(f"{here}.format: Unsupported value: {_q(column['format'])}")
        if column.get("priority", 0) < 0:
            errors.append(
                f"{here}.priority: Invalid value: {column['priority']}: must be greater than or equal to 0"
            )
        if not str(column.get("jsonPath", "")).startswith("."):
            errors.append(
                f"{here}.jsonPath: Invalid value: {_q(column.get('jsonPath'))}: must be a simple json path"
            )
    scale = (version.get("subresources") or {}).get("scale")
    if scale:
        here = f"{path}.subresources.scale"
        if not str(scale.get("specReplicasPath", "")).startswith(".spec."):
            errors.append(f"{here}.specReplicasPath: Invalid value: should be a json path under .spec")
        if not str(scale.get("statusReplicasPath", "")).startswith(".status."):
            errors.append(f"{here}.statusReplicasPath: Invalid value: should be a json path under .status")
        selector = scale.get("labelSelectorPath")
        if selector is not None and not str(selector).startswith((".spec.", ".status.")):
            errors.append(
                f"{here}.labelSelectorPath: Invalid value: "
                "should be a json path under either .spec or .status"
            )
    return errors


def crd_causes(crd: dict[str, Any]) -> list[Cause]:
    """`check_crd`'s errors as the causes of the API server's 422 answer."""
    out = []
    for error in check_crd(crd, advice=False):
        field, _, message = error.partition(": ")
        out.append(cause(reason_of(message), field, message))
    return out
