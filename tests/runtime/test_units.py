"""Parts that need no server: errors, selectors, metadata access, predicates, handlers, controllerutil,
Request/Result, config loading, logging."""

from __future__ import annotations

import io
import json
import logging

import pytest

from pyscaffold_op.apimachinery import ObjectMeta
from pyscaffold_op.models.core_v1 import ConfigMap, Pod, PodStatus
from pyscaffold_op.runtime import (
    AlreadyExists,
    AnnotationChanged,
    ConfigError,
    Conflict,
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EnqueueRequestsFromMapFunc,
    Funcs,
    GenerationChanged,
    Gone,
    IgnoreStatusChanges,
    Invalid,
    LabelChanged,
    NotFound,
    Request,
    ResourceVersionChanged,
    Result,
    and_,
    controllerutil,
    ignore_not_found,
    load_config,
    not_,
    objmeta,
    or_,
)
from pyscaffold_op.runtime.cache.store import Indexer
from pyscaffold_op.runtime.client.errors import ApiError, error_for
from pyscaffold_op.runtime.controller.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
from pyscaffold_op.runtime.log import reconcile_context, setup_logging
from pyscaffold_op.runtime.objects.kinds import info_for, replace_contents
from pyscaffold_op.testing import eventually

from .widgets import Gadget, Widget, WidgetStatus, widget


class Sink:
    def __init__(self) -> None:
        self.items: list[Request] = []

    def add(self, item: Request) -> None:
        self.items.append(item)


def owned_widget(uid: str = "u1") -> Widget:
    w = widget("owner")
    w.metadata.uid = uid
    return w


# -- request / result / errors ---------------------------------------------------------------------------


def test_request_is_frozen_hashable_and_prints_key() -> None:
    r = Request("ns", "a")
    assert str(r) == "ns/a" and str(Request("", "c")) == "c"
    assert {r, Request("ns", "a")} == {r}
    with pytest.raises(AttributeError):
        r.name = "b"  # type: ignore[misc]


def test_result_requeue_after_accepts_timedelta() -> None:
    from datetime import timedelta

    assert Result(requeue_after=timedelta(milliseconds=250)).requeue_after_seconds == 0.25
    assert Result().is_zero() and not Result(requeue=True).is_zero()


def test_error_mapping_by_status_and_reason() -> None:
    assert isinstance(error_for(404, b'{"reason":"NotFound","message":"x"}'), NotFound)
    assert isinstance(error_for(409, b'{"reason":"AlreadyExists"}'), AlreadyExists)
    assert isinstance(error_for(409, b'{"reason":"Conflict"}'), Conflict)
    assert not isinstance(error_for(409, b'{"reason":"AlreadyExists"}'), Conflict)
    assert isinstance(error_for(410, b"not json"), Gone)
    assert isinstance(error_for(422, None), Invalid)
    assert error_for(503, b"").code == 503
    # A watch ERROR event: the Status code wins over the placeholder HTTP status.
    assert isinstance(error_for(500, b'{"kind":"Status","code":410,"reason":"Expired"}'), Gone)
    err = error_for(404, b'{"message":"pods \\"x\\" not found"}')
    assert "not found" in str(err) and err.code == 404


def test_ignore_not_found() -> None:
    assert ignore_not_found(NotFound()) is None
    assert ignore_not_found(None) is None
    err = Conflict()
    assert ignore_not_found(err) is err
    assert isinstance(err, ApiError)


# -- store --------------------------------------------------------------------------------------


def test_indexer_namespace_owner_and_custom_indexes() -> None:
    store = Indexer()
    a, b = widget("a", "ns1", color_label="red"), widget("b", "ns2")
    a.metadata.owner_references = []
    controllerutil.set_owner_reference(owned_widget("u9"), w := widget("c", "default"))
    for obj in (a, b, w):
        store.put(objmeta.key(obj), obj)
    assert [objmeta.name(o) for o in store.by_index("namespace", "ns1")] == ["a"]
    assert [objmeta.name(o) for o in store.by_index("owner", "u9")] == ["c"]
    store.add_index("size", lambda o: [str(o.spec.size)])
    assert len(store.by_index("size", "1")) == 3
    store.delete("ns1/a")
    assert store.by_index("namespace", "ns1") == []
    assert len(store.by_index("size", "1")) == 2


def test_raw_indexer_decodes_a_new_object_per_read() -> None:
    info = info_for(Widget)
    store = Indexer(decode=info.decode)
    a = widget("a", "ns1", size=3)
    owner = widget("owner", "ns1")
    owner.metadata.uid = "u9"
    controllerutil.set_owner_reference(owner, a)
    store.put(objmeta.key(a), a, info.encode(a))
    first, second = store.get("ns1/a"), store.get("ns1/a")
    assert first == a and first is not a and first is not second
    first.spec.size = 99  # the reader's own object: the store still has what the server sent
    first.metadata.labels = {"x": "y"}
    assert store.get("ns1/a").spec.size == 3 and not store.get("ns1/a").metadata.labels
    assert [o.metadata.name for o in store.by_index("owner", "u9")] == ["a"]
    assert store.index_keys("namespace", "ns1") == ["ns1/a"]
    old = store.put("ns1/a", widget("a", "ns1", size=4), info.encode(widget("a", "ns1", size=4)))
    assert old.spec.size == 3 and store.by_index("owner", "u9") == []  # re-indexed from the new object
    with pytest.raises(ValueError, match="JSON"):
        store.put("ns1/b", widget("b", "ns1"))
    assert (
        store.discard("ns1/a") and not store.discard("ns1/a") and store.index_keys("namespace", "ns1") == []
    )


# -- metadata access across model libraries ------------------------------------------------------------------


def test_replace_contents_fills_the_callers_object() -> None:
    target, source = widget("a"), widget("a", size=7)
    source.metadata.uid = "u"
    replace_contents(target, source)
    assert target.spec.size == 7 and target.metadata.uid == "u"
    p1, p2 = Pod(metadata=ObjectMeta(name="a")), Pod(metadata=ObjectMeta(name="a", uid="z"))
    replace_contents(p1, p2)
    assert p1.metadata.uid == "z"


def test_resource_info_paths() -> None:
    assert (
        info_for(Widget).path("ns", "w", "status") == "/apis/test.pyop.io/v1/namespaces/ns/widgets/w/status"
    )
    assert info_for(Gadget).path("ignored", "g") == "/apis/test.pyop.io/v1/gadgets/g"
    assert info_for(Pod).path(None) == "/api/v1/pods"
    with pytest.raises(TypeError):
        info_for(dict)


# -- predicates ----------------------------------------------------------------------------------------


def _pair(**changes: object) -> UpdateEvent:
    old, new = widget("a"), widget("a")
    old.metadata.generation, new.metadata.generation = 1, changes.get("generation", 1)
    old.metadata.resource_version, new.metadata.resource_version = "1", changes.get("rv", "1")
    new.metadata.labels = changes.get("labels", {})
    new.metadata.annotations = changes.get("annotations", {})
    return UpdateEvent(old, new)


def test_change_predicates() -> None:
    assert GenerationChanged().update(_pair(generation=2))
    assert not GenerationChanged().update(_pair(rv="2"))
    assert GenerationChanged().create(CreateEvent(widget("a")))  # only updates are filtered
    assert ResourceVersionChanged().update(_pair(rv="2"))
    assert not ResourceVersionChanged().update(_pair())
    assert LabelChanged().update(_pair(labels={"x": "y"}))
    assert AnnotationChanged().update(_pair(annotations={"x": "y"}))
    assert not GenerationChanged().update(UpdateEvent(None, widget("a")))


def test_ignore_status_changes_drops_only_status_writes() -> None:
    keep = IgnoreStatusChanges()

    def status_write(obj: Widget) -> Widget:
        new = obj.model_copy(deep=True)
        new.status = WidgetStatus(observed_size=3)
        new.metadata.resource_version = "2"
        new.metadata.generation = 2  # a kind without the status subresource bumps it too
        new.metadata.managed_fields = [{"manager": "op", "operation": "Update", "subresource": "status"}]
        return new

    old = widget("a")
    old.metadata.resource_version, old.metadata.generation = "1", 1
    assert not keep.update(UpdateEvent(old, status_write(old)))
    spec = status_write(old)
    spec.spec.size = 9
    assert keep.update(UpdateEvent(old, spec))
    labelled = status_write(old)
    labelled.metadata.labels = {"x": "y"}
    assert keep.update(UpdateEvent(old, labelled))
    finalized = status_write(old)
    finalized.metadata.finalizers = ["example.com/f"]
    assert keep.update(UpdateEvent(old, finalized))
    assert keep.update(UpdateEvent(old, old))  # a resync replays the same object: reconcile
    assert keep.create(CreateEvent(old)) and keep.delete(DeleteEvent(old))
    # dicts and typed built-in models compare the same way
    d_old = {"metadata": {"name": "a", "resourceVersion": "1"}, "data": {"k": "v"}, "status": {}}
    d_status = {"metadata": {"name": "a", "resourceVersion": "2"}, "data": {"k": "v"}, "status": {"p": 1}}
    d_data = {"metadata": {"name": "a", "resourceVersion": "2"}, "data": {"k": "w"}}
    assert not keep.update(UpdateEvent(d_old, d_status)) and keep.update(UpdateEvent(d_old, d_data))
    p_old = Pod(metadata=ObjectMeta(name="p", resource_version="1"))
    p_status = Pod(metadata=ObjectMeta(name="p", resource_version="2"), status=PodStatus(phase="Running"))
    p_label = Pod(metadata=ObjectMeta(name="p", resource_version="2", labels={"a": "b"}))
    assert not keep.update(UpdateEvent(p_old, p_status)) and keep.update(UpdateEvent(p_old, p_label))


def test_predicate_combinators_and_funcs() -> None:
    gen, lab = GenerationChanged(), LabelChanged()
    both = _pair(generation=2, labels={"a": "b"})
    only_gen = _pair(generation=2)
    assert and_(gen, lab).update(both) and not and_(gen, lab).update(only_gen)
    assert or_(gen, lab).update(only_gen) and not or_(gen, lab).update(_pair())
    assert not_(gen).update(_pair()) and not not_(gen).update(only_gen)
    assert and_(GenerationChanged).update(only_gen)  # classes are accepted too
    f = Funcs(create=lambda e: e.object.metadata.name == "keep")
    assert f.create(CreateEvent(widget("keep"))) and not f.create(CreateEvent(widget("drop")))
    assert f.delete(DeleteEvent(widget("drop"))) and f.generic(GenericEvent(widget("x")))


# -- handlers ------------------------------------------------------------------------------------------


def test_enqueue_for_object() -> None:
    sink = Sink()
    h = EnqueueRequestForObject()
    h.create(CreateEvent(widget("a", "n")), sink)
    h.update(UpdateEvent(widget("a", "n"), widget("a", "n")), sink)
    h.delete(DeleteEvent(widget("b", "n")), sink)
    assert sink.items == [Request("n", "a"), Request("n", "a"), Request("n", "b")]


def test_enqueue_for_owner_matches_group_kind_and_controller_flag() -> None:
    owner = owned_widget("u1")
    pod = Pod(metadata=ObjectMeta(name="p", namespace="default"))
    controllerutil.set_controller_reference(owner, pod)
    cm = ConfigMap(metadata=ObjectMeta(name="c", namespace="default"))
    controllerutil.set_owner_reference(owner, cm)  # not a controller reference
    sink = Sink()
    EnqueueRequestForOwner(Widget).create(CreateEvent(pod), sink)
    EnqueueRequestForOwner(Widget).create(CreateEvent(cm), sink)
    EnqueueRequestForOwner(Widget, only_controller=False).create(CreateEvent(cm), sink)
    EnqueueRequestForOwner(Pod).create(CreateEvent(pod), sink)  # wrong kind: nothing
    assert sink.items == [Request("default", "owner"), Request("default", "owner")]


def test_enqueue_for_owner_update_enqueues_old_and_new_owner() -> None:
    old_owner, new_owner = owned_widget("u1"), widget("other")
    new_owner.metadata.uid = "u2"
    old, new = (
        Pod(metadata=ObjectMeta(name="p", namespace="default")),
        Pod(metadata=ObjectMeta(name="p", namespace="default")),
    )
    controllerutil.set_controller_reference(old_owner, old)
    controllerutil.set_controller_reference(new_owner, new)
    sink = Sink()
    EnqueueRequestForOwner(Widget).update(UpdateEvent(old, new), sink)
    assert sorted(r.name for r in sink.items) == ["other", "owner"]


async def test_map_func_handler_sync_and_async() -> None:
    import asyncio

    sink = Sink()
    EnqueueRequestsFromMapFunc(lambda o: [Request("x", objmeta.name(o))]).create(
        CreateEvent(widget("a")), sink
    )

    async def amap(o: object) -> list[Request]:
        await asyncio.sleep(0)  # a yield: the map really is asynchronous
        return [Request("y", "z")]

    EnqueueRequestsFromMapFunc(amap).generic(GenericEvent(widget("b")), sink)
    await eventually(lambda: len(sink.items) == 2)
    assert sink.items == [Request("x", "a"), Request("y", "z")]


# -- controllerutil ------------------------------------------------------------------------------------------


def test_set_controller_reference_refusals() -> None:
    owner, other = owned_widget("u1"), widget("other")
    other.metadata.uid = "u2"
    child = widget("child")
    controllerutil.set_controller_reference(owner, child)
    with pytest.raises(controllerutil.AlreadyOwnedError):
        controllerutil.set_controller_reference(other, child)
    with pytest.raises(controllerutil.OwnerReferenceError, match="cross-namespace"):
        controllerutil.set_controller_reference(owner, widget("c", "elsewhere"))
    gadget = Gadget.model_validate({"metadata": {"name": "g"}})
    with pytest.raises(controllerutil.OwnerReferenceError, match="cluster-scoped"):
        controllerutil.set_controller_reference(owner, gadget)
    with pytest.raises(controllerutil.OwnerReferenceError, match="uid"):
        controllerutil.set_controller_reference(widget("no-uid"), widget("c"))
    # A cluster-scoped owner may own namespaced objects.
    gadget.metadata.uid = "g1"
    controllerutil.set_controller_reference(gadget, widget("d"))


def test_owner_reference_helpers() -> None:
    owner, child = owned_widget(), widget("c")
    controllerutil.set_owner_reference(owner, child)
    assert controllerutil.has_owner_reference(owner, child)
    assert not controllerutil.has_controller_reference(child)
    controllerutil.set_controller_reference(owner, child)  # upgrades the same owner to controller
    assert controllerutil.has_controller_reference(child) and len(child.metadata.owner_references) == 1
    assert controllerutil.remove_owner_reference(owner, child)
    assert child.metadata.owner_references == []


def test_finalizers() -> None:
    for obj in (widget("a"), Pod(metadata=ObjectMeta(name="p")), {"metadata": {"name": "d"}}):
        assert controllerutil.add_finalizer(obj, "x.io/f")
        assert not controllerutil.add_finalizer(obj, "x.io/f")
        assert controllerutil.contains_finalizer(obj, "x.io/f")
        assert controllerutil.remove_finalizer(obj, "x.io/f")
        assert not controllerutil.remove_finalizer(obj, "x.io/f")
        assert not controllerutil.contains_finalizer(obj, "x.io/f")


def test_merge_patch() -> None:
    mp = controllerutil.merge_patch
    assert mp({"a": 1, "b": {"c": 1, "d": 2}}, {"a": 1, "b": {"c": 2}, "e": [1]}) == {
        "b": {"c": 2, "d": None},
        "e": [1],
    }
    assert mp({"a": 1}, {"a": 1}) == {}


class FakeClient:
    """Just enough of Client for create_or_update."""

    def __init__(self) -> None:
        self.objects: dict[str, Widget] = {}
        self.calls: list[str] = []

    async def get(self, kind: type, name: str, namespace: str | None = None) -> Widget:
        key = f"{namespace}/{name}"
        if key not in self.objects:
            raise NotFound()
        return self.objects[key].model_copy(deep=True)

    async def create(self, obj: Widget) -> Widget:
        self.calls.append("create")
        obj.metadata.resource_version = "1"
        self.objects[objmeta.key(obj)] = obj.model_copy(deep=True)
        return obj

    async def update(self, obj: Widget) -> Widget:
        self.calls.append("update")
        self.objects[objmeta.key(obj)] = obj.model_copy(deep=True)
        return obj


async def test_create_or_update_created_updated_unchanged() -> None:
    client = FakeClient()

    def set_size(obj: Widget) -> None:
        obj.spec.size = 3

    obj, op = await controllerutil.create_or_update(client, widget("a"), set_size)
    assert op == "created" and obj.spec.size == 3
    mine = widget("a")
    obj, op = await controllerutil.create_or_update(client, mine, set_size)
    assert op == "unchanged" and obj is mine and mine.metadata.resource_version == "1"

    async def grow(obj: Widget) -> None:
        obj.spec.size += 1

    obj, op = await controllerutil.create_or_update(client, widget("a"), grow)
    assert op == controllerutil.OperationResult.UPDATED and obj.spec.size == 4
    assert client.calls == ["create", "update"]

    def rename(obj: Widget) -> None:
        obj.metadata.name = "b"

    with pytest.raises(ValueError, match="name"):
        await controllerutil.create_or_update(client, widget("a"), rename)


# -- config, logging --------------------------------------------------------------------------------------


def test_load_config_paths_and_errors(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ConfigError, match="no Kubernetes configuration found"):
        load_config()
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing")
    kc = tmp_path / "kc.yaml"
    kc.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: one\n"
        "clusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:1'}\n"
        "users:\n- name: u\n  user: {token: t}\n"
        "contexts:\n- name: one\n  context: {cluster: c, user: u, namespace: ns1}\n"
        "- name: two\n  context: {cluster: c, user: u}\n"
    )
    assert load_config(kc).namespace == "ns1"
    assert load_config(kc, context="two").context_name == "two"
    with pytest.raises(ConfigError, match="three"):
        load_config(kc, context="three")
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'nope'}:{kc}")
    assert load_config().server == "http://127.0.0.1:1"


def test_setup_logging_json_carries_reconcile_context() -> None:
    buf = io.StringIO()
    handler = setup_logging("debug", "json", stream=buf)
    try:
        with reconcile_context("widget", Request("ns", "a"), "rid1", ("test.pyop.io", "Widget")):
            logging.getLogger("user.code").info("hello %s", "world", extra={"size": 3})
        line = json.loads(buf.getvalue().strip().splitlines()[-1])
        assert line["msg"] == "hello world" and line["controller"] == "widget"
        assert line["namespace"] == "ns" and line["name"] == "a" and line["size"] == 3
        assert line["reconcileID"] == "rid1" and line["level"] == "info" and line["logger"] == "user.code"
        assert line["controllerGroup"] == "test.pyop.io" and line["controllerKind"] == "Widget"
        assert line["Widget"] == {"name": "a", "namespace": "ns"}
        assert not {"request", "reconcile_id", "name_"} & line.keys()  # one key style: controller-runtime's
        setup_logging("info", "text", stream=buf)
        logging.getLogger("x").warning("plain", extra={"k": "v"})
        assert buf.getvalue().rstrip().endswith("plain k=v")
        with pytest.raises(ValueError):
            setup_logging("info", "xml")
    finally:
        logging.getLogger().removeHandler(handler)
        for h in list(logging.getLogger().handlers):
            if getattr(h, "_pyop", False):
                logging.getLogger().removeHandler(h)


# -- ManagerOptions --------------------------------------------------------------------------------------


def test_manager_takes_its_options_as_one_object() -> None:
    from pyscaffold_op.runtime import FakeClock, Manager, ManagerOptions, RestConfig

    cfg = RestConfig(server="http://127.0.0.1:1")
    clock = FakeClock()
    options = ManagerOptions(graceful_shutdown_timeout=3.0, clock=clock)
    mgr = Manager(cfg, options)
    assert mgr.options is options and mgr.clock is clock and mgr.elector is None
    assert not hasattr(mgr, "graceful_shutdown_timeout")  # held by the options, not copied
    with pytest.raises(ValueError, match="needs leader_election_id"):
        Manager(cfg, ManagerOptions(leader_election=True))
    with pytest.raises(TypeError):
        ManagerOptions("0")  # type: ignore[misc]  # keyword-only
    with pytest.raises(TypeError):  # the keywords of before ManagerOptions are gone
        Manager(cfg, leader_election=True, leader_election_id="x")  # type: ignore[call-arg]
    mgr = Manager(cfg, ManagerOptions(leader_election=True, leader_election_id="x", retry_period=0.5))
    assert mgr.elector is not None and mgr.elector.retry_period == 0.5


async def test_patch_options_are_keyword_only_and_checked() -> None:
    from pyscaffold_op.runtime import Client, RestConfig
    from pyscaffold_op.runtime.client.client import PatchRequest
    from pyscaffold_op.runtime.client.rest import RestTransport

    client = Client(RestTransport(RestConfig(server="http://127.0.0.1:1")))
    with pytest.raises(TypeError, match="patchtype"):
        await client.patch(Widget, "w", {}, patchtype="merge")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="bogus"):
        await client.status().patch(Widget, "w", {}, bogus=True)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="force= is only valid"):
        await client.patch(Widget, "w", {}, force=True)
    req = PatchRequest(kind=Widget, name="w", subresource="status", dry_run=True)
    assert (req.patch_type, req.field_manager, req.dry_run) == ("merge", None, True)


def test_patch_bodies_are_json_with_the_standard_librarys_key_rules() -> None:
    from pyscaffold_op.runtime.client.client import _patch_body

    body = _patch_body(
        info_for(Widget), {"status": {"observed": 3, "at": 1.5, "tags": [None, "x"]}, "n": {1: 2}}
    )
    assert json.loads(body) == {"status": {"observed": 3, "at": 1.5, "tags": [None, "x"]}, "n": {"1": 2}}
    assert json.loads(_patch_body(info_for(Widget), {True: 1})) == {"true": 1}  # as json.dumps writes it
    assert _patch_body(info_for(Widget), b'{"raw": 1}') == b'{"raw": 1}'
    with pytest.raises(TypeError):
        _patch_body(info_for(Widget), {"obj": object()})
