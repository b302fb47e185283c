"""Duplicate fields of a JSON body, as sigs.k8s.io/json's strict decoder reports them
(`duplicate field "data.a"`): Strict refuses them with the unknown fields, Warn warns about each."""

from __future__ import annotations

import json
import re
from typing import Any

_KEY_END = re.compile(rb'"\s*:')


class _Pairs(list[tuple[str, Any]]):
    """A JSON object as its key/value pairs in document order, duplicates kept."""


def may_repeat(body: bytes, decoded: Any) -> bool:
    """A cheap test before `duplicate_fields`: the body has more `"...":` than the decoded object has
    keys (a string holding `":` only costs the exact look)."""
    return len(_KEY_END.findall(body)) > _count_keys(decoded)


def _count_keys(node: Any) -> int:
    if isinstance(node, dict):
        return len(node) + sum(_count_keys(v) for v in node.values())
    if isinstance(node, list):
        return sum(_count_keys(v) for v in node)
    return 0


def duplicate_fields(body: bytes) -> tuple[list[str], dict[str, int]]:
    """The paths of repeated keys (`metadata.name`, `spec.ports[0].port`), and every path's place in
    the document (so other decoding errors can be told in the decoder's order); nothing when the
    body is not JSON (YAML bodies, protobuf)."""
    if b'"' not in body:
        return [], {}
    try:
        tree = json.loads(body, object_pairs_hook=_Pairs)
    except ValueError:
        return [], {}
    found: list[str] = []
    order: dict[str, int] = {}
    _walk(tree, "", found, order)
    return found, order


def _walk(node: Any, path: str, found: list[str], order: dict[str, int]) -> None:
    if isinstance(node, _Pairs):
        seen: set[str] = set()
        for key, value in node:
            where = f"{path}.{key}" if path else key
            if key in seen:
                found.append(where)
                order[f"duplicate {where}"] = len(order)
            else:
                order.setdefault(where, len(order))
            seen.add(key)
            _walk(value, where, found, order)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _walk(item, f"{path}[{i}]", found, order)
