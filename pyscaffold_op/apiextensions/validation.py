"""Schema validation of custom resources, with kube-openapi's messages as a real API server sends them.

The one validator of the package: the emulator answers 422 with these causes, and the generator checks
CRD defaults and `config/samples` with them (`spec.x in body must be of type integer: "string"`). It
covers the OpenAPI v3.0 keywords a structural schema may use plus the `x-kubernetes-*` rules the server
adds (list-type set/map uniqueness, int-or-string, embedded resources' apiVersion and kind); tests hold it
to openapi-schema-validator's OAS 3.0 validator. CEL rules are `rules.validate_rules`.

A schema node's validator is compiled once (`compiled.CompiledSchema`): `validator` builds one closure
per keyword the node has, in kube-openapi's order (type, enum, numbers, strings, arrays, objects, then
allOf/anyOf/oneOf/not), and children are validated through their own compiled nodes.
"""

from __future__ import annotations

import base64
import ipaddress
import re
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

from pyscaffold_op.apiextensions.patterns import compiled
from pyscaffold_op.apimachinery.fielderrors import Cause, cause

__all__ = ["TYPE_NAMES", "validate", "validator"]

Schema = dict[str, Any]
Errs = list[Cause]
Validate = Callable[[Any, str, Errs], None]
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


_KNOWN_FORMATS = ("date-time", "datetime", "date", "uuid", "ipv4", "ipv6", "cidr", "byte")


class Node(Protocol):
    """A compiled schema node: its `validate` is compiled on first use and then replaced."""

    validate: Validate


NodeOf = Callable[[Schema], Node]


def validate(value: Any, schema: Schema | None, path: str = "") -> list[Cause]:
    """Causes (reason, message, field) for every violation; empty when valid."""
    if schema is None:
        return []
    from pyscaffold_op.apiextensions.compiled import compile_schema

    return compile_schema(schema).validate(value, path)


def _is_int(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, float) and value.is_integer()
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_int_or_string(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": _is_int,
    "number": _is_number,
}


def validator(s: Schema, node_of: NodeOf) -> Validate:
    """The validation of values at schema node `s`; `node_of` gives the compiled node of a subschema."""
    int_or_string = bool(s.get("x-kubernetes-int-or-string"))
    typ = s.get("type") or ("integer,string" if int_or_string else "")
    skip_none = bool(s.get("nullable")) or not typ
    type_ok = _is_int_or_string if int_or_string else _TYPE_CHECKS.get(typ) if isinstance(typ, str) else None
    checks = _checks(s, node_of)

    def validate(value: Any, path: str, errs: Errs) -> None:
        if value is None and skip_none:
            return
        if type_ok is not None and not type_ok(value):
            field = path or "<root>"
            errs.append(
                cause(
                    "FieldValueTypeInvalid",
                    field,
                    f'Invalid value: "{TYPE_NAMES.get(type(value), "unknown")}": {field} in body must '
                    f'be of type {typ}: "{TYPE_NAMES.get(type(value), "unknown")}"',
                )
            )
            if typ == "integer" and isinstance(value, float) and not s.get("format"):
                # kube-openapi's format check of the same value, which the server reports without
                # a field path
                checked = f"Checked value must be of type integer (default format) in {field}"
                errs.append(cause("FieldValueInvalid", "<nil>", f'Invalid value: "": {checked}'))
            return
        for check in checks:
            check(value, path, errs)

    return validate


def _checks(s: Schema, node_of: NodeOf) -> list[Validate]:
    out: list[Validate] = []
    if "enum" in s:
        out.append(_enum(s["enum"]))
    if "minimum" in s or "maximum" in s or s.get("multipleOf"):
        out.append(_numeric(s))
    out += _string_checks(s)
    out += _array_checks(s, node_of)
    out += _object_checks(s, node_of)
    out += _combinators(s, node_of)
    return out


def _invalid(value: Any, path: str, text: str) -> Cause:
    """kube-openapi's `Invalid value: <value>: <field> in body <text>`."""
    field = path or "<root>"
    return cause("FieldValueInvalid", field, f"Invalid value: {_fmt(value)}: {field} in body {text}")


def _enum(values: Any) -> Validate:
    supported = ", ".join(_fmt(e) for e in values)

    def check(value: Any, path: str, errs: Errs) -> None:
        if value not in values:
            errs.append(
                cause(
                    "FieldValueNotSupported",
                    path or "<root>",
                    f"Unsupported value: {_fmt(value)}: supported values: {supported}",
                )
            )

    return check


def _numeric(s: Schema) -> Validate:
    has_min, has_max = "minimum" in s, "maximum" in s
    low: Any = s.get("minimum")
    high: Any = s.get("maximum")
    exclusive_low = s.get("exclusiveMinimum") is True
    exclusive_high = s.get("exclusiveMaximum") is True
    multiple = s.get("multipleOf") if "multipleOf" in s else None

    def check(value: Any, path: str, errs: Errs) -> None:
        if not isinstance(value, int | float) or isinstance(value, bool):
            return
        if has_min:
            if exclusive_low and value <= low:
                errs.append(_invalid(value, path, f"should be greater than {low}"))
            elif value < low:
                errs.append(_invalid(value, path, f"should be greater than or equal to {low}"))
        if has_max:
            if exclusive_high and value >= high:
                errs.append(_invalid(value, path, f"should be less than {high}"))
            elif value > high:
                errs.append(_invalid(value, path, f"should be less than or equal to {high}"))
        if multiple and value % multiple:
            errs.append(_invalid(value, path, f"should be a multiple of {multiple}"))

    return check


def _string_checks(s: Schema) -> list[Validate]:
    out: list[Validate] = []
    if "maxLength" in s:
        longest = s["maxLength"]

        def max_length(value: Any, path: str, errs: Errs) -> None:
            if isinstance(value, str) and len(value) > longest:
                errs.append(
                    cause(
                        "FieldValueTooLong",
                        path or "<root>",
                        f"Too long: may not be more than {longest} bytes",
                    )
                )

        out.append(max_length)
    if "minLength" in s:
        shortest = s["minLength"]

        def min_length(value: Any, path: str, errs: Errs) -> None:
            if isinstance(value, str) and len(value) < shortest:
                errs.append(_invalid(value, path, f"should be at least {shortest} chars long"))

        out.append(min_length)
    if "pattern" in s:
        out.append(_pattern(s["pattern"]))
    fmt = s.get("format")
    if fmt and fmt in _KNOWN_FORMATS:

        def format_(value: Any, path: str, errs: Errs) -> None:
            if isinstance(value, str) and not _format_ok(value, fmt):
                field = path or "<root>"
                text = f"Invalid value: {_fmt(value)}: {field} in body must be of type {fmt}: {_fmt(value)}"
                errs.append(cause("FieldValueTypeInvalid", field, text))

        out.append(format_)
    return out


def _pattern(pattern: str) -> Validate:
    program: list[Any] = []  # compiled on the first string, so that a bad pattern fails where it did

    def check(value: Any, path: str, errs: Errs) -> None:
        if not isinstance(value, str):
            return
        if not program:
            program.append(compiled(pattern))
        if program[0].search(value) is None:
            errs.append(_invalid(value, path, f"should match '{pattern}'"))

    return check


def _size_checks(
    s: Schema, container: type[list[Any]] | type[dict[str, Any]], max_key: str, min_key: str, noun: str
) -> list[Validate]:
    """maxItems/minItems or maxProperties/minProperties: kube-openapi says "items" in both too-many
    messages, and the noun only in too-few."""
    out: list[Validate] = []
    if max_key in s:
        most = s[max_key]

        def too_many(value: Any, path: str, errs: Errs) -> None:
            if isinstance(value, container) and len(value) > most:
                errs.append(
                    cause(
                        "FieldValueTooMany",
                        path or "<root>",
                        f"Too many: {len(value)}: must have at most {most} items",
                    )
                )

        out.append(too_many)
    if min_key in s:
        least = s[min_key]

        def too_few(value: Any, path: str, errs: Errs) -> None:
            if isinstance(value, container) and len(value) < least:
                field = path or "<root>"
                errs.append(
                    cause(
                        "FieldValueInvalid",
                        field,
                        f"Invalid value: {len(value)}: {field} in body should have at least {least} {noun}",
                    )
                )

        out.append(too_few)
    return out


def _array_checks(s: Schema, node_of: NodeOf) -> list[Validate]:
    out: list[Validate] = []
    out.extend(_size_checks(s, list, "maxItems", "minItems", "items"))
    if s.get("uniqueItems") or s.get("x-kubernetes-list-type") == "set":
        out.append(_unique_items)
    if s.get("x-kubernetes-list-type") == "map":
        out.append(_unique_map_keys(s.get("x-kubernetes-list-map-keys") or []))
    items = s.get("items")
    if isinstance(items, dict):
        item_node = node_of(items)

        def each_item(value: Any, path: str, errs: Errs) -> None:
            if isinstance(value, list):
                for i, v in enumerate(value):
                    item_node.validate(v, f"{path}[{i}]", errs)

        out.append(each_item)
    return out


def _unique_items(value: Any, path: str, errs: Errs) -> None:
    if not isinstance(value, list):
        return
    seen: list[Any] = []  # a list: items may be unhashable, and Go compares 1 and 1.0 equal
    for i, v in enumerate(value):
        if v in seen:
            field = f"{path or '<root>'}[{i}]"
            errs.append(cause("FieldValueDuplicate", field, f"Duplicate value: {_fmt(v)}"))
        seen.append(v)


def _unique_map_keys(keys: list[str]) -> Validate:
    def check(value: Any, path: str, errs: Errs) -> None:
        if not isinstance(value, list):
            return
        seen: list[tuple[Any, ...]] = []
        for i, v in enumerate(value):
            if isinstance(v, dict):
                k = tuple(v.get(key) for key in keys)
                if k in seen:
                    shown = ", ".join(f"{key}:{_fmt(val)}" for key, val in zip(keys, k, strict=True))
                    errs.append(
                        cause(
                            "FieldValueDuplicate",
                            f"{path}[{i}]",
                            f"Duplicate value: map[string]interface {{}}{{{shown}}}",
                        )
                    )
                seen.append(k)

    return check


def _object_checks(s: Schema, node_of: NodeOf) -> list[Validate]:
    out: list[Validate] = []
    if s.get("x-kubernetes-embedded-resource"):
        out.append(_embedded_type_meta)
    required = s.get("required") or []
    if required:

        def required_(value: Any, path: str, errs: Errs) -> None:
            if isinstance(value, dict):
                for req in required:
                    if req not in value:
                        errs.append(
                            cause("FieldValueRequired", f"{path}.{req}" if path else req, "Required value")
                        )

        out.append(required_)
    out.extend(_size_checks(s, dict, "maxProperties", "minProperties", "properties"))
    props = s.get("properties") or {}
    additional = s.get("additionalProperties")
    if props or isinstance(additional, dict):
        out.append(_properties(props, additional, node_of))
    return out


def _embedded_type_meta(value: Any, path: str, errs: Errs) -> None:
    if isinstance(value, dict):
        for key in ("apiVersion", "kind"):
            if not isinstance(value.get(key), str) or not value.get(key):
                where = f"{path}.{key}" if path else key
                errs.append(cause("FieldValueRequired", where, "Required value: must not be empty"))


def _properties(props: dict[str, Any], additional: Any, node_of: NodeOf) -> Validate:
    kids = {k: node_of(sub) for k, sub in props.items() if sub is not None}
    extra = node_of(additional) if isinstance(additional, dict) else None

    def check(value: Any, path: str, errs: Errs) -> None:
        if not isinstance(value, dict):
            return
        for k, v in value.items():
            node = kids.get(k, extra)
            if node is None:
                continue
            if path:
                node.validate(v, f"{path}.{k}", errs)
            elif k not in _RESOURCE_ROOT:  # the server checks TypeMeta and ObjectMeta itself
                node.validate(v, k, errs)

    return check


def _run(node: Node | None, value: Any, path: str) -> Errs:
    errs: Errs = []
    if node is not None:
        node.validate(value, path, errs)
    return errs


def _combinators(s: Schema, node_of: NodeOf) -> list[Validate]:
    out: list[Validate] = []
    all_of = [node_of(sub) for sub in s.get("allOf") or [] if sub is not None]
    if all_of:

        def all_of_(value: Any, path: str, errs: Errs) -> None:
            for node in all_of:
                node.validate(value, path, errs)

        out.append(all_of_)
    if s.get("anyOf"):
        any_of = [node_of(sub) if sub is not None else None for sub in s["anyOf"]]

        def any_of_(value: Any, path: str, errs: Errs) -> None:
            if all(_run(node, value, path) for node in any_of):
                errs.append(_invalid(value, path, "must match at least one schema in anyOf"))

        out.append(any_of_)
    if s.get("oneOf"):
        one_of = [node_of(sub) if sub is not None else None for sub in s["oneOf"]]

        def one_of_(value: Any, path: str, errs: Errs) -> None:
            if sum(not _run(node, value, path) for node in one_of) != 1:
                errs.append(_invalid(value, path, "must match exactly one schema in oneOf"))

        out.append(one_of_)
    if isinstance(s.get("not"), dict):
        negated = node_of(s["not"])

        def not_(value: Any, path: str, errs: Errs) -> None:
            if not _run(negated, value, path):
                errs.append(_invalid(value, path, "should not match the schema in not"))

        out.append(not_)
    return out
