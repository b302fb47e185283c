"""Predicates: filters applied to events before a handler turns them into requests (pkg/predicate).

A predicate answers per event type; an event passes a watch only if every predicate of it says True.
An update's predicate sees both states (`event.object_old`, `event.object_new`): `field_changed`
compares a field of the two, and a `Funcs(update=...)` of your own may compare anything.

Besides controller-runtime's, two of kopf's filters: `field_changed("spec.x")` (kopf's `on.field`)
and `matching(labels=, annotations=, when=)` (kopf's `labels=`/`annotations=`/`when=` with its
`PRESENT`/`ABSENT`/callable values): a state filter, so daemons and timers use it to decide whether
an object should have one running.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import msgspec

from pyscaffold_op.apimachinery import KubeObject
from pyscaffold_op.runtime.controller.diff import Path, parse_path, value_at, wire
from pyscaffold_op.runtime.controller.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent, raw_of
from pyscaffold_op.runtime.objects import objmeta
from pyscaffold_op.runtime.objects.rawobj import RawObject, same_beyond_status, unwrap


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


class FieldChanged(_UpdateOnly):
    """Passes updates that change the value at one of `paths` (dotted wire paths: `"spec.replicas"`,
    `"metadata.labels"`), kopf's `@kopf.on.field`; creates, deletes and generic events pass. A field
    that appears or disappears is a change; equal values in another JSON spelling (`1` and `1.0`,
    another key order) are not."""

    def __init__(self, *paths: str | Path) -> None:
        if not paths:
            raise ValueError("field_changed() needs at least one field path, such as 'spec.replicas'")
        self.paths = tuple(parse_path(p) for p in paths)

    def __repr__(self) -> str:
        return f"field_changed({', '.join(repr('.'.join(p)) for p in self.paths)})"

    def changed(self, old: Any, new: Any) -> bool:
        a, b = wire(old), wire(new)
        missing = _ABSENT_VALUE
        return any(value_at(a, p, missing) != value_at(b, p, missing) for p in self.paths)

    def changed_raw(self, old: RawObject, new: RawObject) -> bool | None:
        if old is new or old.raw == new.raw:
            return False
        return self.changed(old, new)  # `wire` decodes the JSON: no typed object is built


def field_changed(*paths: str | Path) -> FieldChanged:
    """`field_changed("spec.replicas")`: pass updates changing that field (any of several paths)."""
    return FieldChanged(*paths)


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


PRESENT: Final[Any] = _Marker("PRESENT")
"""`matching(labels={"k": PRESENT})`: the label (annotation) is set, to any value."""
ABSENT: Final[Any] = _Marker("ABSENT")
"""`matching(labels={"k": ABSENT})`: the label (annotation) is not set."""
_ABSENT_VALUE: Any = object()

MetaValue = str | Callable[[str | None], bool] | Any
"""A `matching()` value: a string (equal), `PRESENT`, `ABSENT`, or a callable of the value (None
when absent) answering True to match."""


class _Metadata(msgspec.Struct):
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class _MetaOnly(msgspec.Struct):
    metadata: _Metadata | None = None


_meta_decoder = msgspec.json.Decoder(_MetaOnly)


def _labels_and_annotations(obj: Any) -> tuple[dict[str, str], dict[str, str]]:
    if type(obj) is RawObject:  # from the JSON: labels and annotations only, no typed object
        meta = _meta_decoder.decode(obj.raw).metadata or _Metadata()
        return meta.labels or {}, meta.annotations or {}
    return objmeta.labels(obj) or {}, objmeta.annotations(obj) or {}


def _meta_matches(have: Mapping[str, str], want: Mapping[str, MetaValue]) -> bool:
    for key, expected in want.items():
        value = have.get(key)
        if expected is PRESENT:
            ok = value is not None
        elif expected is ABSENT:
            ok = value is None
        elif callable(expected):
            ok = bool(expected(value))
        else:
            ok = value == expected
        if not ok:
            return False
    return True


class ObjectFilter(Predicate):
    """A filter on the object's state (kopf's `labels=`, `annotations=`, `when=`): every event whose
    object (an update's new object) matches passes. `matches(obj)` answers for one object; daemons
    and timers run for an object only while it matches."""

    def __init__(
        self,
        labels: Mapping[str, MetaValue] | None = None,
        annotations: Mapping[str, MetaValue] | None = None,
        when: Callable[[Any], bool] | None = None,
    ) -> None:
        self.labels, self.annotations, self.when = dict(labels or {}), dict(annotations or {}), when

    def __repr__(self) -> str:
        parts = [f"{k}={v!r}" for k, v in (("labels", self.labels), ("annotations", self.annotations)) if v]
        if self.when is not None:
            parts.append(f"when={getattr(self.when, '__name__', self.when)!r}")
        return f"matching({', '.join(parts)})"

    def matches(self, obj: Any) -> bool:
        """Whether `obj` (typed, a dict, or an informer's RawObject) matches every condition."""
        if obj is None:
            return False
        if self.labels or self.annotations:
            labels, annotations = _labels_and_annotations(obj)
            if not (_meta_matches(labels, self.labels) and _meta_matches(annotations, self.annotations)):
                return False
        return self.when is None or bool(self.when(unwrap(obj)))

    def create(self, event: CreateEvent) -> bool:
        return self.matches(_held(event, "object"))

    def update(self, event: UpdateEvent) -> bool:
        return self.matches(_held(event, "object_new"))

    def delete(self, event: DeleteEvent) -> bool:
        return self.matches(_held(event, "object"))

    def generic(self, event: GenericEvent) -> bool:
        return self.matches(event.object)


def matching(
    *,
    labels: Mapping[str, MetaValue] | None = None,
    annotations: Mapping[str, MetaValue] | None = None,
    when: Callable[[Any], bool] | None = None,
) -> ObjectFilter:
    """kopf's filters as a predicate: `matching(labels={"app": "db", "tier": PRESENT},
    annotations={"skip": ABSENT}, when=lambda obj: obj.spec.size > 1)`; all must hold."""
    return ObjectFilter(labels, annotations, when)


def _held(event: Any, attr: str) -> Any:
    raw = raw_of(event, attr)
    return raw if raw is not None else getattr(event, attr)


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
