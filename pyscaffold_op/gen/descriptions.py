"""controller-gen's `crd:maxDescLen`: cut schema descriptions down to a byte budget.

0 drops every description; n keeps at most n bytes (Go strings are bytes), cut after the last
sentence terminal (Unicode's Sentence_Terminal property, through the `regex` module) within the
budget, else at the budget itself.
"""

from __future__ import annotations

import copy
from typing import Any

from pyscaffold_op.gen.shared import is_shared, share

_CHILD_MAPS = ("properties", "patternProperties", "definitions", "dependencies")
_CHILD_LISTS = ("allOf", "anyOf", "oneOf")
_CHILD_NODES = ("items", "additionalProperties", "additionalItems", "not")


def truncate(description: str, max_len: int) -> str:
    """The description as controller-gen's truncateString leaves it."""
    import regex

    raw = description.encode("utf-8")
    if len(raw) <= max_len:
        return description
    # a cut inside a multi-byte character drops that character (Go would keep a broken byte)
    head = raw[:max_len].decode("utf-8", errors="ignore")
    terminals = list(regex.finditer(r"\p{Sentence_Terminal}", head))
    if terminals and terminals[-1].start() > 0:
        return head[: terminals[-1].end()]
    return head


# (id of a shared subtree, max_len) -> its truncated copy, itself shared (the original stays alive in
# the shared registry, so its id is not reused)
_TRUNCATED: dict[tuple[int, int], dict[str, Any]] = {}


def truncate_descriptions(schema: dict[str, Any], max_len: int) -> None:
    """Apply `truncate` (or, for 0, removal) to every description in `schema`, in place. A shared
    subtree (a built-in type's schema, `gen.shared`) is never changed: its slot gets a truncated copy,
    made once per subtree and length."""
    if max_len < 0:
        return
    if "description" in schema:
        if max_len == 0:
            del schema["description"]
        else:
            schema["description"] = truncate(schema["description"], max_len)
    for key in _CHILD_MAPS:
        children = schema.get(key) or {}
        if is_shared(children):
            schema[key] = _truncated(children, max_len, schema_map=True)
            continue
        for name, child in children.items():
            if isinstance(child, dict):
                children[name] = _in_place(child, max_len)
    for key in _CHILD_LISTS:
        if schema.get(key):
            schema[key] = [_in_place(child, max_len) for child in schema[key]]
    for key in _CHILD_NODES:
        if isinstance(schema.get(key), dict):
            schema[key] = _in_place(schema[key], max_len)


def _in_place(node: dict[str, Any], max_len: int) -> dict[str, Any]:
    if is_shared(node):
        return _truncated(node, max_len, schema_map=False)
    truncate_descriptions(node, max_len)
    return node


def _truncated(node: dict[str, Any], max_len: int, *, schema_map: bool) -> dict[str, Any]:
    """A truncated copy of shared `node`: a schema, or (`schema_map`) a `properties` map of them."""
    key = (id(node), max_len)
    if key not in _TRUNCATED:
        copied = copy.deepcopy(node)
        for child in copied.values() if schema_map else [copied]:
            if isinstance(child, dict):
                truncate_descriptions(child, max_len)
        _TRUNCATED[key] = share(copied)
    return _TRUNCATED[key]
