"""`x-kubernetes-validations`: the CEL rules of a structural schema, run where the API server runs them.

Every rule of every node with a (non-null) value runs, with the server's error texts
(apiextensions-apiserver `schema/cel/validation.go`): a false rule gives `message`, the evaluated
`messageExpression` or `failed rule: <rule>` under its `reason` and `fieldPath`; an evaluation error
gives `<error> evaluating rule: <rule>`. Transition rules (`oldSelf`) run on updates where the old
value correlates (same property, same map-list key), or always with `optionalOldSelf`.
"""

from __future__ import annotations

import contextlib
from typing import Any

from pyscaffold_op.apiextensions import cel
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


class _Stop(Exception):
    """The server stops running rules (a messageExpression it cannot use)."""


def validate_rules(
    value: Any,
    schema: Schema | None,
    old: Any = cel.MISSING,
    path: str = "",
) -> list[Cause]:
    """Causes for failed `x-kubernetes-validations` rules of an object (`schema` its root)."""
    errs: list[Cause] = []
    if has_rules(schema):
        with contextlib.suppress(_Stop):
            _rules(value, schema or {}, old, path, errs, root=path == "")
    return errs


def _rule_text(rule: dict[str, Any]) -> str:
    """apiserver's ruleErrorString: the message when there is one, else the rule."""
    return str(rule.get("message") or "").strip() or str(rule["rule"]).strip()


def _field_error(reason: str | None, field: str, typ: str, detail: str) -> Cause:
    if reason == "FieldValueForbidden":
        return cause(reason, field, f"Forbidden: {detail}")
    if reason == "FieldValueRequired":
        return cause(reason, field, f"Required value: {detail}")
    if reason == "FieldValueDuplicate":  # the server's Duplicate error shows the type, not the message
        return cause(reason, field, f'Duplicate value: "{typ}"')
    return cause("FieldValueInvalid", field, f'Invalid value: "{typ}": {detail}')


def _child(path: str, field_path: str) -> str:
    rel = field_path.strip()
    if not rel:
        return path
    rel = rel[1:] if rel.startswith(".") else rel
    if not path:
        return rel
    return f"{path}{rel}" if rel.startswith("[") else f"{path}.{rel}"


def _check_node(value: Any, s: Schema, old: Any, path: str, errs: list[Cause], root: bool) -> None:
    here = path or "<root>"
    typ = str(s.get("type") or "")
    converted: Any = cel.MISSING
    old_converted: Any = cel.MISSING
    for rule in s.get("x-kubernetes-validations") or []:
        if not isinstance(rule, dict) or not isinstance(rule.get("rule"), str):
            continue
        optional_old = bool(rule.get("optionalOldSelf"))
        try:
            program = cel.compile_rule(rule["rule"], s, root=root, optional_old_self=optional_old)
        except cel.CompileError as err:
            errs.append(
                cause("FieldValueInvalid", here, f'Invalid value: "{typ}": rule compile error: {err}')
            )
            continue
        if program.uses_old_self and old is cel.MISSING and not optional_old:
            continue  # transition rules run only against a correlated old value
        try:
            if converted is cel.MISSING:
                converted = cel.to_cel(value, s, root=root)
                old_converted = cel.MISSING if old is cel.MISSING else cel.to_cel(old, s, root=root)
            result = program.run(converted, old_converted)
        except cel.EvalError as err:
            text = str(err)
            if text.startswith("no such overload"):
                detail = (
                    f"'{text}': call arguments did not match a supported operator, function or macro "
                    f"signature for rule: {_rule_text(rule)}"
                )
            else:
                detail = f"{text} evaluating rule: {_rule_text(rule)}"
            errs.append(cause("FieldValueInvalid", here, f'Invalid value: "{typ}": {detail}'))
            continue
        if result is True:
            continue
        field = _child(path, str(rule.get("fieldPath") or "")) or "<root>"
        detail = _message(rule, s, root, converted, old_converted, field, typ, errs)
        errs.append(_field_error(rule.get("reason"), field, typ, detail))


def _message(
    rule: dict[str, Any], s: Schema, root: bool, value: Any, old: Any, field: str, typ: str, errs: list[Cause]
) -> str:
    """The failed rule's detail: its messageExpression when that yields a usable string."""
    default = str(rule.get("message") or "").strip() or f"failed rule: {str(rule['rule']).strip()}"
    expression = rule.get("messageExpression")
    if not isinstance(expression, str) or not expression.strip():
        return default
    try:
        text = cel.compile_message_expression(expression, s, root=root).run(value, old)
    except cel.CompileError:
        return default
    except cel.EvalError as err:
        problem = f"messageExpression evaluation failed due to: {err}"
    else:
        text = str(text).strip() if isinstance(text, str) else None
        if text is None:
            problem = "messageExpression failed to convert to string"
        elif "\n" in text or "\r" in text:
            problem = "messageExpression should not contain line breaks"
        elif not text:
            problem = "messageExpression should evaluate to a non-empty string"
        else:
            return text
    errs.append(cause("FieldValueInvalid", field, f'Invalid value: "{typ}": {problem}'))
    raise _Stop


def _rules(value: Any, s: Schema, old: Any, path: str, errs: list[Cause], root: bool = False) -> None:
    if value is None:  # the server validates non-null values only
        return
    if s.get("x-kubernetes-validations"):
        _check_node(value, s, old, path, errs, root)
    if isinstance(value, dict):
        props = s.get("properties") or {}
        addl = s.get("additionalProperties")
        for k, v in value.items():
            sub = props.get(k) or (addl if isinstance(addl, dict) else None)
            if sub is None or (root and k in ("apiVersion", "kind", "metadata")):
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
