"""controller-gen's `crd:maxDescLen`: cut schema descriptions down to a byte budget.

0 drops every description; n keeps at most n bytes (Go strings are bytes), cut after the last
sentence terminal (Unicode's Sentence_Terminal property, through the `regex` module) within the
budget, else at the budget itself.
"""

from __future__ import annotations

from typing import Any

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


def truncate_descriptions(schema: dict[str, Any], max_len: int) -> None:
    """Apply `truncate` (or, for 0, removal) to every description in `schema`, in place."""
    if max_len < 0:
        return
    if "description" in schema:
        if max_len == 0:
            del schema["description"]
        else:
            schema["description"] = truncate(schema["description"], max_len)
    for key in _CHILD_MAPS:
        for child in (schema.get(key) or {}).values():
            if isinstance(child, dict):
                truncate_descriptions(child, max_len)
    for key in _CHILD_LISTS:
        for child in schema.get(key) or []:
            truncate_descriptions(child, max_len)
    for key in _CHILD_NODES:
        if isinstance(schema.get(key), dict):
            truncate_descriptions(schema[key], max_len)
