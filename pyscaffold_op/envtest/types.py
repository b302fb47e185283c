"""The emulator's names for what it stores, declared once for every wing.

Objects are JSON trees (`Obj`, what the wire decodes to and the store holds, never mutated once
stored); a stored object's place is its group-resource (`GR`, (group, plural): all versions of a
resource share one) and its key (`Key`, (namespace, name), namespace "" for cluster-scoped).
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
GR = tuple[str, str]  # (group, plural)
Key = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped
NAMESPACES: GR = ("", "namespaces")


def as_obj(value: Any) -> Obj:
    """`value` when it is an object (a JSON map), else an empty one: for reading a field a body may
    have of the wrong type."""
    return value if isinstance(value, dict) else {}


__all__ = ["GR", "NAMESPACES", "Key", "Obj", "as_obj"]
