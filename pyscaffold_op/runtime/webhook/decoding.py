"""Decoding an admission request's object as controller-runtime's decoder does: leniently.

Go's JSON decoder (controller-runtime's `admission.Decoder`, over apimachinery's non-strict JSON
serializer) fills a missing field with its zero value, ignores unknown fields and `null`s, and checks
no constraint (`minLength`, a pattern, an enum): those are the API server's schema's to judge, and it
judges them after the webhook with its own words (`spec.command: Required value`). Only a value of
the wrong JSON type fails, with one line: `json: cannot unmarshal string into Go struct field
AtSpec.spec.size of type int64`.

A pydantic model checks all of that while it builds, so `decode` validates first (the common case,
fast) and, when that fails for anything but a wrong type, builds the object field by field as Go
would: zero values for what is missing, the value as sent where only a constraint failed.
"""

from __future__ import annotations

import types
import typing
from datetime import datetime
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

# pydantic error types of a value Go would have decoded (a constraint, a custom check, a Literal)
_CONSTRAINTS = frozenset(
    {
        "string_too_short",
        "string_too_long",
        "string_pattern_mismatch",
        "greater_than",
        "greater_than_equal",
        "less_than",
        "less_than_equal",
        "multiple_of",
        "too_short",
        "too_long",
        "literal_error",
        "enum",
        "value_error",
        "assertion_error",
        "missing",
    }
)


class DecodeError(ValueError):
    """The object does not decode, worded as Go's decoder words it (one line)."""


def decode(cls: type[BaseModel], raw: dict[str, Any] | None) -> Any:
    """`raw` as a `cls`, as leniently as Go decodes it; DecodeError when a value has the wrong type."""
    if raw is None:
        raise DecodeError("there is no content to decode")
    try:
        return cls.model_validate(raw)
    except ValidationError:
        return _build(cls, raw, [], cls.__name__)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return f"number {value}" if isinstance(value, float) and not value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _go_type(ann: Any) -> str:
    """A Python annotation named as the Go type a generated struct would have."""
    ann = _unwrap_optional(ann)
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin is typing.Annotated:
        return _go_type(args[0])
    if origin is list:
        return "[]" + _go_type(args[0] if args else Any)
    if origin is dict:
        return "map[string]" + _go_type(args[1] if len(args) > 1 else Any)
    if origin is typing.Literal:
        return "string"
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        package = next(
            (p for p in reversed(ann.__module__.split(".")) if p[:1] == "v" and p[1:2].isdigit()), ""
        )
        return f"{package}.{ann.__name__}" if package else ann.__name__
    names = {str: "string", int: "int64", float: "float64", bool: "bool", datetime: "v1.Time"}
    return names.get(ann, "interface {}") if isinstance(ann, type) else "interface {}"


def _wrong_type(value: Any, ann: Any, path: list[str], struct: str) -> DecodeError:
    where = f"Go struct field {struct}.{'.'.join(path)}" if path else "Go value"
    return DecodeError(f"json: cannot unmarshal {_json_type(value)} into {where} of type {_go_type(ann)}")


def _unwrap_optional(ann: Any) -> Any:
    if typing.get_origin(ann) in (typing.Union, types.UnionType):
        rest = [a for a in typing.get_args(ann) if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return ann


def _zero(ann: Any) -> Any:
    """Go's zero value of the field's type, as a JSON value."""
    ann = _unwrap_optional(ann)
    origin = typing.get_origin(ann)
    if origin is typing.Annotated:
        return _zero(typing.get_args(ann)[0])
    if origin is typing.Literal:
        return ""
    if origin in (list, dict) or ann in (list, dict):
        return None  # a nil slice or map
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return {}
    return {str: "", int: 0, float: 0.0, bool: False}.get(ann) if isinstance(ann, type) else None


def _value(ann: Any, value: Any, path: list[str], struct: str) -> Any:
    """One field's value decoded as Go would, or DecodeError."""
    inner = _unwrap_optional(ann)
    origin, args = typing.get_origin(inner), typing.get_args(inner)
    if origin is typing.Annotated:
        inner, origin, args = args[0], typing.get_origin(args[0]), typing.get_args(args[0])
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        if not isinstance(value, dict):
            raise _wrong_type(value, ann, path, struct)
        try:
            return inner.model_validate(value)
        except ValidationError:
            return _build(inner, value, path, inner.__name__)
    if origin is list and args:
        if not isinstance(value, list):
            raise _wrong_type(value, ann, path, struct)
        return [_value(args[0], item, path, struct) for item in value]
    if origin is dict and len(args) > 1:
        if not isinstance(value, dict):
            raise _wrong_type(value, ann, path, struct)
        return {k: _value(args[1], v, path, struct) for k, v in value.items()}
    try:
        return TypeAdapter(ann).validate_python(value)
    except ValidationError as err:
        if all(e["type"] in _CONSTRAINTS for e in err.errors()):
            return value  # Go keeps it; the API server's schema judges it
        raise _wrong_type(value, ann, path, struct) from None


def _build(cls: type[BaseModel], raw: dict[str, Any], path: list[str], struct: str) -> Any:
    values: dict[str, Any] = {}
    for name, info in cls.model_fields.items():
        key = info.alias or name
        value = raw.get(key)
        if value is None:  # missing or null: Go leaves the zero value
            if info.is_required():
                zero = _zero(info.annotation)
                values[name] = None if zero is None else _value(info.annotation, zero, [*path, key], struct)
            continue
        values[name] = _value(info.annotation, value, [*path, key], struct)
    return cls.model_construct(**values)
