"""`x-kubernetes-validations`: the CEL rules of a structural schema, run where the API server runs them."""

from __future__ import annotations

from typing import Any

from pyscaffold_op.apiextensions import cel
from pyscaffold_op.apiextensions.validation import TYPE_NAMES
from pyscaffold_op.apimachinery.fielderrors import Cause, cause

__all__ = ["MISSING", "has_rules", "validate_rules"]

Schema = dict[str, Any]
MISSING = cel.MISSING

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
) -> list[Cause]:
    """Causes for failed `x-kubernetes-validations` rules; transition rules (`oldSelf`) run on
    updates where the old value correlates (same property, same map-list key)."""
    errs: list[Cause] = []
    if has_rules(schema):
        _rules(value, schema or {}, old, path, errs)
    return errs


def _rules(value: Any, s: Schema, old: Any, path: str, errs: list[Cause]) -> None:
    for rule in s.get("x-kubernetes-validations") or []:
        if not isinstance(rule, dict) or not isinstance(rule.get("rule"), str):
            continue
        if cel.evaluate(rule["rule"], value, old) is False:
            field = (path or "<root>") + str(rule.get("fieldPath") or "")
            msg = rule.get("message") or f"failed rule: {rule['rule']}"
            reason = rule.get("reason") or "FieldValueInvalid"
            typ = s.get("type") or TYPE_NAMES.get(type(value), "object")
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
