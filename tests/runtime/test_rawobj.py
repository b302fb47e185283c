"""Watch events carried as JSON (`RawObject`): what the informer, predicates and handlers decide from the
metadata alone, and what still gets a typed object. No server: watch lines go straight into an informer."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

from pyscaffold_op.runtime import (
    EnqueueRequestForObject,
    GenerationChanged,
    IgnoreStatusChanges,
    Request,
    ResourceVersionChanged,
)
from pyscaffold_op.runtime.cache.informer import Informer
from pyscaffold_op.runtime.controller.event import CreateEvent, UpdateEvent, raw_of
from pyscaffold_op.runtime.controller.source import _InformerAdapter
from pyscaffold_op.runtime.objects.kinds import ObjectDecodeError, info_for
from pyscaffold_op.runtime.objects.rawobj import RawObject, same_beyond_status

from .widgets import Widget


def wire(
    name: str = "a",
    rv: str = "1",
    *,
    generation: int = 1,
    size: int = 1,
    status: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    finalizers: list[str] | None = None,
    managed: str = "op",
) -> dict[str, Any]:
    """A Widget as the API server sends it."""
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "uid": f"uid-{name}",
        "resourceVersion": rv,
        "generation": generation,
        "labels": labels or {"app": "w"},
        "managedFields": [{"manager": managed, "operation": "Update", "fieldsType": "FieldsV1"}],
    }
    if finalizers:
        meta["finalizers"] = finalizers
    obj = {"apiVersion": "test.pyop.io/v1", "kind": "Widget", "metadata": meta, "spec": {"size": size}}
    if status is not None:
        obj["status"] = status
    return obj


def raw(obj: dict[str, Any]) -> RawObject:
    return RawObject(json.dumps(obj).encode(), info_for(Widget).decode)


def line(kind: str, obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": kind, "object": obj}).encode()


class Sink:
    def __init__(self) -> None:
        self.items: list[Request] = []

    def add(self, item: Request) -> None:
        self.items.append(item)


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every full decode of a Widget."""
    seen: list[bytes] = []
    original = Widget.model_validate_json

    def counting(data: Any, **kwargs: Any) -> Any:
        seen.append(bytes(data))
        return original(data, **kwargs)

    monkeypatch.setattr(Widget, "model_validate_json", counting)
    info = info_for(Widget)
    wire = info._wire_validator  # what ResourceInfo.decode validates with

    class CountingValidator:
        def validate_json(self, data: Any) -> Any:
            seen.append(bytes(data))
            return wire.validate_json(data)

    monkeypatch.setitem(info.__dict__, "_wire_validator", CountingValidator())
    return seen


def test_status_only_updates_are_dropped_from_the_json(decodes: list[bytes]) -> None:
    keep = IgnoreStatusChanges()
    old = wire(rv="1")
    status_write = wire(rv="2", generation=2, status={"observedSize": 1}, managed="status-writer")
    assert not keep.update(UpdateEvent(raw(old), raw(status_write)))
    assert keep.update(UpdateEvent(raw(old), raw(wire(rv="2", size=9))))  # spec
    assert keep.update(UpdateEvent(raw(old), raw(wire(rv="2", labels={"app": "x"}))))
    assert keep.update(UpdateEvent(raw(old), raw(wire(rv="2", finalizers=["example.com/f"]))))
    same = raw(old)
    assert keep.update(UpdateEvent(same, same))  # a resync replays the object: reconcile
    assert keep.update(UpdateEvent(raw(old), raw(old)))  # the same version twice: a resync too
    assert decodes == []  # all of it from the JSON


def test_generation_and_version_predicates_read_the_metadata(decodes: list[bytes]) -> None:
    old = raw(wire(rv="1", generation=1))
    assert GenerationChanged().update(UpdateEvent(old, raw(wire(rv="2", generation=2))))
    assert not GenerationChanged().update(UpdateEvent(old, raw(wire(rv="2", status={"observedSize": 1}))))
    assert ResourceVersionChanged().update(UpdateEvent(old, raw(wire(rv="2"))))
    assert not ResourceVersionChanged().update(UpdateEvent(old, raw(wire(rv="1"))))
    assert decodes == []


def test_same_beyond_status_compares_values_not_bytes() -> None:
    a = b'{"metadata":{"name":"a","resourceVersion":"1","labels":{"x":"1","y":"2"}},"spec":{"n":1}}'
    reordered = b'{"spec":{"n":1.0},"metadata":{"labels":{"y":"2","x":"1"},"name":"a","resourceVersion":"7"}}'
    with_data = (
        b'{"metadata":{"name":"a","resourceVersion":"1","labels":{"x":"1","y":"2"}},"spec":{"n":1},"data":{}}'
    )
    renamed = b'{"metadata":{"name":"b","resourceVersion":"1","labels":{"x":"1","y":"2"}},"spec":{"n":1}}'

    def ro(data: bytes) -> RawObject:
        return RawObject(data, json.loads)

    assert same_beyond_status(ro(a), ro(reordered))
    assert not same_beyond_status(ro(a), ro(with_data))  # a field appeared
    assert not same_beyond_status(ro(a), ro(renamed))
    assert same_beyond_status(ro(b'{"spec":{}}'), ro(b'{"spec":{},"status":{"p":1}}'))


def test_events_decode_once_on_first_read(decodes: list[bytes]) -> None:
    obj = raw(wire(rv="3", size=4))
    event = CreateEvent(obj)
    assert raw_of(event) is obj and not obj.decoded
    first = event.object
    assert isinstance(first, Widget) and first.spec.size == 4
    assert event.object is first and len(decodes) == 1  # shared by every later reader
    event.object = Widget()  # a handler may replace it
    assert raw_of(event) is None and event.object.spec.size == 1


def test_informer_to_queue_without_decoding(decodes: list[bytes]) -> None:
    """ADDED, then the controller's own status write: one request, and not one full decode."""
    informer = Informer(None, info_for(Widget))  # type: ignore[arg-type]  # no transport: lines come by hand
    sink = Sink()
    informer.add_event_handler(_InformerAdapter(EnqueueRequestForObject(), sink, (IgnoreStatusChanges(),)))
    informer._handle_line(line("ADDED", wire(rv="5")))
    informer._handle_line(line("MODIFIED", wire(rv="6", status={"observedSize": 1}, managed="s")))
    assert sink.items == [Request("default", "a")]
    assert informer.resource_version == "6" and decodes == []
    informer._handle_line(line("MODIFIED", wire(rv="7", size=2)))
    informer._handle_line(line("DELETED", wire(rv="8", size=2)))
    assert sink.items == [Request("default", "a")] * 3 and decodes == []
    assert len(informer.store) == 0


def test_typed_handlers_and_custom_indexes_still_get_objects(decodes: list[bytes]) -> None:
    informer = Informer(None, info_for(Widget))  # type: ignore[arg-type]
    informer.add_index("size", lambda w: [str(w.spec.size)])
    seen: list[tuple[str, Any, Any]] = []

    class Typed:
        def on_add(self, obj: Any, initial: bool) -> None:
            seen.append(("add", obj, initial))

        def on_update(self, old: Any, new: Any) -> None:
            seen.append(("update", old, new))

        def on_delete(self, obj: Any, unknown: bool) -> None:
            seen.append(("delete", obj, unknown))

    informer.add_event_handler(Typed())
    informer._handle_line(line("ADDED", wire(rv="5", size=3)))
    informer._handle_line(line("MODIFIED", wire(rv="6", size=4)))
    informer._handle_line(line("DELETED", wire(rv="7", size=4)))
    assert [s[0] for s in seen] == ["add", "update", "delete"]
    assert all(isinstance(o, Widget) for s in seen for o in s[1:] if not isinstance(o, bool))
    assert seen[1][1].spec.size == 3 and seen[1][2].spec.size == 4
    assert informer.store.index_keys("size", "4") == []  # deleted
    informer._handle_line(line("ADDED", wire("b", rv="8", size=5)))
    assert informer.store.index_keys("size", "5") == ["default/b"]


def test_an_object_the_model_rejects(decodes: list[bytes]) -> None:
    """Without typed handlers the object is cached and the error comes with the read (the reconcile
    fails and is retried); with one, the event is skipped as before."""
    bad = wire(rv="5")
    bad["spec"]["size"] = "large"
    lazy = Informer(None, info_for(Widget))  # type: ignore[arg-type]
    sink = Sink()
    lazy.add_event_handler(_InformerAdapter(EnqueueRequestForObject(), sink, ()))
    lazy._handle_line(line("ADDED", bad))
    assert sink.items == [Request("default", "a")]
    with pytest.raises(ObjectDecodeError, match=r"spec\.size: Input should be a valid integer") as err:
        lazy.store.get("default/a")
    assert isinstance(err.value.__cause__, pydantic.ValidationError)

    eager = Informer(None, info_for(Widget))  # type: ignore[arg-type]
    eager.add_event_handler(_InformerAdapter(EnqueueRequestForObject(), Sink(), ()))
    eager.add_index("size", lambda w: [str(w.spec.size)])
    eager._handle_line(line("ADDED", bad))
    assert len(eager.store) == 0 and eager.resource_version == "5"


def test_owner_handler_reads_owner_references_from_the_json(decodes: list[bytes]) -> None:
    from pyscaffold_op.runtime import EnqueueRequestForOwner

    def owned(rv: str, *owners: tuple[str, bool]) -> dict[str, Any]:
        obj = wire("child", rv)
        obj["metadata"]["ownerReferences"] = [
            {"apiVersion": "test.pyop.io/v1", "kind": "Widget", "name": n, "uid": f"u-{n}", "controller": c}
            for n, c in owners
        ]
        return obj

    informer = Informer(None, info_for(Widget))  # type: ignore[arg-type]
    sink, every = Sink(), Sink()
    informer.add_event_handler(_InformerAdapter(EnqueueRequestForOwner(Widget), sink, ()))
    informer.add_event_handler(
        _InformerAdapter(EnqueueRequestForOwner(Widget, only_controller=False), every, ())
    )
    informer._handle_line(line("ADDED", owned("5", ("boss", True), ("peer", False))))
    assert sink.items == [Request("default", "boss")]
    assert sorted(every.items, key=str) == [Request("default", "boss"), Request("default", "peer")]
    informer._handle_line(line("MODIFIED", owned("6", ("new-boss", True))))  # the controller changed
    assert sorted(sink.items[1:], key=str) == [Request("default", "boss"), Request("default", "new-boss")]
    informer._handle_line(line("DELETED", owned("7", ("new-boss", True))))
    assert sink.items[-1] == Request("default", "new-boss")
    assert decodes == [] and informer.store.index_keys("owner", "u-new-boss") == []
