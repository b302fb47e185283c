"""Schema subtrees shared by many CRDs of one run (a built-in type's properties, embedded by every kind
that has a `JobTemplateSpec` field): built once, never mutated, written to YAML once.

A CRD holds the same dict object wherever such a subtree appears, instead of a deep copy of it, and
`gen.yamlio` emits its text once per indentation and splices it in, and `crdvalidation` checks a
shared `properties` map once. Code that changes a schema must copy the node it changes (the
generator's converters build new dicts; `apply_markers` copies). Here, below `gen`, so that
`crdvalidation` can ask without importing the generator.
"""

from __future__ import annotations

from typing import Any

# id -> the subtree; holding it keeps the id from being reused by another object
_SHARED: dict[int, dict[str, Any]] = {}


def share(node: dict[str, Any]) -> dict[str, Any]:
    """Register `node` as shared and immutable; returns it."""
    _SHARED[id(node)] = node
    return node


def is_shared(node: object) -> bool:
    return _SHARED.get(id(node)) is node
