"""Structural defaulting: the API server fills `default`s of missing fields, top-down, after pruning.

A node's defaulting is compiled once (`compiled.CompiledSchema`) by `defaulter`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["apply_defaults", "defaulter"]

Schema = dict[str, Any]
Default = Callable[[Any], None]

_SCALARS = (str, int, float, bool, type(None))


class Node(Protocol):
    """A compiled schema node: its `default` is compiled on first use and then replaced."""

    default: Default


def apply_defaults(obj: Any, schema: Schema | None) -> Any:
    """Fill the `default`s of missing fields, in place; returns `obj`.

    A null in a non-nullable field is replaced by its default, or removed when there is none (the
    server's PruneNonNullableNullsWithoutDefaults).
    """
    if schema is not None:
        from pyscaffold_op.apiextensions.compiled import compile_schema

        compile_schema(schema).apply_defaults(obj)
    return obj


def _copier(value: Any) -> Callable[[], Any]:
    """A fresh copy of a default per use (the stored objects must not share it)."""
    if isinstance(value, _SCALARS):
        return lambda: value
    return lambda: copy.deepcopy(value)


def defaulter(s: Schema, node_of: Callable[[Schema], Node]) -> Default:
    """The defaulting of values at schema node `s`."""
    props: dict[str, Schema] = s.get("properties") or {}
    additional: Any = s.get("additionalProperties")
    # (key, copier of its default or None, nullable) of the properties defaulting has work for
    fills = [
        (k, _copier(c["default"]) if "default" in c else None, bool(c.get("nullable")))
        for k, c in props.items()
        if "default" in c or not c.get("nullable")
    ]
    kids = {k: node_of(c) for k, c in props.items() if c is not None}
    extra = node_of(additional) if isinstance(additional, dict) else None
    extra_fill = _copier(additional["default"]) if extra is not None and "default" in additional else None
    extra_nullable = extra is None or bool(additional.get("nullable"))
    items: Any = s.get("items")
    item_node = node_of(items) if isinstance(items, dict) else None

    def default(value: Any) -> None:
        if isinstance(value, dict):
            for key, fill, nullable in fills:
                if key not in value:
                    if fill is not None:
                        value[key] = fill()
                elif value[key] is None and not nullable:
                    if fill is not None:
                        value[key] = fill()
                    else:
                        del value[key]
            for key in list(value):
                kid = kids.get(key)
                if kid is None:
                    if extra is None:
                        continue
                    kid = extra
                    if value[key] is None and not extra_nullable:
                        if extra_fill is None:
                            del value[key]
                            continue
                        value[key] = extra_fill()
                v = value[key]
                if isinstance(v, dict | list):  # a scalar has nothing to default
                    kid.default(v)
        elif isinstance(value, list) and item_node is not None:
            for item in value:
                if isinstance(item, dict | list):
                    item_node.default(item)

    return default
