"""Custom resources against their CRD's structural schema: prune, default, validate.

Order follows apiextensions-apiserver: prune unknown fields, apply defaults (dropping nulls of
non-nullable fields), then validate. Pruning and defaulting are the generator's (`gen.structural`);
validation is our own because its messages must be kube-openapi's, as clients see them from a real
server (`spec.x in body must be of type integer: "string"`). CEL rules are not evaluated.
"""

from __future__ import annotations

import base64
import copy
import ipaddress
import re
import uuid
from datetime import datetime
from typing import Any

from pyscaffold_op.envtest import cel
from pyscaffold_op.envtest.errors import cause
from pyscaffold_op.gen import structural

Schema = dict[str, Any]

OBJECT_META_FIELDS = {
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
}


# -- pruning and defaulting: the generator's implementation (pyscaffold_op.gen.structural), so the
# offline checks of `make manifests` and the emulator agree on what the server keeps ----------------


def prune(obj: dict[str, Any], schema: Schema | None) -> dict[str, Any]:
    """Drop fields the schema does not declare; metadata keeps only ObjectMeta fields. In place."""
    if isinstance(obj.get("metadata"), dict):
        obj["metadata"] = {k: v for k, v in obj["metadata"].items() if k in OBJECT_META_FIELDS}
    if schema is not None:
        structural.prune(obj, schema)
    return obj


def apply_defaults(obj: Any, schema: Schema | None) -> Any:
    """Fill `default`s of missing fields (and drop nulls of non-nullable fields). In place."""
    if schema is not None:
        structural.apply_defaults(obj, schema)
    return obj


def unknown_fields(obj: dict[str, Any], schema: Schema | None) -> list[str]:
    """Paths pruning would drop (for `fieldValidation=Strict/Warn`)."""
    if schema is None:
        return []
    return structural.prune(copy.deepcopy(obj), schema)


# -- validation ------------------------------------------------------------------------------------

_TYPE_NAMES = {
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
        return '"' + _TYPE_NAMES[type(v)] + '"'
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
        if fmt == "date-time":
            return (
                bool(re.fullmatch(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)", value))
                and datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00")) is not None
            )
        if fmt == "date":
            return datetime.strptime(value, "%Y-%m-%d") is not None
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


def validate(value: Any, schema: Schema | None, path: str = "") -> list[dict[str, str]]:
    """Causes (reason, message, field) for every violation; empty when valid."""
    errs: list[dict[str, str]] = []
    if schema is not None:
        _validate(value, schema, path, errs)
    return errs


def _validate(value: Any, s: Schema, path: str, errs: list[dict[str, str]]) -> None:
    field = path or "<root>"
    if value is None and (s.get("nullable") or not s.get("type")):
        return
    typ = s.get("type")
    if typ and not _type_ok(value, typ, s):
        errs.append(
            cause(
                "FieldValueInvalid",
                field,
                f'Invalid value: "{_TYPE_NAMES.get(type(value), "unknown")}": {field} in body must '
                f"be of type {typ}: {_fmt(value)}",
            )
        )
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
        if "pattern" in s and not re.search(s["pattern"], value):
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
                    "FieldValueInvalid",
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
            if sub is not None and not (path == "" and k in ("apiVersion", "kind", "metadata")):
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


def _numeric(value: float, s: Schema, field: str, errs: list[dict[str, str]]) -> None:
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


# -- CEL rules (x-kubernetes-validations), the subset `cel.py` evaluates -----------------------------

_RULES_CACHE: dict[int, tuple[Schema, bool]] = {}


def has_rules(schema: Schema | None) -> bool:
    if schema is None:
        return False
    hit = _RULES_CACHE.get(id(schema))
    if hit is None or hit[0] is not schema:
        hit = (schema, "x-kubernetes-validations" in repr(schema))
        _RULES_CACHE[id(schema)] = hit
    return hit[1]


def validate_rules(
    value: Any,
    schema: Schema | None,
    old: Any = cel.MISSING,
    path: str = "",
) -> list[dict[str, str]]:
    """Causes for failed `x-kubernetes-validations` rules; transition rules (`oldSelf`) run on
    updates where the old value correlates (same property, same map-list key)."""
    errs: list[dict[str, str]] = []
    if has_rules(schema):
        _rules(value, schema or {}, old, path, errs)
    return errs


def _rules(value: Any, s: Schema, old: Any, path: str, errs: list[dict[str, str]]) -> None:
    for rule in s.get("x-kubernetes-validations") or []:
        if not isinstance(rule, dict) or not isinstance(rule.get("rule"), str):
            continue
        if cel.evaluate(rule["rule"], value, old) is False:
            field = (path or "<root>") + str(rule.get("fieldPath") or "")
            msg = rule.get("message") or f"failed rule: {rule['rule']}"
            reason = rule.get("reason") or "FieldValueInvalid"
            typ = s.get("type") or _TYPE_NAMES.get(type(value), "object")
            text = {
                "FieldValueForbidden": f"Forbidden: {msg}",
                "FieldValueRequired": f"Required value: {msg}",
                "FieldValueDuplicate": f"Duplicate value: {msg}",
            }.get(reason, f'Invalid value: "{typ}": {msg}')
            errs.append(cause(reason, field, text))
    if isinstance(value, dict):
        props = s.get("properties") or {}
        addl = s.get("additionalProperties")
        for k, v in value.items():
            sub = props.get(k) or (addl if isinstance(addl, dict) else None)
            if sub is None or (path == "" and k in ("apiVersion", "kind", "metadata")):
                continue
            o = old.get(k, cel.MISSING) if isinstance(old, dict) else cel.MISSING
            _rules(v, sub, o, f"{path}.{k}" if path else k, errs)
    elif isinstance(value, list) and isinstance(s.get("items"), dict):
        keys = s.get("x-kubernetes-list-map-keys") if s.get("x-kubernetes-list-type") == "map" else None
        olds: dict[Any, Any] = {}
        if keys and isinstance(old, list):
            olds = {tuple(o.get(k) for k in keys): o for o in old if isinstance(o, dict)}
        for i, v in enumerate(value):
            o = (
                olds.get(tuple(v.get(k) for k in keys), cel.MISSING)
                if keys and isinstance(v, dict)
                else cel.MISSING
            )
            _rules(v, s["items"], o, f"{path}[{i}]", errs)
