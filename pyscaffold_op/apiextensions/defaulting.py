"""Structural defaulting: the API server fills `default`s of missing fields, top-down, after pruning."""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["apply_defaults"]

Schema = dict[str, Any]


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
