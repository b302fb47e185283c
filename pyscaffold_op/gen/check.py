"""Offline checks: the rules apiextensions-apiserver applies to a CRD, and samples against their CRD.

The structural rules are ported from `k8s.io/apiextensions-apiserver/pkg/apiserver/schema`
(`ValidateStructural`: invariants, value-validation junctors, metadata, completeness) and from the
CRD validation (`ValidateCustomResourceDefinitionOpenAPISchema`: forbidden keywords, uniqueItems,
x-kubernetes-* constraints, CEL rule shape, defaults valid and pruned). Messages name the field path
the way the API server does (`spec.versions[0].schema.openAPIV3Schema.properties[spec].type`).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

from pyscaffold_op.gen.structural import apply_defaults, prune, quick_validate, validate

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


def _key(path: str, key: str) -> str:
    return f"{path}[{key}]"


class _Checker:
    def __init__(self) -> None:
        self.errors: list[str] = []

    def err(self, path: str, message: str) -> None:
        self.errors.append(f"{path}: {message}")

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
        for name, prop in (s.get("properties") or {}).items():
            meta = (root or s.get("x-kubernetes-embedded-resource", False)) and name in (
                "metadata",
                "apiVersion",
                "kind",
            )
            sub = f"in top-level {name}" if meta and root else no_defaults
            self.openapi(
                prop, _key(f"{path}.properties", name), root=False, in_meta=in_meta or meta, no_defaults=sub
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
        self.cel(s, path)

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

    def cel(self, s: dict[str, Any], path: str) -> None:
        for index, rule in enumerate(s.get("x-kubernetes-validations") or []):
            here = f"{path}.x-kubernetes-validations[{index}]"
            text, message = str(rule.get("rule", "")).strip(), rule.get("message")
            if not text:
                self.err(f"{here}.rule", "Required value: rule is not specified")
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
                self.err(f"{here}.reason", f"Unsupported value: {rule['reason']!r}")
            if "fieldPath" in rule and ("\n" in str(rule["fieldPath"]) or not str(rule["fieldPath"]).strip()):
                self.err(f"{here}.fieldPath", "fieldPath must be a valid path")

    # ---------------------------------------------------- structural schema (ValidateStructural)

    def structural(self, s: dict[str, Any], level: str, path: str) -> None:
        if not isinstance(s, dict):
            return
        typ = s.get("type", "")
        if typ == "array" and "items" not in s:
            self.err(f"{path}.items", "Required value: must be specified")
        if isinstance(s.get("items"), dict):
            self.structural(s["items"], _ITEM, f"{path}.items")
        for name, prop in (s.get("properties") or {}).items():
            self.structural(prop, _FIELD, _key(f"{path}.properties", name))
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
            problem = _re2_problem(s["pattern"])
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
        for name, prop in (v.get("properties") or {}).items():
            self.nested(prop, False, _key(f"{path}.properties", name))
        for key, why in _NESTED_FORBIDDEN.items():
            if key in v and v[key] not in (False, None, "", []):
                self.err(f"{path}.{key}", f"Forbidden: {why}")
        if "metadata" in (v.get("properties") or {}):
            self.err(
                _key(f"{path}.properties", "metadata"), "Forbidden: must not be specified in a nested context"
            )

    def completeness(self, s: dict[str, Any], path: str) -> None:
        """Every property or items named inside a junctor must also be specified outside it
        (validateStructuralCompleteness): reported at the structural path that is missing."""

        def walk(
            structural: dict[str, Any] | None, struct_path: str, nested: dict[str, Any], nested_path: str
        ) -> None:
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
                    walk(structural["items"], f"{struct_path}.items", nested["items"], f"{nested_path}.items")
            for name, prop in (nested.get("properties") or {}).items():
                known = (structural.get("properties") or {}).get(name)
                here = _key(f"{struct_path}.properties", name)
                there = _key(f"{nested_path}.properties", name)
                if known is None:
                    self.err(here, f"Required value: because it is defined in {there}")
                else:
                    walk(known, here, prop, there)
            for junctor in ("allOf", "anyOf", "oneOf"):
                for index, sub in enumerate(nested.get(junctor) or []):
                    walk(structural, struct_path, sub, f"{nested_path}.{junctor}[{index}]")
            if isinstance(nested.get("not"), dict):
                walk(structural, struct_path, nested["not"], f"{nested_path}.not")

        def visit(node: dict[str, Any], here: str) -> None:
            if not isinstance(node, dict):
                return
            for junctor in ("allOf", "anyOf", "oneOf"):
                for index, sub in enumerate(node.get(junctor) or []):
                    walk(node, here, sub, f"{here}.{junctor}[{index}]")
            if isinstance(node.get("not"), dict):
                walk(node, here, node["not"], f"{here}.not")
            if isinstance(node.get("items"), dict):
                visit(node["items"], f"{here}.items")
            for name, prop in (node.get("properties") or {}).items():
                visit(prop, _key(f"{here}.properties", name))
            if isinstance(node.get("additionalProperties"), dict):
                visit(node["additionalProperties"], f"{here}.additionalProperties")

        visit(s, path)

    # ---------------------------------------------------- defaults (valid and pruned)

    def defaults(self, node: Any, path: str, root_schema: dict[str, Any]) -> None:
        if not isinstance(node, dict):
            return
        if "default" in node:
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
                for field_path, message in quick_validate(value, node):
                    inner = "" if field_path in ("", "<root>") else f".{field_path}"
                    where = f"{path}.default{inner}"
                    self.err(where, f"Invalid value: {message}")
        for key in ("items", "additionalProperties", "not"):
            if isinstance(node.get(key), dict):
                self.defaults(node[key], f"{path}.{key}", root_schema)
        for name, prop in (node.get("properties") or {}).items():
            self.defaults(prop, _key(f"{path}.properties", name), root_schema)


_RE2_UNSUPPORTED = re.compile(r"\(\?(?:=|!|<=|<!)|\\[1-9]|\(\?P=|\\[gk]<")


def _re2_problem(pattern: str) -> str:
    """Why Go's RE2 (what the API server compiles patterns with) rejects `pattern`, or ""."""
    try:
        re.compile(pattern)
    except re.error as err:
        return str(err)
    found = _RE2_UNSUPPORTED.search(pattern)
    if found:
        return f"RE2 has no lookaround or backreferences ({found.group(0)!r})"
    return ""


def check_schema(schema: dict[str, Any], path: str = "openAPIV3Schema") -> list[str]:
    """Every rule the API server applies to a version's openAPIV3Schema; [] when it would accept it."""
    checker = _Checker()
    checker.openapi(schema, path, root=True)
    checker.structural(schema, _ROOT, path)
    checker.completeness(schema, path)
    if not checker.errors:  # defaults are only meaningful on an otherwise valid schema
        checker.defaults(schema, path, schema)
    return sorted(set(checker.errors))


def check_crd(crd: dict[str, Any]) -> list[str]:
    """The CRD-level rules (versions, storage, names) and every version's schema rules."""
    errors: list[str] = []
    spec = crd.get("spec", {})
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
    plural, group = spec.get("names", {}).get("plural", ""), spec.get("group", "")
    if crd.get("metadata", {}).get("name") != f"{plural}.{group}":
        errors.append(
            f'metadata.name: Invalid value: must be spec.names.plural+"."+spec.group ({plural}.{group})'
        )
    if "." not in group:
        errors.append(f"spec.group: Invalid value: {group!r}: should be a domain with at least one dot")
    errors += _check_names(spec.get("names") or {})
    for index, version in enumerate(versions):
        errors += _check_version(version, f"spec.versions[{index}]")
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        path = f"spec.versions[{index}].schema.openAPIV3Schema"
        if schema is None:
            errors.append(f"{path}: Required value: schemas are required")
            continue
        errors += check_schema(schema, path)
    return errors


_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_COLUMN_TYPES = {"integer", "number", "string", "boolean", "date"}
_COLUMN_FORMATS = {"int32", "int64", "float", "double", "byte", "date", "date-time", "password"}


def _check_names(names: dict[str, Any]) -> list[str]:
    """spec.names as ValidateCustomResourceDefinitionNames checks them."""
    errors = []
    label = "a lowercase RFC 1035 label must consist of lower case alphanumeric characters or '-'"
    for key in ("plural", "singular"):
        value = names.get(key, "")
        if not value and key == "plural":
            errors.append("spec.names.plural: Required value")
        elif value and (not _DNS1035.match(value) or len(value) > 63):
            errors.append(f"spec.names.{key}: Invalid value: {value!r}: {label}")
    for index, short in enumerate(names.get("shortNames") or []):
        if not _DNS1035.match(short):
            errors.append(f"spec.names.shortNames[{index}]: Invalid value: {short!r}: {label}")
    for index, category in enumerate(names.get("categories") or []):
        if not _DNS1035.match(category):
            errors.append(f"spec.names.categories[{index}]: Invalid value: {category!r}: {label}")
    kind, list_kind = names.get("kind", ""), names.get("listKind", "")
    if not kind:
        errors.append("spec.names.kind: Required value")
    if kind and kind == list_kind:
        errors.append(
            f"spec.names.listKind: Invalid value: {list_kind!r}: kind and listKind may not be the same"
        )
    return errors


def _check_version(version: dict[str, Any], path: str) -> list[str]:
    """Printer columns and the scale subresource of one version."""
    errors = []
    seen = set()
    for index, column in enumerate(version.get("additionalPrinterColumns") or []):
        here = f"{path}.additionalPrinterColumns[{index}]"
        if column.get("name") in seen:
            errors.append(f"{here}.name: Duplicate value: {column.get('name')!r}")
        seen.add(column.get("name"))
        if column.get("type") not in _COLUMN_TYPES:
            errors.append(f"{here}.type: Unsupported value: {column.get('type')!r}")
        if "format" in column and column["format"] not in _COLUMN_FORMATS:
            errors.append(f"{here}.format: Unsupported value: {column['format']!r}")
        if column.get("priority", 0) < 0:
            errors.append(
                f"{here}.priority: Invalid value: {column['priority']}: must be greater than or equal to 0"
            )
        if not str(column.get("jsonPath", "")).startswith("."):
            errors.append(
                f"{here}.jsonPath: Invalid value: {column.get('jsonPath')!r}: must be a simple json path"
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


def check_samples(samples_dir: Path, crds: list[dict[str, Any]]) -> list[str]:
    """Validate every `*.yaml` document of kinds we define, after pruning; pruned fields are problems."""
    import yaml

    by_gvk: dict[tuple[str, str], dict[str, Any]] = {}
    for crd in crds:
        spec = crd["spec"]
        for version in spec["versions"]:
            api_version = f"{spec['group']}/{version['name']}"
            by_gvk[(api_version, spec["names"]["kind"])] = version["schema"]["openAPIV3Schema"]
    groups = {crd["spec"]["group"] for crd in crds}
    problems: list[str] = []
    for path in sorted(samples_dir.glob("*.yaml")) if samples_dir.is_dir() else []:
        try:
            docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if isinstance(d, dict)]
        except yaml.YAMLError as err:
            problems.append(f"{path.name}: not valid YAML: {str(err).splitlines()[0]}")
            continue
        for doc in docs:
            schema = by_gvk.get((doc.get("apiVersion"), doc.get("kind")))
            if schema is None:
                group = str(doc.get("apiVersion", "")).rpartition("/")[0]
                if group in groups:
                    problems.append(
                        f"{path.name}: no CRD serves {doc.get('kind')} in {doc.get('apiVersion')}"
                    )
                continue  # kustomization.yaml, or a kind of another API
            name = (doc.get("metadata") or {}).get("name", "?")
            obj = copy.deepcopy(doc)
            pruned = prune(obj, schema)
            apply_defaults(obj, schema)  # the server's order: prune, default, validate
            for field_path in pruned:
                problems.append(
                    f"{path.name} ({doc['kind']} {name}): unknown field {field_path!r} would be "
                    "silently dropped by the API server"
                )
            for field_path, message in validate(obj, schema):
                problems.append(f"{path.name} ({doc['kind']} {name}): {field_path}: {message}")
    return problems
