"""Server-side apply reads the kinds' types (issue 25): built-ins from the models' spec, custom
resources from their schema; and the custom resource strategy's checks around the schema. The
conformance corpus (apply/*, custom/validation/*) holds the same behaviour to kube-apiserver; these
run without it."""

from __future__ import annotations

from typing import Any

import pytest

from pyscaffold_op.apiextensions.strategy import rules_or_blocked, scale_causes
from pyscaffold_op.apimachinery.fielderrors import cause
from pyscaffold_op.envtest.registry import fieldtypes, managed
from pyscaffold_op.envtest.status import StatusError

NOW = "2026-01-01T00:00:00Z"
LATER = "2026-01-01T00:00:05Z"


def _deployment(**spec: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [container]}},
            **spec,
        },
    }


def _request(
    manager: str, now: str = NOW, force: bool = False, kind: str = "Deployment"
) -> managed.ApplyRequest:
    api_version = "apps/v1" if kind == "Deployment" else "v1"
    return managed.ApplyRequest(
        manager=manager,
        now=now,
        schema=None,
        custom=False,
        api_version=api_version,
        kind=kind,
        force=force,
        group="apps" if kind == "Deployment" else "",
        resource="deployments" if kind == "Deployment" else "configmaps",
        name="d",
    )


def test_built_in_list_and_map_types_come_from_the_spec() -> None:
    pod_spec = fieldtypes.child(fieldtypes.kind_schema("v1", "Pod"), "spec")
    containers = fieldtypes.child(pod_spec, "containers")
    assert fieldtypes.list_kind(containers) == ("map", ["name"])
    ports = fieldtypes.child(fieldtypes.items(containers), "ports")
    assert fieldtypes.list_kind(ports) == ("map", ["containerPort", "protocol"])
    assert fieldtypes.list_kind(fieldtypes.child(fieldtypes.object_meta(), "finalizers")) == ("set",)
    assert fieldtypes.list_kind(fieldtypes.child(pod_spec, "tolerations")) == ("atomic",)
    selector = fieldtypes.child(
        fieldtypes.child(fieldtypes.kind_schema("apps/v1", "Deployment"), "spec"), "selector"
    )
    assert fieldtypes.atomic_map(selector) and not fieldtypes.atomic_map(pod_spec)


def test_apply_owns_an_atomic_struct_whole_and_defaults_missing_keys() -> None:
    obj = managed.apply(None, _deployment(), _request("m1"))
    fields = obj["metadata"]["managedFields"][0]["fieldsV1"]
    assert fields["f:spec"]["f:selector"] == {}  # atomic: one leaf, not f:matchLabels
    container = fields["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"c"}']
    assert 'k:{"containerPort":80,"protocol":"TCP"}' in container["f:ports"]


def test_conflicts_name_apply_managers_alone_and_group_paths() -> None:
    first = managed.apply(None, _deployment(replicas=2, paused=False), _request("m1"))
    with pytest.raises(StatusError) as err:
        managed.apply(first, _deployment(replicas=3, paused=True), _request("m2"))
    assert err.value.code == 409
    assert err.value.message == (
        'Apply failed with 2 conflicts: conflicts with "m1":\n- .spec.paused\n- .spec.replicas'
    )
    assert err.value.details == {
        "causes": [
            {"reason": "FieldManagerConflict", "message": 'conflict with "m1"', "field": ".spec.paused"},
            {"reason": "FieldManagerConflict", "message": 'conflict with "m1"', "field": ".spec.replicas"},
        ]
    }


def _cm(**data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}, "data": data}


def test_forced_apply_drops_an_emptied_manager_and_sorts_entries() -> None:
    first = managed.apply(None, _cm(a="1"), _request("zz", kind="ConfigMap"))
    second = managed.apply(first, _cm(a="2"), _request("aa", now=LATER, force=True, kind="ConfigMap"))
    assert [e["manager"] for e in second["metadata"]["managedFields"]] == ["aa"]
    third = managed.apply(second, _cm(a="2"), _request("bb", now=LATER, kind="ConfigMap"))
    entries = third["metadata"]["managedFields"]
    # nothing changed: the new manager's entry has no time, so it sorts first
    assert [(e["manager"], e.get("time")) for e in entries] == [("bb", None), ("aa", LATER)]


def test_a_dropped_list_item_goes_whole() -> None:
    two = _deployment()
    two["spec"]["template"]["spec"]["containers"].append({"name": "side", "image": "busybox"})
    live = managed.apply(None, two, _request("m1"))
    live["spec"]["template"]["spec"]["containers"][1]["imagePullPolicy"] = "Always"  # a default
    after = managed.apply(live, _deployment(), _request("m1"))
    assert [c["name"] for c in after["spec"]["template"]["spec"]["containers"]] == ["c"]


def test_typed_errors_and_omitempty_of_built_ins() -> None:
    with pytest.raises(StatusError) as err:
        managed.apply(None, _deployment(replicas="three"), _request("m1"))
    assert (err.value.code, err.value.reason) == (500, "")
    assert err.value.message == (
        "failed to create typed patch object (/d; apps/v1, Kind=Deployment): "
        ".spec.replicas: expected numeric (int or float), got string"
    )
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d", "labels": {}}, "data": {}}
    applied = managed.apply(None, cm, _request("m1", kind="ConfigMap"))
    assert "data" not in applied and "labels" not in applied["metadata"]
    assert applied["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:data": {},
        "f:metadata": {"f:labels": {}},
    }


SCALE = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.ready"}


def test_scale_paths_are_checked_like_the_strategy() -> None:
    assert scale_causes({"spec": {"replicas": 2}}, SCALE) == []
    assert scale_causes({"spec": {"replicas": -1}}, SCALE)[0]["message"] == (
        "Invalid value: -1: should be a non-negative integer"
    )
    assert scale_causes({"spec": "nope"}, SCALE)[0]["message"] == (
        "Invalid value: 0: .spec.replicas accessor error: nope is of the type string, "
        "expected map[string]interface{}"
    )
    assert scale_causes({"spec": {"replicas": 1.5}}, SCALE)[0]["message"] == (
        "Invalid value: 0: .spec.replicas accessor error: 1.5 is of the type float64, expected int64"
    )
    status_only = scale_causes({"spec": {"replicas": -1}, "status": {"ready": -2}}, SCALE, status=True)
    assert [c["field"] for c in status_only] == [".status.ready"]


def test_cel_rules_are_skipped_after_a_blocking_error_only() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": [{"rule": "self.n <= 10", "message": "too big"}],
                "properties": {"n": {"type": "integer"}},
            }
        },
    }
    obj = {"spec": {"n": 11}}
    invalid = cause("FieldValueInvalid", "spec.n", "x")
    assert [c["message"] for c in rules_or_blocked([invalid], obj, schema)] == [
        'Invalid value: "object": too big'
    ]
    blocked = rules_or_blocked([cause("FieldValueTypeInvalid", "spec.n", "x")], obj, schema)
    assert [c["field"] for c in blocked] == ["<nil>"]
    assert rules_or_blocked([], obj, {"type": "object"}) == []


def test_managed_fields_a_client_writes() -> None:
    live = [
        {"manager": "m", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {}}
    ]
    own = [{**live[0], "manager": "x", "fieldsV1": {"f:data": {"f:a": {}}}}]
    assert managed.written_entries(live, live) is live
    assert managed.written_entries([], live) is None and managed.written_entries([{}], live) is None
    assert managed.written_entries(own, live) == own
    assert managed.written_entries([{"manager": "y"}], live) is live  # does not decode
    assert managed.written_entries([{**own[0], "apiVersion": ""}], live) is live


def test_first_apply_to_an_unmanaged_object_meets_before_first_apply() -> None:
    bare = {**_cm(a="1"), "metadata": {"name": "d"}}  # no managedFields: written untracked
    with pytest.raises(StatusError) as err:
        managed.apply(bare, _cm(a="2"), _request("m1", kind="ConfigMap"))
    assert (
        err.value.message
        == 'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a'
    )
    shared = managed.apply(bare, _cm(b="2"), _request("m1", kind="ConfigMap"))
    managers = [(e["manager"], e["operation"]) for e in shared["metadata"]["managedFields"]]
    assert managers == [("m1", "Apply"), ("before-first-apply", "Update")]
