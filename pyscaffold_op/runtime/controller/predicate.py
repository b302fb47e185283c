"""Predicates: filters applied to events before a handler turns them into requests (pkg/predicate).

A predicate answers per event type; an event passes a watch only if every predicate of it says True.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from pyscaffold_op.apimachinery import KubeObject
from pyscaffold_op.runtime.controller.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent, raw_of
from pyscaffold_op.runtime.objects import objmeta
from pyscaffold_op.runtime.objects.rawobj import RawObject, same_beyond_status


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

    def changed_raw(self, old: RawObject, new: RawObject) -> bool | None:
        """The same answer from the objects' JSON and metadata, without decoding them; None: no
        cheaper answer, decode."""
        return None

    def update(self, event: UpdateEvent) -> bool:
        old, new = raw_of(event, "object_old"), raw_of(event, "object_new")
        if old is not None and new is not None:
            answer = self.changed_raw(old, new)
            if answer is not None:
                return answer
        if event.object_old is None or event.object_new is None:
            return False
        return self.changed(event.object_old, event.object_new)


class ResourceVersionChanged(_UpdateOnly):
    """Drops updates that carry no change (periodic resyncs)."""

    def changed(self, old: Any, new: Any) -> bool:
        return objmeta.resource_version(old) != objmeta.resource_version(new)

    def changed_raw(self, old: RawObject, new: RawObject) -> bool | None:
        return old.meta.resourceVersion != new.meta.resourceVersion


class GenerationChanged(_UpdateOnly):
    """Passes updates of metadata.generation only: spec changes, not status or metadata changes."""

    def changed(self, old: Any, new: Any) -> bool:
        return objmeta.generation(old) != objmeta.generation(new)

    def changed_raw(self, old: RawObject, new: RawObject) -> bool | None:
        return (old.meta.generation or 0) != (new.meta.generation or 0)


# What a write to the status subresource changes besides status itself (generation too, for a kind
# whose status is not a subresource: there every write to a non-metadata field bumps it).
_STATUS_NOISE = frozenset(
    {"resource_version", "resourceVersion", "managed_fields", "managedFields", "generation"}
)


def _beyond_status(obj: Any) -> tuple[Any, Any]:
    """The object minus status and minus the metadata a status write changes, in a form that compares
    by value: (top-level fields, metadata fields)."""
    if isinstance(obj, KubeObject):
        top = {k: v for k, v in obj.__dict__.items() if k not in ("status", "metadata")}
        meta = obj.metadata.__dict__ if obj.metadata is not None else {}
        extra = {k: v for k, v in (obj.__pydantic_extra__ or {}).items() if k != "status"}
        return (top, extra), {k: v for k, v in meta.items() if k not in _STATUS_NOISE}
    data = obj if isinstance(obj, dict) else msgspec.to_builtins(obj)
    top = {k: v for k, v in data.items() if k not in ("status", "metadata")}
    meta = data.get("metadata") or {}
    return top, {k: v for k, v in meta.items() if k not in _STATUS_NOISE}


class IgnoreStatusChanges(_UpdateOnly):
    """Drops updates whose only change is status (and the resourceVersion, managedFields and generation
    that come with a status write), so a controller's own status write does not reconcile it again.
    Resyncs (the same version replayed) pass. `for_()` applies it unless `with_status_events()`."""

    def changed(self, old: Any, new: Any) -> bool:
        if old is new or objmeta.resource_version(old) == objmeta.resource_version(new):
            return True  # a resync: the periodic reconcile is wanted
        return _beyond_status(old) != _beyond_status(new)

    def changed_raw(self, old: RawObject, new: RawObject) -> bool | None:
        # the wire form: a few µs of msgspec where decoding both objects costs tens
        if old is new or old.meta.resourceVersion == new.meta.resourceVersion:
            return True
        return not same_beyond_status(old, new)


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
