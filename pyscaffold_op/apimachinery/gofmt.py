"""How Go prints a decoded JSON value (`map[string]interface{}` and friends) in an error message: the
API server's texts quote values with `%T` and `%v`, and the emulator and the CRD validator repeat them
word for word."""

from __future__ import annotations

from typing import Any


def go_type(value: Any) -> str:
    """Go's `%T` of a decoded JSON value."""
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    return "string"


def go_value(value: Any) -> str:
    """Go's `%v` of a decoded JSON value (maps print sorted by key)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    return str(value)
