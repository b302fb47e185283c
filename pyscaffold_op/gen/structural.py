"""What the API server does to a custom resource with its structural schema: prune, default, validate.

Shared by the generator's offline checks and the API server emulator. `schema` is a version's
`openAPIV3Schema`; objects are plain JSON-like dicts. Only stdlib at import time; the OpenAPI
validator is imported on first use.

    pruned = prune(obj, schema)            # drops unknown fields in place; returns their paths
    apply_defaults(obj, schema)            # fills defaults in place (and drops non-nullable nulls)
    errors = validate(obj, schema)         # [(field_path, message)], [] when valid
"""

from __future__ import annotations

import copy
import re
from typing import Any

__all__ = ["apply_defaults", "prune", "quick_validate", "validate"]

_RESOURCE_ROOT = ("apiVersion", "kind", "metadata")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def prune(obj: Any, schema: dict[str, Any], *, is_resource_root: bool = True) -> list[str]:
    """Remove fields the schema does not specify, like the API server's structural pruning.

    apiVersion, kind and metadata of the root object (and of embedded resources) are kept. Returns the
    paths of the removed fields (`spec.foo`, `spec.items[0].bar`).
    """
    removed: list[str] = []
    _prune(obj, schema, is_resource_root, "", removed)
    return removed


def _prune(
    value: Any, schema: dict[str, Any] | None, resource_root: bool, path: str, removed: list[str]
) -> None:
    if schema is None:
        return
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        preserve = schema.get("x-kubernetes-preserve-unknown-fields", False)
        for key in list(value):
            if resource_root and key in _RESOURCE_ROOT:
                continue  # the server handles TypeMeta/ObjectMeta itself
            child = props.get(key)
            if child is None and isinstance(additional, dict):
                child = additional
            if child is not None:
                embedded = child.get("x-kubernetes-embedded-resource", False)
                _prune(value[key], child, embedded, _join(path, key), removed)
            elif not (preserve or additional is True):
                del value[key]
                removed.append(_join(path, key))
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            embedded = items.get("x-kubernetes-embedded-resource", False)
            for index, item in enumerate(value):
                _prune(item, items, embedded, f"{path}[{index}]", removed)


def apply_defaults(obj: Any, schema: dict[str, Any]) -> Any:
    """Fill `default`s of missing fields, top-down, like the API server's structural defaulting.

    A null in a non-nullable field is replaced by its default, or removed when there is none
    (the server's PruneNonNullableNullsWithoutDefaults). Returns `obj`, changed in place.
    """
    _default(obj, schema)
    return obj


def _default(value: Any, schema: dict[str, Any] | None) -> None:
    if schema is None:
        return
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key, child in props.items():
            if key not in value:
                if "default" in child:
                    value[key] = copy.deepcopy(child["default"])
            elif value[key] is None and not child.get("nullable"):
                if "default" in child:
                    value[key] = copy.deepcopy(child["default"])
                else:
                    del value[key]
        for key in list(value):
            child = props.get(key)
            if child is None and isinstance(additional, dict):
                child = additional
                if value[key] is None and not child.get("nullable"):
                    if "default" in child:
                        value[key] = copy.deepcopy(child["default"])
                    else:
                        del value[key]
                        continue
            _default(value[key], child)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for item in value:
                _default(item, items)


# ---------------------------------------------------------------- validation

_VALIDATORS: dict[int, tuple[dict[str, Any], Any]] = {}


def _validator(schema: dict[str, Any]) -> Any:
    cached = _VALIDATORS.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    from openapi_schema_validator import OAS30Validator, oas30_format_checker

    validator = OAS30Validator(schema, format_checker=oas30_format_checker)
    if len(_VALIDATORS) > 256:
        _VALIDATORS.clear()
    _VALIDATORS[id(schema)] = (schema, validator)
    return validator


def _path(parts: Any) -> str:
    out = ""
    for part in parts:
        out = f"{out}[{part}]" if isinstance(part, int) else _join(out, str(part))
    return out


def validate(obj: Any, schema: dict[str, Any]) -> list[tuple[str, str]]:
    """Errors of `obj` against `schema` as (field path, message), sorted; [] when valid.

    OpenAPI v3.0 keywords via openapi-schema-validator, plus the `x-kubernetes-*` rules the API server
    adds: list-type set/map uniqueness and embedded resources' apiVersion/kind. CEL rules
    (`x-kubernetes-validations`) are not evaluated.
    """
    errors: list[tuple[str, str]] = []
    for error in _validator(schema).iter_errors(obj):
        path = _path(error.absolute_path)
        if error.validator == "required":
            missing = str(error.message).split("'")[1] if "'" in error.message else error.message
            errors.append((_join(path, missing), "Required value"))
        elif error.validator == "enum":
            shown = ", ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in error.validator_value)
            errors.append((path, f"Unsupported value: {error.instance!r}: supported values: {shown}"))
        else:
            errors.append((path, error.message))
    _extensions(obj, schema, "", errors)
    return sorted(set(errors))


def _extensions(value: Any, schema: dict[str, Any] | None, path: str, errors: list[tuple[str, str]]) -> None:
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        if schema.get("x-kubernetes-embedded-resource"):
            for key in ("apiVersion", "kind"):
                if not isinstance(value.get(key), str) or not value.get(key):
                    errors.append((_join(path, key), "Required value: must not be empty"))
        props = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key, child_value in value.items():
            child = props.get(key, additional if isinstance(additional, dict) else None)
            _extensions(child_value, child, _join(path, key), errors)
    elif isinstance(value, list):
        list_type = schema.get("x-kubernetes-list-type")
        if list_type == "set":
            seen: list[Any] = []
            for index, item in enumerate(value):
                if item in seen:
                    errors.append((f"{path}[{index}]", f"Duplicate value: {item!r}"))
                seen.append(item)
        elif list_type == "map":
            keys = schema.get("x-kubernetes-list-map-keys") or []
            seen_keys: list[tuple[Any, ...]] = []
            for index, item in enumerate(value):
                if not isinstance(item, dict):
                    continue
                item_key = tuple(item.get(k) for k in keys)
                if item_key in seen_keys:
                    shown = ", ".join(f"{k}={v!r}" for k, v in zip(keys, item_key, strict=True))
                    errors.append((f"{path}[{index}]", f"Duplicate value: map[{shown}]"))
                seen_keys.append(item_key)
        for index, item in enumerate(value):
            _extensions(item, schema.get("items"), f"{path}[{index}]", errors)


# ---------------------------------------------------------------- quick validation (no imports)

_JSON_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "integer": int,
    "number": (int, float),
}
_DATE_TIME = re.compile(r"^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$")
_DATE = re.compile(r"^\d{4}-\d\d-\d\d$")


def quick_validate(value: Any, schema: dict[str, Any], path: str = "") -> list[tuple[str, str]]:
    """The OpenAPI v3.0 keywords a structural schema uses, checked without third-party imports.

    Why a second validator: openapi-schema-validator costs ~0.2 s to import, too much for checking the
    defaults of every `make manifests`. `validate()` (the reference) is used for samples and tests.
    """
    errors: list[tuple[str, str]] = []
    _quick(value, schema, path, errors)
    return errors


def _type_ok(value: Any, type_: str) -> bool:
    if isinstance(value, bool) and type_ in ("integer", "number"):
        return False
    if type_ == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES.get(type_, object))


def _quick(value: Any, s: dict[str, Any], path: str, errors: list[tuple[str, str]]) -> None:
    where = path or "<root>"
    if value is None:
        if not s.get("nullable") and (s.get("type") or s.get("x-kubernetes-int-or-string")):
            errors.append((where, "must not be null"))
        return
    type_ = s.get("type")
    if type_ and not _type_ok(value, type_):
        errors.append((where, f"must be of type {type_}"))
        return
    if s.get("x-kubernetes-int-or-string") and not (_type_ok(value, "integer") or isinstance(value, str)):
        errors.append((where, "must be an integer or a string"))
        return
    if "enum" in s and value not in s["enum"]:
        errors.append((where, f"Unsupported value: {value!r}"))
    if isinstance(value, int | float) and not isinstance(value, bool):
        _quick_number(value, s, where, errors)
    if isinstance(value, str):
        if "minLength" in s and len(value) < s["minLength"]:
            errors.append((where, f"should be at least {s['minLength']} chars long"))
        if "maxLength" in s and len(value) > s["maxLength"]:
            errors.append((where, f"may not be longer than {s['maxLength']}"))
        if "pattern" in s and not re.search(s["pattern"], value):
            errors.append((where, f"should match '{s['pattern']}'"))
        fmt = s.get("format")
        if (fmt in ("date-time", "datetime") and not _DATE_TIME.match(value)) or (
            fmt == "date" and not _DATE.match(value)
        ):
            errors.append((where, f"must be of format {fmt}"))
    if isinstance(value, list):
        if "minItems" in s and len(value) < s["minItems"]:
            errors.append((where, f"should have at least {s['minItems']} items"))
        if "maxItems" in s and len(value) > s["maxItems"]:
            errors.append((where, f"should have at most {s['maxItems']} items"))
        if isinstance(s.get("items"), dict):
            for index, item in enumerate(value):
                _quick(item, s["items"], f"{path}[{index}]", errors)
    if isinstance(value, dict):
        if "minProperties" in s and len(value) < s["minProperties"]:
            errors.append((where, f"should have at least {s['minProperties']} properties"))
        if "maxProperties" in s and len(value) > s["maxProperties"]:
            errors.append((where, f"should have at most {s['maxProperties']} properties"))
        for key in s.get("required") or []:
            if key not in value:
                errors.append((_join(path, key), "Required value"))
        props = s.get("properties") or {}
        additional = s.get("additionalProperties")
        for key, item in value.items():
            child = props.get(key, additional if isinstance(additional, dict) else None)
            if child is not None:
                _quick(item, child, _join(path, key), errors)
    for sub in s.get("allOf") or []:
        _quick(value, sub, path, errors)
    if s.get("anyOf") and not any(not quick_validate(value, sub, path) for sub in s["anyOf"]):
        errors.append((where, "must match at least one schema in anyOf"))
    if s.get("oneOf") and sum(1 for sub in s["oneOf"] if not quick_validate(value, sub, path)) != 1:
        errors.append((where, "must match exactly one schema in oneOf"))
    if isinstance(s.get("not"), dict) and not quick_validate(value, s["not"], path):
        errors.append((where, "must not match the schema in not"))


def _quick_number(value: float, s: dict[str, Any], where: str, errors: list[tuple[str, str]]) -> None:
    if "minimum" in s:
        low = s["minimum"]
        if value < low or (s.get("exclusiveMinimum") is True and value == low):
            errors.append(
                (where, f"should be greater than {'' if s.get('exclusiveMinimum') else 'or equal to '}{low}")
            )
    if "maximum" in s:
        high = s["maximum"]
        if value > high or (s.get("exclusiveMaximum") is True and value == high):
            errors.append(
                (where, f"should be less than {'' if s.get('exclusiveMaximum') else 'or equal to '}{high}")
            )
    if s.get("multipleOf") and (value / s["multipleOf"]) % 1 != 0:
        errors.append((where, f"should be a multiple of {s['multipleOf']}"))
