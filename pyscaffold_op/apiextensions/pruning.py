"""Structural pruning: the API server drops every field a custom resource's schema does not specify.

Like apiextensions-apiserver's `pruning.PruneWithOptions` plus ObjectMeta coercion: apiVersion and kind
of the root object (and of embedded resources) are kept, their `metadata` keeps only ObjectMeta fields.
"""

from __future__ import annotations

import copy
from typing import Any

from pyscaffold_op.apimachinery.objectmeta import OBJECT_META_FIELDS

__all__ = ["OBJECT_META_FIELDS", "prune", "unknown_fields"]

Schema = dict[str, Any]

_RESOURCE_ROOT = ("apiVersion", "kind", "metadata")


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


def unknown_fields(obj: Any, schema: Schema | None) -> list[str]:
    """The paths pruning would drop, leaving `obj` as it is (for `fieldValidation=Strict/Warn`)."""
    return prune(copy.deepcopy(obj), schema)


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
