"""`ResourceInfo.decode` validates with each kind's wire validator (KubeObject's Python hooks left out)
and makes their checks itself: what it returns must be what the whole validator returns, for every
built-in kind and a custom resource, with the type named, without it (a list's items), and wrong."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pydantic
import pytest

from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel, KubeObject
from pyscaffold_op.models import core_v1
from pyscaffold_op.runtime.objects.kinds import ObjectDecodeError, info_for
from tests.test_models import MODULES


class GizmoSpec(KubeModel):
    size: int = 0
    inner: core_v1.ConfigMap | None = None  # a nested object keeps its own hooks


class Gizmo(CustomResource):
    gvk = GroupVersionKind("example.com", "v1", "Gizmo")
    spec: GizmoSpec = GizmoSpec()


def _kinds() -> list[type[KubeObject]]:
    kinds: list[type[KubeObject]] = [Gizmo]
    for name in MODULES:
        module = importlib.import_module(f"pyscaffold_op.models.{name}")
        for value in (getattr(module, n) for n in dir(module) if not n.startswith("_")):
            if isinstance(value, type) and issubclass(value, KubeObject) and "gvk" in value.__dict__:
                kinds.append(value)
    return kinds


KINDS = _kinds()
META = {
    "name": "x",
    "namespace": "ns",
    "uid": "u-1",
    "resourceVersion": "7",
    "creationTimestamp": "2026-12-07T19:06:40Z",
    "labels": {"a": "b"},
    "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u-0"}],
    "managedFields": [{"manager": "m", "operation": "Update", "fieldsV1": {"f:metadata": {}}}],
}


def _same(a: Any, b: Any) -> None:
    assert type(a) is type(b)
    assert a == b
    assert a.model_fields_set == b.model_fields_set
    assert a.metadata.model_fields_set == b.metadata.model_fields_set


def test_there_are_kinds_to_check() -> None:
    assert len(KINDS) > 40


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: f"{k.gvk.api_version}/{k.gvk.kind}")
def test_decode_equals_the_whole_validator(kind: type[KubeObject]) -> None:
    info = info_for(kind)
    named = json.dumps({"apiVersion": kind.gvk.api_version, "kind": kind.gvk.kind, "metadata": META}).encode()
    _same(info.decode(named), kind.model_validate_json(named))
    unnamed = json.dumps({"metadata": META}).encode()  # as a list's items come
    decoded = info.decode(unnamed)
    _same(decoded, kind.model_validate_json(unnamed))
    assert (decoded.api_version, decoded.kind) == (kind.gvk.api_version, kind.gvk.kind)
    for wrong in ({"apiVersion": "other.io/v9"}, {"kind": "Other"}):
        body = json.dumps({"apiVersion": kind.gvk.api_version, "kind": kind.gvk.kind, **wrong}).encode()
        with pytest.raises(ObjectDecodeError, match="does not match"):
            info.decode(body)


def test_a_nested_object_keeps_its_hooks() -> None:
    body = {"apiVersion": "example.com/v1", "kind": "Gizmo", "spec": {"inner": {"metadata": {"name": "c"}}}}
    gizmo = info_for(Gizmo).decode(json.dumps(body).encode())
    assert gizmo.spec.inner is not None and gizmo.spec.inner.kind == "ConfigMap"  # filled by its hook
    body["spec"] = {"inner": {"kind": "Secret"}}
    with pytest.raises(ObjectDecodeError, match="does not match"):
        info_for(Gizmo).decode(json.dumps(body).encode())


def test_a_bad_field_is_reported_as_before() -> None:
    body = json.dumps({"apiVersion": "example.com/v1", "kind": "Gizmo", "spec": {"size": "big"}}).encode()
    with pytest.raises(ObjectDecodeError, match=r"spec\.size") as caught:
        info_for(Gizmo).decode(body)
    assert isinstance(caught.value.__cause__, pydantic.ValidationError)
