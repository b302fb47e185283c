"""The interpreters the compiled schema (`apiextensions.compiled`) replaced, kept only as the oracle of
its differential test: they walk the schema dict per value, as pyop did up to stop 21.

Copies of `validation.py`, `pruning.py` and `defaulting.py` as they were, with the causes the server gives
changed in both (issue 25: type and format errors are `FieldValueTypeInvalid`); not used by pyop.
"""

from __future__ import annotations

import base64
import copy
import ipaddress
import re
import uuid
from datetime import datetime
from typing import Any

from pyscaffold_op.apiextensions.patterns import search
from pyscaffold_op.apimachinery.fielderrors import Cause, cause
from pyscaffold_op.apimachinery.objectmeta import OBJECT_META_FIELDS

Schema = dict[str, Any]
# re.ASCII: Go's \d is [0-9]; Python's also matches other scripts' digits
_DATE_TIME = re.compile(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)", re.ASCII)
_DATE = re.compile(r"\d{4}-\d\d-\d\d", re.ASCII)  # strptime's %Y also takes other scripts' digits
_RESOURCE_ROOT = ("apiVersion", "kind", "metadata")


TYPE_NAMES = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
}


def _fmt(v: Any) -> str:
    if isinstance(v, str):
        return '"' + v.replace('"', '\\"') + '"'
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, dict | list):
        return '"' + TYPE_NAMES[type(v)] + '"'
    return str(v)


def _type_ok(value: Any, typ: str, schema: Schema) -> bool:
    if schema.get("x-kubernetes-int-or-string"):
        return isinstance(value, str | int) and not isinstance(value, bool)
    if typ == "object":
        return isinstance(value, dict)
    if typ == "array":
        return isinstance(value, list)
    if typ == "string":
        return isinstance(value, str)
    if typ == "boolean":
        return isinstance(value, bool)
    if typ == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if typ == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return True


def _format_ok(value: Any, fmt: str) -> bool:
    if not isinstance(value, str):
        return True
    try:
        if fmt in ("date-time", "datetime"):
            return (
                bool(_DATE_TIME.fullmatch(value))
                and datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00")) is not None
            )
        if fmt == "date":
            return bool(_DATE.fullmatch(value)) and datetime.strptime(value, "%Y-%m-%d") is not None
        if fmt == "uuid":
            return uuid.UUID(value) is not None
        if fmt == "ipv4":
            return ipaddress.IPv4Address(value) is not None
        if fmt == "ipv6":
            return ipaddress.IPv6Address(value) is not None
        if fmt == "cidr":
            return ipaddress.ip_network(value, strict=False) is not None
        if fmt == "byte":
            return base64.b64decode(value, validate=True) is not None
    except ValueError:
        return False
    return True


def validate(value: Any, schema: Schema | None, path: str = "") -> list[Cause]:
    """Causes (reason, message, field) for every violation; empty when valid."""
    errs: list[Cause] = []
    if schema is not None:
        _validate(value, schema, path, errs)
    return errs


def _validate(value: Any, s: Schema, path: str, errs: list[Cause]) -> None:
    field = path or "<root>"
    typ = s.get("type") or ("integer,string" if s.get("x-kubernetes-int-or-string") else "")
    if value is None and (s.get("nullable") or not typ):
        return
    if typ and not _type_ok(value, typ, s):
        errs.append(
            cause(
                "FieldValueTypeInvalid",
                field,
                f'Invalid value: "{TYPE_NAMES.get(type(value), "unknown")}": {field} in body must '
                f'be of type {typ}: "{TYPE_NAMES.get(type(value), "unknown")}"',
            )
        )
        if typ == "integer" and isinstance(value, float) and not s.get("format"):
            checked = f"Checked value must be of type integer (default format) in {field}"
            errs.append(cause("FieldValueInvalid", "<nil>", f'Invalid value: "": {checked}'))
        return
    if "enum" in s and value not in s["enum"]:
        supported = ", ".join(_fmt(e) for e in s["enum"])
        errs.append(
            cause(
                "FieldValueNotSupported",
                field,
                f"Unsupported value: {_fmt(value)}: supported values: {supported}",
            )
        )
    if isinstance(value, int | float) and not isinstance(value, bool):
        _numeric(value, s, field, errs)
    if isinstance(value, str):
        if "maxLength" in s and len(value) > s["maxLength"]:
            errs.append(
                cause("FieldValueTooLong", field, f"Too long: may not be more than {s['maxLength']} bytes")
            )
        if "minLength" in s and len(value) < s["minLength"]:
            errs.append(
                cause(
                    "FieldValueInvalid",
                    field,
                    f"Invalid value: {_fmt(value)}: {field} in body should "
                    f"be at least {s['minLength']} chars long",
                )
            )
        if "pattern" in s and not search(s["pattern"], value):
            errs.append(
                cause(
                    "FieldValueInvalid",
                    field,
                    f"Invalid value: {_fmt(value)}: {field} in body should match '{s['pattern']}'",
                )
            )
        fmt = s.get("format")
        if fmt and not _format_ok(value, fmt):
            errs.append(
                cause(
                    "FieldValueTypeInvalid",
                    field,
                    f"Invalid value: {_fmt(value)}: {field} in body must be of type {fmt}: {_fmt(value)}",
                )
            )
    if isinstance(value, list):
        if "maxItems" in s and len(value) > s["maxItems"]:
            errs.append(
                cause(
                    "FieldValueTooMany",
                    field,
                    f"Too many: {len(value)}: must have at most {s['maxItems']} items",
                )
            )
        if "minItems" in s and len(value) < s["minItems"]:
            errs.append(
                cause(
                    "FieldValueInvalid",
                    field,
                    f"Invalid value: {len(value)}: {field} in body should "
                    f"have at least {s['minItems']} items",
                )
            )
        if s.get("uniqueItems") or s.get("x-kubernetes-list-type") == "set":
            seen: list[Any] = []
            for i, v in enumerate(value):
                if v in seen:
                    errs.append(cause("FieldValueDuplicate", f"{field}[{i}]", f"Duplicate value: {_fmt(v)}"))
                seen.append(v)
        if s.get("x-kubernetes-list-type") == "map":
            keys = s.get("x-kubernetes-list-map-keys") or []
            seen_keys: list[tuple[Any, ...]] = []
            for i, v in enumerate(value):
                if isinstance(v, dict):
                    k = tuple(v.get(key) for key in keys)
                    if k in seen_keys:
                        shown = ", ".join(f"{key}:{_fmt(val)}" for key, val in zip(keys, k, strict=True))
                        errs.append(
                            cause(
                                "FieldValueDuplicate",
                                f"{path}[{i}]",
                                f"Duplicate value: map[string]interface {{}}{{{shown}}}",
                            )
                        )
                    seen_keys.append(k)
        items = s.get("items")
        if isinstance(items, dict):
            for i, v in enumerate(value):
                _validate(v, items, f"{path}[{i}]", errs)
    if isinstance(value, dict):
        if s.get("x-kubernetes-embedded-resource"):
            for key in ("apiVersion", "kind"):
                if not isinstance(value.get(key), str) or not value.get(key):
                    where = f"{path}.{key}" if path else key
                    errs.append(cause("FieldValueRequired", where, "Required value: must not be empty"))
        for req in s.get("required") or []:
            if req not in value:
                errs.append(cause("FieldValueRequired", f"{path}.{req}" if path else req, "Required value"))
        if "maxProperties" in s and len(value) > s["maxProperties"]:
            errs.append(
                cause(
                    "FieldValueTooMany",
                    field,
                    f"Too many: {len(value)}: must have at most {s['maxProperties']} items",
                )
            )
        if "minProperties" in s and len(value) < s["minProperties"]:
            errs.append(
                cause(
                    "FieldValueInvalid",
                    field,
                    f"Invalid value: {len(value)}: {field} in body should "
                    f"have at least {s['minProperties']} properties",
                )
            )
        props = s.get("properties") or {}
        addl = s.get("additionalProperties")
        for k, v in value.items():
            sub = props.get(k)
            if sub is None and isinstance(addl, dict):
                sub = addl
            if sub is not None and not (path == "" and k in _RESOURCE_ROOT):
                _validate(v, sub, f"{path}.{k}" if path else k, errs)
    for sub in s.get("allOf") or []:
        _validate(value, sub, path, errs)
    if s.get("anyOf") and all(validate(value, sub, path) for sub in s["anyOf"]):
        errs.append(
            cause(
                "FieldValueInvalid",
                field,
                f"Invalid value: {_fmt(value)}: {field} in body must match at least one schema in anyOf",
            )
        )
    if s.get("oneOf") and sum(not validate(value, sub, path) for sub in s["oneOf"]) != 1:
        errs.append(
            cause(
                "FieldValueInvalid",
                field,
                f"Invalid value: {_fmt(value)}: {field} in body must match exactly one schema in oneOf",
            )
        )
    if isinstance(s.get("not"), dict) and not validate(value, s["not"], path):
        errs.append(
            cause(
                "FieldValueInvalid",
                field,
                f"Invalid value: {_fmt(value)}: {field} in body should not match the schema in not",
            )
        )


def _numeric(value: float, s: Schema, field: str, errs: list[Cause]) -> None:
    if "minimum" not in s and "maximum" not in s and not s.get("multipleOf"):
        return

    def bad(text: str) -> None:
        errs.append(
            cause("FieldValueInvalid", field, f"Invalid value: {_fmt(value)}: {field} in body {text}")
        )

    if "minimum" in s:
        if s.get("exclusiveMinimum") is True and value <= s["minimum"]:
            bad(f"should be greater than {s['minimum']}")
        elif value < s["minimum"]:
            bad(f"should be greater than or equal to {s['minimum']}")
    if "maximum" in s:
        if s.get("exclusiveMaximum") is True and value >= s["maximum"]:
            bad(f"should be less than {s['maximum']}")
        elif value > s["maximum"]:
            bad(f"should be less than or equal to {s['maximum']}")
    if "multipleOf" in s and s["multipleOf"] and value % s["multipleOf"]:
        bad(f"should be a multiple of {s['multipleOf']}")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def prune(obj: Any, schema: Schema | None, *, is_resource_root: bool = True) -> list[str]:
    """Remove, in place, the fields `schema` does not specify; the paths removed (`spec.foo`,
    `spec.items[0].bar`, `metadata.junk`). With no schema only ObjectMeta is pruned."""
    removed: list[str] = []
    if is_resource_root:
        _prune_meta(obj, "", removed)
    if schema is not None:
        _prune(obj, schema, is_resource_root, "", removed)
    return removed


def _prune_meta(value: Any, path: str, removed: list[str]) -> None:
    meta = value.get("metadata") if isinstance(value, dict) else None
    if isinstance(meta, dict):
        for key in [k for k in meta if k not in OBJECT_META_FIELDS]:
            del meta[key]
            removed.append(_join(_join(path, "metadata"), key))


def _prune(value: Any, schema: Schema, resource_root: bool, path: str, removed: list[str]) -> None:
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
                here = _join(path, key)
                if embedded:
                    _prune_meta(value[key], here, removed)
                _prune(value[key], child, embedded, here, removed)
            elif not (preserve or additional is True):
                del value[key]
                removed.append(_join(path, key))
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            embedded = items.get("x-kubernetes-embedded-resource", False)
            for index, item in enumerate(value):
                here = f"{path}[{index}]"
                if embedded:
                    _prune_meta(item, here, removed)
                _prune(item, items, embedded, here, removed)


def apply_defaults(obj: Any, schema: Schema | None) -> Any:
    """Fill the `default`s of missing fields, in place; returns `obj`.

    A null in a non-nullable field is replaced by its default, or removed when there is none (the
    server's PruneNonNullableNullsWithoutDefaults).
    """
    if schema is not None:
        _default(obj, schema)
    return obj


def _null_to_default(value: dict[str, Any], key: str, child: Schema) -> bool:
    """Handle `value[key] is None` for a non-nullable `child`; False when the key is gone."""
    if "default" in child:
        value[key] = copy.deepcopy(child["default"])
        return True
    del value[key]
    return False


def _default(value: Any, schema: Schema | None) -> None:
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
                _null_to_default(value, key, child)
        for key in list(value):
            child = props.get(key)
            if child is None and isinstance(additional, dict):
                child = additional
                nulled = value[key] is None and not child.get("nullable")
                if nulled and not _null_to_default(value, key, child):
                    continue
            _default(value[key], child)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for item in value:
                _default(item, items)
