# ruff: noqa: E501 - marker comments and expected schemas read best on one line
"""Markers: controller-gen's syntax, each field and kind marker, and the errors."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field

from pyscaffold_op import __version__
from pyscaffold_op.apiextensions.crdvalidation import check_crd, check_schema
from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel
from pyscaffold_op.errors import GenerateError
from pyscaffold_op.gen.crd import VERSION_ANNOTATION, build_crd
from pyscaffold_op.gen.markers import parse_marker
from pyscaffold_op.gen.schema import SchemaConverter

# ------------------------------------------------------------------ syntax


@pytest.mark.parametrize(
    ("text", "value", "args"),
    [
        ("kubebuilder:validation:Minimum=1", 1, {}),
        ("kubebuilder:validation:Minimum=-1.5", -1.5, {}),
        ("kubebuilder:validation:Pattern=`^a\\d+$`", "^a\\d+$", {}),
        ('kubebuilder:validation:Pattern="^[a-z]+$"', "^[a-z]+$", {}),
        ("kubebuilder:validation:Enum=A;B;C", ["A", "B", "C"], {}),
        ("kubebuilder:validation:Enum={1,2}", [1, 2], {}),
        ("kubebuilder:default=PENDING", "PENDING", {}),
        ('kubebuilder:default="a,b"', "a,b", {}),
        ("kubebuilder:default=3", 3, {}),
        ("kubebuilder:default=true", True, {}),
        ("kubebuilder:default={a: 1, b: x}", {"a": 1, "b": "x"}, {}),
        ('kubebuilder:default={"a": [1]}', {"a": [1]}, {}),
        ("kubebuilder:default={x,y}", ["x", "y"], {}),
        ("kubebuilder:default={}", {}, {}),
        ("optional", True, {}),
        ("kubebuilder:storageversion", True, {}),
        (
            'kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",priority=1',
            None,
            {"name": "Phase", "type": "string", "JSONPath": ".status.phase", "priority": 1},
        ),
        (
            "kubebuilder:resource:scope=Cluster,shortName=at;ats,categories={all,jobs}",
            None,
            {"scope": "Cluster", "shortName": ["at", "ats"], "categories": ["all", "jobs"]},
        ),
        (
            'kubebuilder:validation:XValidation:rule="self.a, self.b",message="m, n"',
            None,
            {"rule": "self.a, self.b", "message": "m, n"},
        ),
        (
            'kubebuilder:rbac:groups="",resources=pods,verbs=get;list',
            None,
            {"groups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
        ),
    ],
)
def test_syntax(text: str, value: Any, args: dict[str, Any]) -> None:
    marker = parse_marker(text, "f.py:1")
    assert marker is not None
    assert marker.value == value
    assert marker.args == args


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kubebuilder:validation:Minimun=1", r"f\.py:1: unknown marker \+kubebuilder:validation:Minimun"),
        ("kubebuilder:validation:MinLength=abc", r"'abc' is not an integer"),
        ("kubebuilder:printcolumn:name=X,type=string", r"needs JSONPath"),
        ("kubebuilder:printcolumn:name=X,type=string,JSONPath=.a,colour=red", r"has no argument 'colour'"),
        ("kubebuilder:subresource:status=yes", r"takes no value"),
        ("kubebuilder:resource=ats", r"takes named arguments"),
        ('kubebuilder:validation:Pattern="unterminated', r"unbalanced quotes"),
    ],
)
def test_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(GenerateError, match=message):
        parse_marker(text, "f.py:1")


def test_foreign_markers_are_ignored() -> None:
    assert parse_marker("kubebuilder:scaffold:imports") is None
    assert parse_marker("pyop:scaffold:controllers") is None
    assert parse_marker("genclient") is None


# ------------------------------------------------------------------ field markers


class Marked(KubeModel):
    # +kubebuilder:validation:Minimum=1
    # +kubebuilder:validation:Maximum=10
    # +kubebuilder:validation:ExclusiveMaximum=true
    # +kubebuilder:validation:MultipleOf=2
    number: int = 2
    # +kubebuilder:validation:MinLength=1
    # +kubebuilder:validation:MaxLength=63
    # +kubebuilder:validation:Pattern=`^[a-z]+$`
    # +kubebuilder:validation:Format=hostname
    text: str
    # +kubebuilder:validation:MinItems=1
    # +kubebuilder:validation:MaxItems=3
    # +kubebuilder:validation:UniqueItems=true
    tags: list[str]
    # +kubebuilder:validation:MinProperties=1
    # +kubebuilder:validation:MaxProperties=5
    # +mapType=atomic
    labels: dict[str, str] = Field(default_factory=dict)
    # +kubebuilder:validation:Enum=Always;Never;OnFailure
    # +kubebuilder:default=Always
    policy: str | None = None
    # +kubebuilder:validation:Enum=1;2;3
    level: int = 1
    # +optional
    not_required: str
    # +required
    required_with_default: str = "x"
    # +nullable
    nothing: str | None = None
    # +listType=map
    # +listMapKey=name
    # +listMapKey=port
    ports: list[Port] = Field(default_factory=list)
    # +listType=atomic
    plain: list[str] = Field(default_factory=list)
    # +kubebuilder:validation:XValidation:rule="self.size() > 0",message="must not be empty",reason="FieldValueInvalid"
    # +kubebuilder:validation:XValidation:rule="self != 'x'"
    checked: str = "a"
    # +kubebuilder:validation:EmbeddedResource
    # +kubebuilder:pruning:PreserveUnknownFields
    embedded: dict[str, Any] = Field(default_factory=dict)
    # +kubebuilder:validation:XIntOrString
    int_or_string: int | str = 1
    # +kubebuilder:validation:Schemaless
    # +kubebuilder:pruning:PreserveUnknownFields
    schemaless: dict[str, Any] = Field(default_factory=dict)
    """Anything at all."""
    # +kubebuilder:validation:Type=string
    # +kubebuilder:validation:Format=date-time
    typed: str = "2024-01-01T00:00:00Z"
    # +kubebuilder:validation:Optional
    # +kubebuilder:validation:Nullable
    maybe: int


class Port(KubeModel):
    name: str
    port: int


# +kubebuilder:validation:XValidation:rule="self.min <= self.max",message="min must not exceed max"
# +kubebuilder:validation:MinProperties=1
class Range(KubeModel):
    min: int = 0
    max: int = 0


class HasRange(KubeModel):
    range: Range = Field(default_factory=Range)


def test_field_markers() -> None:
    s = SchemaConverter().model_schema(Marked)
    p = s["properties"]
    assert p["number"] == {
        "default": 2,
        "exclusiveMaximum": True,
        "maximum": 10,
        "minimum": 1,
        "multipleOf": 2,
        "type": "integer",
    }
    assert p["text"] == {
        "format": "hostname",
        "maxLength": 63,
        "minLength": 1,
        "pattern": "^[a-z]+$",
        "type": "string",
    }
    assert p["tags"] == {
        "items": {"type": "string"},
        "maxItems": 3,
        "minItems": 1,
        "type": "array",
        "x-kubernetes-list-type": "set",
    }
    assert p["labels"]["minProperties"] == 1 and p["labels"]["maxProperties"] == 5
    assert p["labels"]["x-kubernetes-map-type"] == "atomic"
    assert p["policy"] == {"default": "Always", "enum": ["Always", "Never", "OnFailure"], "type": "string"}
    assert p["level"]["enum"] == [1, 2, 3]
    assert sorted(s["required"]) == ["requiredWithDefault", "tags", "text"]
    assert p["nothing"] == {"nullable": True, "type": "string"}
    assert p["ports"]["x-kubernetes-list-type"] == "map"
    assert p["ports"]["x-kubernetes-list-map-keys"] == ["name", "port"]
    assert p["plain"]["x-kubernetes-list-type"] == "atomic"
    assert p["checked"]["x-kubernetes-validations"] == [
        {"message": "must not be empty", "reason": "FieldValueInvalid", "rule": "self.size() > 0"},
        {"rule": "self != 'x'"},
    ]
    assert p["embedded"]["x-kubernetes-embedded-resource"] is True
    assert p["intOrString"]["x-kubernetes-int-or-string"] is True
    assert p["schemaless"] == {
        "description": "Anything at all.",
        "x-kubernetes-preserve-unknown-fields": True,
    }
    assert p["typed"]["format"] == "date-time"
    assert p["maybe"] == {"nullable": True, "type": "integer"}
    assert check_schema(s) == []


def test_type_level_markers_apply_to_the_model_schema() -> None:
    s = SchemaConverter().model_schema(HasRange)
    assert s["properties"]["range"]["x-kubernetes-validations"] == [
        {"message": "min must not exceed max", "rule": "self.min <= self.max"}
    ]
    assert s["properties"]["range"]["minProperties"] == 1


class Conflict(KubeModel):
    # +kubebuilder:validation:MinLength=2
    name: str = Field(min_length=1)


class Agreement(KubeModel):
    # +kubebuilder:validation:MinLength=1
    name: str = Field(min_length=1)


class BadDefault(KubeModel):
    # +kubebuilder:default=7
    size: int = 3


class KindMarkerOnField(KubeModel):
    # +kubebuilder:subresource:status
    name: str


def test_marker_conflicting_with_constraint_is_an_error() -> None:
    with pytest.raises(
        GenerateError, match=r"Conflict\.name: \+kubebuilder:validation:MinLength sets minLength=2"
    ):
        SchemaConverter().model_schema(Conflict)
    assert SchemaConverter().model_schema(Agreement)["properties"]["name"]["minLength"] == 1
    with pytest.raises(GenerateError, match=r"BadDefault\.size: \+kubebuilder:default sets default=7"):
        SchemaConverter().model_schema(BadDefault)
    with pytest.raises(GenerateError, match=r"cannot be used on a field"):
        SchemaConverter().model_schema(KindMarkerOnField)


# ------------------------------------------------------------------ kind markers


class Spec(KubeModel):
    replicas: int = 1


class Status(KubeModel):
    replicas: int = 0
    selector: str = ""


# +kubebuilder:object:root=true
# +kubebuilder:resource:path=gadgets,scope=Cluster,shortName=gd;gad,categories=all,singular=gadget
# +kubebuilder:subresource:status
# +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
# +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".spec.replicas",description="Wanted",priority=1
# +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",format="date-time"
# +kubebuilder:deprecatedversion:warning="use v2"
# +kubebuilder:metadata:annotations="example.com/owner=team-a",labels="tier=gold"
class Gadget(CustomResource):
    """A gadget."""

    gvk = GroupVersionKind("demo.example.com", "v1", "Gadget")
    namespaced = False
    spec: Spec = Field(default_factory=Spec)
    status: Status | None = None


def test_kind_markers() -> None:
    crd = build_crd([Gadget])
    assert crd["metadata"] == {
        "annotations": {"example.com/owner": "team-a", VERSION_ANNOTATION: __version__},
        "labels": {"tier": "gold"},
        "name": "gadgets.demo.example.com",
    }
    spec = crd["spec"]
    assert spec["scope"] == "Cluster"
    assert spec["names"] == {
        "categories": ["all"],
        "kind": "Gadget",
        "listKind": "GadgetList",
        "plural": "gadgets",
        "shortNames": ["gad", "gd"],
        "singular": "gadget",
    }
    (version,) = spec["versions"]
    assert version["subresources"] == {
        "scale": {
            "labelSelectorPath": ".status.selector",
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
        },
        "status": {},
    }
    assert version["additionalPrinterColumns"] == [
        {
            "description": "Wanted",
            "jsonPath": ".spec.replicas",
            "name": "Replicas",
            "priority": 1,
            "type": "integer",
        },
        {"format": "date-time", "jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"},
    ]
    assert version["deprecated"] is True and version["deprecationWarning"] == "use v2"
    assert check_crd(crd) == []


# +kubebuilder:resource:path=widgetz
class WrongPath(CustomResource):
    gvk = GroupVersionKind("demo.example.com", "v1", "Widget")


# +kubebuilder:resource:scope=Cluster
class WrongScope(CustomResource):
    gvk = GroupVersionKind("demo.example.com", "v1", "Thing")


# +kubebuilder:printcolumn:name="X",type="text",JSONPath=".spec.x"
class WrongColumn(CustomResource):
    gvk = GroupVersionKind("demo.example.com", "v1", "Column")


# +kubebuilder:unservedversion
class OldVersion(CustomResource):
    gvk = GroupVersionKind("demo.example.com", "v1beta1", "Versioned")


# +kubebuilder:storageversion
class NewVersion(CustomResource):
    gvk = GroupVersionKind("demo.example.com", "v1", "Versioned")


# +kubebuilder:skipversion
class Skipped(CustomResource):
    gvk = GroupVersionKind("demo.example.com", "v2", "Versioned")


def test_resource_markers_must_agree_with_class_attributes() -> None:
    with pytest.raises(GenerateError, match=r"path=widgetz disagrees with WrongPath\.plural = 'widgets'"):
        build_crd([WrongPath])
    with pytest.raises(GenerateError, match=r"scope=Cluster disagrees with WrongScope\.namespaced = True"):
        build_crd([WrongScope])
    with pytest.raises(GenerateError, match=r"printcolumn type must be one of"):
        build_crd([WrongColumn])


def test_version_markers() -> None:
    crd = build_crd([OldVersion, NewVersion, Skipped])
    versions = {v["name"]: (v["served"], v["storage"]) for v in crd["spec"]["versions"]}
    assert versions == {"v1": (True, True), "v1beta1": (False, False)}


class ItemMarked(KubeModel):
    # +kubebuilder:validation:items:MinLength=1
    # +kubebuilder:validation:items:Pattern=`^[a-z]+$`
    # +kubebuilder:validation:MaxItems=4
    names: list[str] = Field(default_factory=list)
    # +kubebuilder:validation:items:Minimum=1
    single: int = 1


def test_item_markers_apply_to_list_items() -> None:
    with pytest.raises(GenerateError, match=r"items:Minimum needs a list field \(ItemMarked\.single\)"):
        SchemaConverter().model_schema(ItemMarked)


class ItemsOnly(KubeModel):
    # +kubebuilder:validation:items:MinLength=1
    # +kubebuilder:validation:items:Pattern=`^[a-z]+$`
    # +kubebuilder:validation:MaxItems=4
    names: list[str] = Field(default_factory=list)


def test_item_markers() -> None:
    p = SchemaConverter().model_schema(ItemsOnly)["properties"]["names"]
    assert p == {
        "items": {"minLength": 1, "pattern": "^[a-z]+$", "type": "string"},
        "maxItems": 4,
        "type": "array",
    }


# +kubebuilder:selectablefield:JSONPath=`.spec.replicas`
class Selectable(CustomResource):
    gvk = GroupVersionKind("demo.example.com", "v1", "Selectable")


def test_selectable_field() -> None:
    assert build_crd([Selectable])["spec"]["versions"][0]["selectableFields"] == [
        {"jsonPath": ".spec.replicas"}
    ]


# +kubebuilder:resource:shortName=sep
# +kubebuilder:subresource:status


# Separated is a kind whose markers sit one blank line above its doc comment.
class Separated(CustomResource):
    gvk = GroupVersionKind("demo.example.com", "v1", "Separated")


def test_kind_markers_one_blank_line_above() -> None:
    crd = build_crd([Separated])
    assert crd["spec"]["names"]["shortNames"] == ["sep"]
    assert crd["spec"]["versions"][0]["subresources"] == {"status": {}}


def test_comment_lines_are_what_tokenize_finds() -> None:
    """The fast comment scan agrees with `tokenize` on every Python file of this repository and on
    comments-looking lines inside strings."""
    from pathlib import Path

    from pyscaffold_op.gen.markers import _comment_lines, _tokenized_comment_lines

    root = Path(__file__).resolve().parents[2]
    files = [
        p
        for folder in ("pyscaffold_op", "tests", "testdata", "benchmarks")
        for p in (root / folder).rglob("*.py")
    ]
    tricky = [
        'x = """\n# +kubebuilder:validation:Minimum=1\n"""\n# +optional\ny: int\n',
        "x = ('a'\n     # between\n     'b')\n",
        "s = 'a\\\n# continued'\n# real\n",
        'f = f"""{1}\n  # inside\n"""\n',
        "# only\n\t# tabbed  \n\f# feed\r\n",
    ]
    assert len(files) > 100
    for source in [p.read_text(encoding="utf-8") for p in files] + tricky:
        assert _comment_lines(source) == _tokenized_comment_lines(source)


def test_a_marker_name_is_the_longest_known_one_before_its_value() -> None:
    """The name lookup (dictionary lookups at each `=` and `:`) finds what a scan of every known
    name, longest first, finds: for every known name with each kind of suffix."""
    from pyscaffold_op.gen.markers import SPECS

    def scanned(text: str) -> str | None:
        names = sorted(SPECS, key=len, reverse=True)
        return next((n for n in names if text == n or text.startswith((n + "=", n + ":"))), None)

    texts = [
        name + suffix
        for name in SPECS
        for suffix in ("", "=1", ":a=b", "=x:y", ":", "=", "X", ":items:MinLength=1")
    ]
    texts += ["kubebuilder:nope=1", "optional", "listType=map", "", "=", ":x"]
    for text in texts:
        expected = scanned(text.strip())
        try:
            marker = parse_marker(text, "f.py:1")
        except GenerateError as err:  # a known name with a malformed value is named in the message
            assert expected is None or f"+{expected}" in str(err), (text, str(err))
            continue
        assert (marker.name if marker else None) == expected, text


def test_a_run_reads_each_source_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    reads: list[str] = []
    read_text = Path.read_text

    def counted(self: Path, *args: Any, **kwargs: Any) -> str:
        reads.append(self.name)
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counted)
    converter = SchemaConverter()
    for cls in (Marked, HasRange, Agreement):  # three classes of this file
        converter.markers_of(cls)
    assert reads.count(Path(__file__).name) == 1
