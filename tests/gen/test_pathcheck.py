"""`make manifests` refuses a printer column, `+listMapKey` or CEL `self.x` naming a field the schema
does not have (issue 39: kopf's `status.create_fn` is `createFn` on the wire), says where, and
suggests the camelCase spelling; what may be fine (unknown fields kept, maps, metadata) passes.
kube-apiserver judges the CEL half (it refuses the rule) and shows the column half is pyop's lint
(it accepts the column)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pyscaffold_op.dev.oracles import missing_reason, oracle_bin
from pyscaffold_op.errors import GenerateError
from pyscaffold_op.gen import generate_manifests
from pyscaffold_op.gen.pathcheck import cel_problems, column_problem, list_key_problems

KIND = """\
from pydantic import Field

from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel


class Entry(KubeModel):
    entry_name: str
    value: str = ""


class ThingSpec(KubeModel):
    {spec_marker}
    entries: list[Entry] = Field(default_factory=list)


class ThingStatus(KubeModel):
    create_fn: dict[str, str] | None = None


{kind_markers}class Thing(CustomResource):
    gvk = GroupVersionKind("demo.example.com", "v1", "Thing")
    spec: ThingSpec = ThingSpec()
    status: ThingStatus | None = None
"""


def kind(spec_marker: str = "", kind_markers: str = "") -> str:
    return KIND.format(spec_marker=spec_marker or "# +optional", kind_markers=kind_markers)


def generate(project: Any, source: str) -> None:
    builder = project()
    builder.api("demo", "v1", "Thing", "thing_types", source)
    generate_manifests(builder.root)


def test_a_printer_column_on_the_python_name_is_refused_with_the_wire_name(project: Any) -> None:
    column = '# +kubebuilder:printcolumn:name="Created",type="string",JSONPath=".status.create_fn"\n'
    with pytest.raises(GenerateError) as err:
        generate(project, kind(kind_markers=column))
    message = str(err.value)
    assert "thing_types.py:" in message and "printcolumn 'Created' JSONPath=.status.create_fn" in message
    assert "did you mean 'createFn'? (fields are camelCase on the wire" in message


def test_a_list_map_key_on_the_python_name_is_refused(project: Any) -> None:
    marker = "# +listType=map\n    # +listMapKey=entry_name"
    with pytest.raises(
        GenerateError, match=r"spec\.entries: \+listMapKey=entry_name: .*did you mean 'entryName'"
    ):
        generate(project, kind(spec_marker=marker))


def test_a_cel_rule_on_the_python_name_is_refused(project: Any) -> None:
    rule = '# +kubebuilder:validation:XValidation:rule="!has(self.status) || !has(self.status.create_fn)"\n'
    with pytest.raises(GenerateError) as err:
        generate(project, kind(kind_markers=rule))
    message = str(err.value)
    assert "would be rejected (undefined field)" in message
    assert "self.status has no field 'create_fn'" in message and "did you mean 'createFn'" in message


def test_the_right_spellings_generate(project: Any) -> None:
    markers = (
        '# +kubebuilder:printcolumn:name="Created",type="string",JSONPath=".status.createFn"\n'
        '# +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"\n'
        '# +kubebuilder:printcolumn:name="First",type="string",JSONPath=".spec.entries[0].entryName"\n'
        '# +kubebuilder:validation:XValidation:rule="!has(self.status) || !has(self.status.createFn)"\n'
    )
    generate(project, kind(spec_marker="# +listType=map\n    # +listMapKey=entryName", kind_markers=markers))


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "port": {"x-kubernetes-int-or-string": True},
                "size": {"type": "integer"},
            },
        },
        "status": {"type": "object", "properties": {"createFn": {"type": "string"}}},
    },
}


@pytest.mark.parametrize(
    "path",
    [
        ".spec.free.anything",  # unknown fields kept: a column may find one
        ".spec.labels.app",  # a map
        ".spec.port.x",  # int-or-string: not judged
        ".metadata.labels.app",
        '.status.conditions[?(@.type=="Ready")].status',  # a filter: not judged
        ".spec..size",
    ],
)
def test_what_may_be_there_is_not_judged(path: str) -> None:
    schema = copy.deepcopy(SCHEMA)
    schema["properties"]["status"]["x-kubernetes-preserve-unknown-fields"] = True
    assert column_problem(schema, path) is None


def test_a_step_into_a_scalar_is_a_mistake() -> None:
    assert column_problem(SCHEMA, ".spec.size.value") == ".spec.size is an integer: it has no field 'value'"
    assert column_problem(SCHEMA, ".metadata.creation") is not None


def test_cel_is_stricter_than_columns_as_kube_apiserver_is() -> None:
    spec = SCHEMA["properties"]["spec"]
    assert column_problem(SCHEMA, ".spec.free.x") is None
    rule_schema = {**spec, "x-kubernetes-validations": [{"rule": "self.free.x == 1 && self.labels.y == 'a'"}]}
    [problem] = cel_problems({"type": "object", "properties": {"spec": rule_schema}})
    assert problem.startswith(
        "spec: rule [0] `self.free.x == 1 && self.labels.y == 'a'`: self.free has no field 'x'"
    )
    ok = {
        **spec,
        "x-kubernetes-validations": [{"rule": "self.size > 0 && 'self.nope' != '' && self.free.size() > 0"}],
    }
    assert cel_problems({"type": "object", "properties": {"spec": ok}}) == []
    assert list_key_problems(SCHEMA) == []


KUBE_APISERVER, ETCD = oracle_bin("kube-apiserver"), oracle_bin("etcd")


@pytest.mark.oracle
@pytest.mark.skipif(KUBE_APISERVER is None or ETCD is None, reason=missing_reason("kube-apiserver"))
def test_kube_apiserver_refuses_the_rule_and_accepts_the_column() -> None:
    from pyscaffold_op.envtest.controlplane import ControlPlane, ControlPlaneError

    assert KUBE_APISERVER is not None

    def crd(name: str, version: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{name}s.example.com"},
            "spec": {
                "group": "example.com",
                "names": {"kind": name.title(), "plural": f"{name}s", "singular": name, "listKind": "L"},
                "scope": "Namespaced",
                "versions": [{"name": "v1", "served": True, "storage": True, **version}],
            },
        }

    column = {"name": "C", "type": "string", "jsonPath": ".status.create_fn"}
    schema = copy.deepcopy(SCHEMA)
    with ControlPlane(assets=KUBE_APISERVER.parent) as plane:
        assert column_problem(schema, ".status.create_fn") is not None  # pyop: a mistake; the server:
        plane.install_crds(
            [crd("column", {"schema": {"openAPIV3Schema": schema}, "additionalPrinterColumns": [column]})]
        )
        for rule in ("self.status.create_fn == ''", "self.spec.free.x == 1"):
            ruled = {**copy.deepcopy(SCHEMA), "x-kubernetes-validations": [{"rule": rule}]}
            assert cel_problems(ruled)
            with pytest.raises(ControlPlaneError, match="undefined field"):
                plane.install_crds([crd("rule", {"schema": {"openAPIV3Schema": ruled}})])
