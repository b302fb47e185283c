"""Markers copied from the kubebuilder book and Kubernetes' declarative validation, with
controller-gen's semantics (issue 15, item 7); `--max-desc-len`; the version annotation."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import Field
from typer.testing import CliRunner

from pyscaffold_op import __version__
from pyscaffold_op.apiextensions.crdvalidation import check_crd, check_schema
from pyscaffold_op.apiextensions.rules import validate_rules
from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel
from pyscaffold_op.errors import GenerateError
from pyscaffold_op.gen.crd import VERSION_ANNOTATION, build_crd
from pyscaffold_op.gen.descriptions import truncate, truncate_descriptions
from pyscaffold_op.gen.markers import parse_marker
from pyscaffold_op.gen.schema import SchemaConverter
from tests.gen.conftest import ProjectBuilder

# ------------------------------------------------------------------ syntax


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("kubebuilder:default:=Allow", "Allow"),
        ("kubebuilder:default:={a: 1}", {"a": 1}),
        ("kubebuilder:validation:Minimum:=3", 3),
        ('default="Cluster"', "Cluster"),
        ("default=[80,443]", [80, 443]),
        ('default={"policy": "delete"}', {"policy": "delete"}),
        ("default=ref(DefaultPolicy)", None),
        ("kubebuilder:validation:ExactlyOneOf=http;https;grpc", ["http", "https", "grpc"]),
        ("kubebuilder:ac:generate=true", True),
        ("kubebuilder:skip", True),
        ("k8s:immutable", True),
        ('kubebuilder:title="Replica Count"', "Replica Count"),
    ],
)
def test_book_syntax(text: str, value: Any) -> None:
    marker = parse_marker(text, "f.py:1")
    assert marker is not None and marker.value == value


def test_default_takes_only_json() -> None:
    with pytest.raises(GenerateError, match=r"f\.py:1: \+default: 'Cluster' is not JSON"):
        parse_marker("default=Cluster", "f.py:1")


def test_external_docs_arguments() -> None:
    marker = parse_marker('kubebuilder:externalDocs:url="https://e.com/x",description="Docs"', "f.py:1")
    assert marker is not None and marker.args == {"url": "https://e.com/x", "description": "Docs"}


# ------------------------------------------------------------------ field markers


class Inner(KubeModel):
    a: int = 0


class Book(KubeModel):
    # +kubebuilder:default:=Allow
    policy: str | None = None
    # +default="Cluster"
    scope: str | None = None
    # +default=3
    # +kubebuilder:default=5
    replicas: int | None = None
    # +default=ref(DefaultMode)
    mode: str | None = None
    # +k8s:required
    name: str = "x"
    # +k8s:optional
    kind: str
    # +k8s:immutable
    # +k8s:required
    port: int = 80
    # +k8s:immutable
    target: str | None = None
    # +kubebuilder:title="Replica Count"
    titled: int = 1
    # +kubebuilder:externalDocs:url="https://example.com/docs",description="More"
    documented: str = ""
    # +kubebuilder:validation:XPreserveUnknownFields
    raw: Inner = Field(default_factory=Inner)
    # +kubebuilder:validation:XEmbeddedResource
    # +kubebuilder:pruning:PreserveUnknownFields
    template: dict[str, Any] = Field(default_factory=dict)
    # +structType=atomic
    inner: Inner = Field(default_factory=Inner)


def test_book_field_markers() -> None:
    s = SchemaConverter().model_schema(Book)
    p = s["properties"]
    assert p["policy"] == {"default": "Allow", "type": "string"}
    assert p["scope"] == {"default": "Cluster", "type": "string"}
    assert p["replicas"]["default"] == 5  # +kubebuilder:default stomps +default, as in controller-gen
    assert "default" not in p["mode"]
    assert sorted(s["required"]) == ["name", "port"]
    assert p["port"]["x-kubernetes-validations"] == [
        {"message": "field is immutable", "rule": "self == oldSelf"}
    ]
    assert p["target"]["x-kubernetes-validations"] == [
        {"message": "field is immutable", "rule": "self == oldSelf"}
    ]
    # only the optional immutable field gets the parent's once-set rule
    assert s["x-kubernetes-validations"] == [
        {"message": "field target is immutable once set", "rule": "!has(oldSelf.target) || has(self.target)"}
    ]
    assert p["titled"]["title"] == "Replica Count"
    assert p["documented"]["externalDocs"] == {"description": "More", "url": "https://example.com/docs"}
    assert p["raw"]["x-kubernetes-preserve-unknown-fields"] is True
    assert p["template"]["x-kubernetes-embedded-resource"] is True
    assert p["inner"]["x-kubernetes-map-type"] == "atomic"
    assert check_schema(s) == []


def test_immutable_rules_hold_on_updates() -> None:
    s = SchemaConverter().model_schema(Book)
    old = {"name": "x", "port": 80, "target": "a"}
    changed = validate_rules({**old, "port": 81}, s, old)
    assert [(c["field"], c["message"]) for c in changed] == [
        ("port", 'Invalid value: "integer": field is immutable')
    ]
    assert [c["field"] for c in validate_rules({**old, "target": "b"}, s, old)] == ["target"]
    removed = validate_rules({"name": "x", "port": 80}, s, old)
    assert [c["message"] for c in removed] == ['Invalid value: "object": field target is immutable once set']
    unset = {"name": "x", "port": 80}
    assert validate_rules({**unset, "target": "b"}, s, unset) == []  # unset -> set is allowed
    assert validate_rules(old, s, old) == []


class StructOnScalar(KubeModel):
    # +structType=atomic
    name: str = ""


def test_struct_type_needs_a_model() -> None:
    with pytest.raises(GenerateError, match=r"\+structType must be granular or atomic, on a model field"):
        SchemaConverter().model_schema(StructOnScalar)


# ------------------------------------------------------------------ one-of markers


# +kubebuilder:validation:XValidation:rule="true",message="first"
# +kubebuilder:validation:ExactlyOneOf=http;https
# +kubebuilder:validation:AtLeastOneOf=http;grpc
# +kubebuilder:validation:AtMostOneOf=grpc;https
class Protocol(KubeModel):
    http: Inner | None = None
    https: Inner | None = None
    grpc: Inner | None = None


# +kubebuilder:validation:AtMostOneOf=a;b
class RequiredInGroup(KubeModel):
    a: int
    b: int | None = None


# +kubebuilder:validation:AtMostOneOf=a.b;c
class NestedInGroup(KubeModel):
    c: int | None = None


# +kubebuilder:validation:ExactlyOneOf=a;nope
class UnknownInGroup(KubeModel):
    a: int | None = None


def test_one_of_rules_as_controller_gen_writes_them() -> None:
    s = SchemaConverter().model_schema(Protocol)
    # XValidation first, then AtMostOneOf, ExactlyOneOf, AtLeastOneOf (controller-gen's priorities)
    assert s["x-kubernetes-validations"] == [
        {"message": "first", "rule": "true"},
        {
            "message": "at most one of the fields in [grpc https] may be set",
            "rule": "[has(self.grpc),has(self.https)].filter(x,x==true).size() <= 1",
        },
        {
            "message": "exactly one of the fields in [http https] must be set",
            "rule": "[has(self.http),has(self.https)].filter(x,x==true).size() == 1",
        },
        {
            "message": "at least one of the fields in [http grpc] must be set",
            "rule": "[has(self.http),has(self.grpc)].filter(x,x==true).size() >= 1",
        },
    ]
    assert check_schema(s) == []
    assert validate_rules({"http": {}}, s) == []
    failed = [c["message"] for c in validate_rules({"http": {}, "https": {}}, s)]
    assert failed == ['Invalid value: "object": exactly one of the fields in [http https] must be set']
    failed = [c["message"] for c in validate_rules({"grpc": {}, "https": {}}, s)]
    assert failed == ['Invalid value: "object": at most one of the fields in [grpc https] may be set']


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            RequiredInGroup,
            r"field a is part of a \+kubebuilder:validation:AtMostOneOf constraint and cannot be required",
        ),
        (NestedInGroup, r"cannot reference nested fields: a\.b"),
        (UnknownInGroup, r"names 'nope', not a field of UnknownInGroup"),
    ],
)
def test_one_of_errors(model: type, message: str) -> None:
    with pytest.raises(GenerateError, match=message):
        SchemaConverter().model_schema(model)


# ------------------------------------------------------------------ kind markers and annotation


class DocSpec(KubeModel):
    size: int = 1
    """The size of the thing. It is measured in units. More text follows here."""


# +kubebuilder:ac:generate=true
# +kubebuilder:externalDocs:url="https://example.com/gizmo",description="CRD reference"
# +kubebuilder:title="Gizmo"
# +kubebuilder:object:root=true
class Gizmo(CustomResource):
    """Gizmo is the Schema for the gizmos API."""

    gvk = GroupVersionKind("demo.example.com", "v1", "Gizmo")
    plural = "gizmos"
    spec: DocSpec = Field(default_factory=DocSpec)


def test_root_type_markers_and_version_annotation() -> None:
    crd = build_crd([Gizmo])
    root = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert root["externalDocs"] == {"description": "CRD reference", "url": "https://example.com/gizmo"}
    assert root["title"] == "Gizmo"
    assert crd["metadata"]["annotations"] == {VERSION_ANNOTATION: __version__}
    assert check_crd(crd) == []


# ------------------------------------------------------------------ --max-desc-len


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("Short.", 10, "Short."),
        ("One sentence. Two sentences.", 20, "One sentence."),
        ("No terminal here at all", 7, "No term"),
        ("Is it? Yes! More", 12, "Is it? Yes!"),
        ("Ends。Then more text", 8, "Ends。"),  # 。 is three bytes: the budget counts bytes, like Go
        ("ééééé", 3, "é"),  # a cut inside a character drops the character
        (".leading only terminal", 5, ".lead"),  # a terminal at index 0 is not a sentence end
    ],
)
def test_truncate(text: str, limit: int, expected: str) -> None:
    assert truncate(text, limit) == expected


def test_truncate_descriptions_walks_the_schema() -> None:
    schema = {
        "description": "Root. More.",
        "properties": {"a": {"description": "Alpha. Beta.", "items": {"description": "Item. Xyz."}}},
        "additionalProperties": {"description": "Extra. Y."},
        "anyOf": [{"description": "Branch. Z."}],
    }
    truncate_descriptions(schema, 8)
    assert schema == {
        "description": "Root.",
        "properties": {"a": {"description": "Alpha.", "items": {"description": "Item."}}},
        "additionalProperties": {"description": "Extra."},
        "anyOf": [{"description": "Branch."}],
    }
    truncate_descriptions(schema, 0)
    assert "description" not in repr(schema)


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


DOC_KIND = '''
from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel


class WidgetSpec(KubeModel):
    size: int = 1
    """The size of the widget. It is measured in units."""


class Widget(CustomResource):
    """Widget is the Schema for the widgets API. It has a long description."""

    gvk = GroupVersionKind("apps.example.com", "v1", "Widget")
    plural = "widgets"
    spec: WidgetSpec = WidgetSpec()
'''


def test_cli_max_desc_len(project: Callable[..., ProjectBuilder], monkeypatch: pytest.MonkeyPatch) -> None:
    from pyscaffold_op.cli import app

    built = project().api("apps", "v1", "Widget", "widget_types", DOC_KIND)
    monkeypatch.chdir(built.root)
    runner = CliRunner()
    result = runner.invoke(app, ["generate", "crd", "--max-desc-len", "30"])
    assert result.exit_code == 0, result.output
    crd = yaml.safe_load((built.root / "config/crd/bases/apps.example.com_widgets.yaml").read_text())
    root = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert root["description"] == "Widget is the Schema for the w"  # no sentence end within 30 bytes
    assert root["properties"]["spec"]["properties"]["size"]["description"] == "The size of the widget."
    assert root["properties"]["kind"]["description"] == "Kind is a string value represe"
    result = runner.invoke(app, ["generate", "crd", "--max-desc-len", "0"])
    assert result.exit_code == 0, result.output
    assert "description" not in (built.root / "config/crd/bases/apps.example.com_widgets.yaml").read_text()
    before = _tree(built.root)
    result = runner.invoke(app, ["generate", "crd", "--max-desc-len", "-1"])
    assert result.exit_code == 2
    assert _tree(built.root) == before


def test_skip_marker_leaves_a_package_out(project: Callable[..., ProjectBuilder]) -> None:
    from pyscaffold_op.gen import render_crds

    built = project().api("apps", "v1", "Widget", "widget_types", DOC_KIND)
    assert [p.name for p in render_crds(built.root)] == ["apps.example.com_widgets.yaml"]
    init = built.root / "src/demo/api/v1/__init__.py"
    init.write_text("# +kubebuilder:skip\n" + init.read_text())
    assert render_crds(built.root) == {}
