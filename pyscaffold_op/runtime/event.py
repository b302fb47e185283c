"""Watch events as handlers and predicates see them (controller-runtime's pkg/event).

The informer may build them around `RawObject`s (the object's JSON): the typed object is decoded when
`event.object` (`object_old`, `object_new`) is first read, so a predicate that drops the event from
its metadata alone, or a handler that needs only the name, costs no decode. `raw_of` gives the
runtime's own predicates and handlers that cheaper view; everyone else just reads the attributes.
"""

from __future__ import annotations

from typing import Any

from pyscaffold_op.runtime.rawobj import RawObject, unwrap


class CreateEvent:
    __slots__ = ("_object", "is_in_initial_list")

    def __init__(self, object: Any, is_in_initial_list: bool = False) -> None:
        self._object = object
        self.is_in_initial_list = is_in_initial_list

    @property
    def object(self) -> Any:
        return unwrap(self._object)

    @object.setter
    def object(self, value: Any) -> None:
        self._object = value

    def __eq__(self, other: Any) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return (self.object, self.is_in_initial_list) == (other.object, other.is_in_initial_list)

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it was

    def __repr__(self) -> str:
        return f"CreateEvent(object={self.object!r}, is_in_initial_list={self.is_in_initial_list!r})"


class UpdateEvent:
    __slots__ = ("_new", "_old")

    def __init__(self, object_old: Any, object_new: Any) -> None:
        self._old, self._new = object_old, object_new

    @property
    def object_old(self) -> Any:
        return unwrap(self._old)

    @object_old.setter
    def object_old(self, value: Any) -> None:
        self._old = value

    @property
    def object_new(self) -> Any:
        return unwrap(self._new)

    @object_new.setter
    def object_new(self, value: Any) -> None:
        self._new = value

    def __eq__(self, other: Any) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return (self.object_old, self.object_new) == (other.object_old, other.object_new)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"UpdateEvent(object_old={self.object_old!r}, object_new={self.object_new!r})"


class DeleteEvent:
    __slots__ = ("_object", "delete_state_unknown")

    def __init__(self, object: Any, delete_state_unknown: bool = False) -> None:
        self._object = object
        self.delete_state_unknown = delete_state_unknown  # missed while disconnected; seen on relist

    @property
    def object(self) -> Any:
        return unwrap(self._object)

    @object.setter
    def object(self, value: Any) -> None:
        self._object = value

    def __eq__(self, other: Any) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return (self.object, self.delete_state_unknown) == (other.object, other.delete_state_unknown)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"DeleteEvent(object={self.object!r}, delete_state_unknown={self.delete_state_unknown!r})"


class GenericEvent:
    """An event from outside the cluster (a `Channel` source)."""

    __slots__ = ("object",)

    def __init__(self, object: Any) -> None:
        self.object = object

    def __eq__(self, other: Any) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.object == other.object

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"GenericEvent(object={self.object!r})"


def raw_of(event: Any, attr: str = "object") -> RawObject | None:
    """The RawObject behind `event.<attr>` ("object", "object_old", "object_new") when the informer
    built the event from one; None for events holding typed objects."""
    slot = {"object": "_object", "object_old": "_old", "object_new": "_new"}[attr]
    value = getattr(event, slot, None)
    return value if type(value) is RawObject else None
