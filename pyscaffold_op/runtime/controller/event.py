"""Watch events as handlers and predicates see them (controller-runtime's pkg/event).

The informer may build them around `RawObject`s (the object's JSON): the typed object is decoded when
`event.object` (`object_old`, `object_new`) is first read, so a predicate that drops the event from
its metadata alone, or a handler that needs only the name, costs no decode. `raw_of` gives the
runtime's own predicates and handlers that cheaper view; everyone else just reads the attributes.
"""

from __future__ import annotations

from typing import Any

from pyscaffold_op.runtime.objects.rawobj import RawObject, unwrap


class _Decoded:
    """An event attribute held in `slot`, maybe as a RawObject: decoded to the typed object when read."""

    def __init__(self, slot: str) -> None:
        self.slot = slot

    def __get__(self, event: Any, owner: type | None = None) -> Any:
        return self if event is None else unwrap(getattr(event, self.slot))

    def __set__(self, event: Any, value: Any) -> None:
        setattr(event, self.slot, value)


class _Event:
    """Equality and repr over `_fields`, read through the attributes (so decoded), as the dataclasses
    these were compared and printed; mutable, so not hashable."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __eq__(self, other: Any) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._fields)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({fields})"


class CreateEvent(_Event):
    __slots__ = ("_object", "is_in_initial_list")
    _fields = ("object", "is_in_initial_list")
    object = _Decoded("_object")

    def __init__(self, object: Any, is_in_initial_list: bool = False) -> None:
        self._object = object
        self.is_in_initial_list = is_in_initial_list


class UpdateEvent(_Event):
    __slots__ = ("_new", "_old")
    _fields = ("object_old", "object_new")
    object_old = _Decoded("_old")
    object_new = _Decoded("_new")

    def __init__(self, object_old: Any, object_new: Any) -> None:
        self._old, self._new = object_old, object_new


class DeleteEvent(_Event):
    __slots__ = ("_object", "delete_state_unknown")
    _fields = ("object", "delete_state_unknown")
    object = _Decoded("_object")

    def __init__(self, object: Any, delete_state_unknown: bool = False) -> None:
        self._object = object
        self.delete_state_unknown = delete_state_unknown  # missed while disconnected; seen on relist


class GenericEvent(_Event):
    """An event from outside the cluster (a `Channel` source)."""

    __slots__ = ("object",)
    _fields = ("object",)

    def __init__(self, object: Any) -> None:
        self.object = object


def raw_of(event: Any, attr: str = "object") -> RawObject | None:
    """The RawObject behind `event.<attr>` ("object", "object_old", "object_new") when the informer
    built the event from one; None for events holding typed objects."""
    slot = {"object": "_object", "object_old": "_old", "object_new": "_new"}[attr]
    value = getattr(event, slot, None)
    return value if type(value) is RawObject else None
