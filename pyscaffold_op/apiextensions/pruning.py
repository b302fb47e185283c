"""Structural pruning: the API server drops every field a custom resource's schema does not specify.

Like apiextensions-apiserver's `pruning.PruneWithOptions` plus ObjectMeta coercion: apiVersion and kind
of the root object (and of embedded resources) are kept, their `metadata` keeps only ObjectMeta fields.
A node's pruning is compiled once (`compiled.CompiledSchema`) by `pruner`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Protocol

import msgspec

from pyscaffold_op.apimachinery.objectmeta import OBJECT_META_FIELDS

__all__ = ["OBJECT_META_FIELDS", "prune", "prune_meta", "pruner", "unknown_fields"]

Schema = dict[str, Any]
Prune = Callable[[Any, bool, str, list[str]], None]

_RESOURCE_ROOT = ("apiVersion", "kind", "metadata")


class Node(Protocol):
    """A compiled schema node: its `prune` is compiled on first use and then replaced."""

    prune: Prune


def prune(obj: Any, schema: Schema | None, *, is_resource_root: bool = True) -> list[str]:
    """Remove, in place, the fields `schema` does not specify; the paths removed (`spec.foo`,
    `spec.items[0].bar`, `metadata.junk`). With no schema only ObjectMeta is pruned."""
    if schema is None:
        removed: list[str] = []
        if is_resource_root:
            prune_meta(obj, "", removed)
        return removed
    from pyscaffold_op.apiextensions.compiled import compile_schema

    return compile_schema(schema).prune(obj, is_resource_root=is_resource_root)


def unknown_fields(obj: Any, schema: Schema | None) -> list[str]:
    """The paths pruning would drop, leaving `obj` as it is (for `fieldValidation=Strict/Warn`)."""
    return prune(_json_copy(obj), schema)


_encode, _decode = msgspec.json.Encoder().encode, msgspec.json.Decoder().decode


def _json_copy(obj: Any) -> Any:
    """A deep copy of a JSON tree through msgspec: copy.deepcopy was a fifth of the emulator's create."""
    try:
        return _decode(_encode(obj))
    except TypeError:
        return copy.deepcopy(obj)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def prune_meta(value: Any, path: str, removed: list[str]) -> None:
    """Drop what ObjectMeta does not have from `value.metadata` (the root, or an embedded resource)."""
    meta = value.get("metadata") if isinstance(value, dict) else None
    if isinstance(meta, dict):
        for key in [k for k in meta if k not in OBJECT_META_FIELDS]:
            del meta[key]
            removed.append(_join(_join(path, "metadata"), key))


def pruner(s: Schema, node_of: Callable[[Schema], Node]) -> Prune:
    """The pruning of values at schema node `s`: `prune(value, resource_root, path, removed)`."""
    props = s.get("properties") or {}
    additional: Any = s.get("additionalProperties")
    keep_unknown = bool(s.get("x-kubernetes-preserve-unknown-fields", False)) or additional is True
    # key -> (compiled child, whether it is an embedded resource)
    kids = {
        k: (node_of(c), bool(c.get("x-kubernetes-embedded-resource", False)))
        for k, c in props.items()
        if c is not None
    }
    extra = (
        (node_of(additional), bool(additional.get("x-kubernetes-embedded-resource", False)))
        if isinstance(additional, dict)
        else None
    )
    items: Any = s.get("items")
    item_node = node_of(items) if isinstance(items, dict) else None
    item_embedded = item_node is not None and bool(items.get("x-kubernetes-embedded-resource", False))

    def prune(value: Any, resource_root: bool, path: str, removed: list[str]) -> None:
        if isinstance(value, dict):
            for key in list(value):
                if resource_root and key in _RESOURCE_ROOT:
                    continue  # the server handles TypeMeta/ObjectMeta itself
                kid = kids.get(key, extra)
                if kid is not None:
                    v = value[key]
                    if isinstance(v, dict | list):  # a scalar has nothing to prune
                        here = f"{path}.{key}" if path else key
                        if kid[1]:
                            prune_meta(v, here, removed)
                        kid[0].prune(v, kid[1], here, removed)
                elif not keep_unknown:
                    del value[key]
                    removed.append(f"{path}.{key}" if path else key)
        elif isinstance(value, list) and item_node is not None:
            for index, item in enumerate(value):
                if isinstance(item, dict | list):
                    here = f"{path}[{index}]"
                    if item_embedded:
                        prune_meta(item, here, removed)
                    item_node.prune(item, item_embedded, here, removed)

    return prune
