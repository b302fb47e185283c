"""The RFC 6902 JSON patches a defaulting webhook answers with: `diff` (add/remove/replace) and
`apply`. Small and dependency-free so the runtime (an operator's image) needs no `jsonpatch`
distribution; the emulator and the tests check these patches with the `jsonpatch` library."""

from __future__ import annotations

import copy
from typing import Any


class PatchConflict(Exception):
    """The patch names a location the document does not have."""


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _same(a: Any, b: Any) -> bool:
    # JSON equality: true is not 1 (Python's `True == 1`), 1 and 1.0 are the same number
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def diff(src: Any, dst: Any, path: str = "") -> list[dict[str, Any]]:
    """The operations taking `src` to `dst`."""
    if _same(src, dst):
        return []
    if isinstance(src, dict) and isinstance(dst, dict):
        ops: list[dict[str, Any]] = []
        for key in src:
            if key not in dst:
                ops.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
        for key, value in dst.items():
            where = f"{path}/{_escape(key)}"
            if key not in src:
                ops.append({"op": "add", "path": where, "value": copy.deepcopy(value)})
            else:
                ops.extend(diff(src[key], value, where))
        return ops
    if isinstance(src, list) and isinstance(dst, list) and len(src) <= len(dst):
        # item by item, then the appended ones (a shorter list is replaced whole)
        ops = []
        for i, (x, y) in enumerate(zip(src, dst, strict=False)):
            ops.extend(diff(x, y, f"{path}/{i}"))
        ops += [
            {"op": "add", "path": f"{path}/{i}", "value": copy.deepcopy(dst[i])}
            for i in range(len(src), len(dst))
        ]
        return ops
    return [{"op": "replace", "path": path, "value": copy.deepcopy(dst)}]


def apply(doc: Any, ops: list[dict[str, Any]]) -> Any:
    """`doc` with `ops` (add, remove, replace) applied; `doc` itself is not changed."""
    doc = copy.deepcopy(doc)
    for op in ops:
        doc = _apply_one(doc, op)
    return doc


def _apply_one(doc: Any, op: dict[str, Any]) -> Any:
    kind, path = op["op"], op["path"]
    if path == "":
        if kind == "remove":
            raise PatchConflict("cannot remove the whole document")
        return copy.deepcopy(op["value"])
    tokens = [_unescape(t) for t in path.split("/")[1:]]
    parent = doc
    for token in tokens[:-1]:
        parent = _child(parent, token)
    last = tokens[-1]
    if isinstance(parent, dict):
        if kind != "add" and last not in parent:
            raise PatchConflict(f"{path}: no such member")
        if kind == "remove":
            del parent[last]
        else:
            parent[last] = copy.deepcopy(op["value"])
        return doc
    if isinstance(parent, list):
        if kind == "add" and last == "-":
            parent.append(copy.deepcopy(op["value"]))
            return doc
        index = _index(parent, last, path, allow_end=kind == "add")
        if kind == "add":
            parent.insert(index, copy.deepcopy(op["value"]))
        elif kind == "remove":
            del parent[index]
        else:
            parent[index] = copy.deepcopy(op["value"])
        return doc
    raise PatchConflict(f"{path}: the parent is not an object or array")


def _child(node: Any, token: str) -> Any:
    if isinstance(node, dict):
        if token not in node:
            raise PatchConflict(f"no member {token!r}")
        return node[token]
    if isinstance(node, list):
        return node[_index(node, token, token, allow_end=False)]
    raise PatchConflict(f"{token!r}: not an object or array")


def _index(items: list[Any], token: str, path: str, *, allow_end: bool) -> int:
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchConflict(f"{path}: not an array index")
    index = int(token)
    if index > len(items) or (index == len(items) and not allow_end):
        raise PatchConflict(f"{path}: index out of range")
    return index
