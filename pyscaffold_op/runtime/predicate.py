"""Predicates: filters applied to events before a handler turns them into requests (pkg/predicate).

A predicate answers per event type; an event passes a watch only if every predicate of it says True.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyscaffold_op.runtime import objmeta
from pyscaffold_op.runtime.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent


class Predicate:
    """Base: lets every event through. Override the methods you filter on."""

    def create(self, event: CreateEvent) -> bool:
        return True

    def update(self, event: UpdateEvent) -> bool:
        return True

    def delete(self, event: DeleteEvent) -> bool:
        return True

    def generic(self, event: GenericEvent) -> bool:
        return True


class Funcs(Predicate):
    """A predicate from functions; an event type without a function passes (predicate.Funcs)."""

    def __init__(
        self,
        create: Callable[[CreateEvent], bool] | None = None,
        update: Callable[[UpdateEvent], bool] | None = None,
        delete: Callable[[DeleteEvent], bool] | None = None,
        generic: Callable[[GenericEvent], bool] | None = None,
    ) -> None:
        self._create, self._update, self._delete, self._generic = create, update, delete, generic

    def create(self, event: CreateEvent) -> bool:
        return self._create(event) if self._create else True

    def update(self, event: UpdateEvent) -> bool:
        return self._update(event) if self._update else True

    def delete(self, event: DeleteEvent) -> bool:
        return self._delete(event) if self._delete else True

    def generic(self, event: GenericEvent) -> bool:
        return self._generic(event) if self._generic else True


def new_predicate_funcs(keep: Callable[[Any], bool]) -> Funcs:
    """One object filter applied to every event type (NewPredicateFuncs); updates test the new object."""
    return Funcs(
        lambda e: keep(e.object),
        lambda e: keep(e.object_new),
        lambda e: keep(e.object),
        lambda e: keep(e.object),
    )


class _UpdateOnly(Predicate):
    def changed(self, old: Any, new: Any) -> bool:
        raise NotImplementedError

    def update(self, event: UpdateEvent) -> bool:
        if event.object_old is None or event.object_new is None:
            return False
        return self.changed(event.object_old, event.object_new)


class ResourceVersionChanged(_UpdateOnly):
    """Drops updates that carry no change (periodic resyncs)."""

    def changed(self, old: Any, new: Any) -> bool:
        return objmeta.resource_version(old) != objmeta.resource_version(new)


class GenerationChanged(_UpdateOnly):
    """Passes updates of metadata.generation only: spec changes, not status or metadata changes."""

    def changed(self, old: Any, new: Any) -> bool:
        return objmeta.generation(old) != objmeta.generation(new)


class LabelChanged(_UpdateOnly):
    def changed(self, old: Any, new: Any) -> bool:
        return objmeta.labels(old) != objmeta.labels(new)


class AnnotationChanged(_UpdateOnly):
    def changed(self, old: Any, new: Any) -> bool:
        return objmeta.annotations(old) != objmeta.annotations(new)


class _Combined(Predicate):
    def __init__(self, predicates: tuple[Predicate, ...], combine: Callable[[Any], bool]) -> None:
        self.predicates = tuple(as_predicate(p) for p in predicates)
        self._combine = combine

    def create(self, event: CreateEvent) -> bool:
        return self._combine(p.create(event) for p in self.predicates)

    def update(self, event: UpdateEvent) -> bool:
        return self._combine(p.update(event) for p in self.predicates)

    def delete(self, event: DeleteEvent) -> bool:
        return self._combine(p.delete(event) for p in self.predicates)

    def generic(self, event: GenericEvent) -> bool:
        return self._combine(p.generic(event) for p in self.predicates)


def and_(*predicates: Predicate) -> Predicate:
    return _Combined(predicates, all)


def or_(*predicates: Predicate) -> Predicate:
    return _Combined(predicates, any)


def not_(predicate: Predicate) -> Predicate:
    return _Combined((predicate,), _none)


def _none(results: Any) -> bool:
    return not any(results)


def as_predicate(p: Predicate | type[Predicate]) -> Predicate:
    """Accept `GenerationChanged` as well as `GenerationChanged()`."""
    return p() if isinstance(p, type) else p
