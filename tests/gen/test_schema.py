"""pydantic -> structural OpenAPI: each transformation with a model that needs it, and each error."""

from __future__ import annotations

import enum
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import AnyUrl, BaseModel, Field

from pyscaffold_op.apiextensions.crdvalidation import check_schema
from pyscaffold_op.apimachinery import (
    Condition,
    CustomResource,
    EmbeddedResource,
    FreeForm,
    GroupVersionKind,
    Int32,
    Int64,
    IntOrString,
    KubeModel,
    ListType,
    MapType,
    Nullable,
    PreserveUnknownFields,
    Quantity,
    XValidation,
)
from pyscaffold_op.errors import GenerateError
from pyscaffold_op.gen.schema import SchemaConverter


def schema_of(cls: type) -> dict[str, Any]:
    return SchemaConverter().model_schema(cls)


def props(cls: type) -> dict[str, Any]:
    return schema_of(cls)["properties"]


class Color(enum.StrEnum):
    """A color."""

    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Inner(KubeModel):
    """Inner is a nested model."""

    some_value: int = 3
    """Some value."""


class Shapes(KubeModel):
    """Every supported field shape."""

    name: str
    """Docstring description."""
    described: str = Field(default="x", description="Field description.")
    count: int = Field(default=1, ge=0, le=10)
    ratio: float = Field(default=0.5, gt=0, lt=1)
    flag: bool = False
    maybe: int | None = None
    fixed: Literal["only"] = "only"
    mode: Literal["A", "B"] = "A"
    color: Color = Color.RED
    level: Level = Level.LOW
    tags: set[str] = Field(default_factory=set)
    items: list[str] = Field(default_factory=list, min_length=1, max_length=5)
    labels: dict[str, str] = Field(default_factory=dict)
    counts: dict[str, int] = Field(default_factory=dict)
    nested: Inner = Inner(some_value=5)
    """Field doc wins over the model doc."""
    nested_list: list[Inner] = Field(default_factory=list)
    maybe_nested: Inner | None = None
    when: datetime | None = None
    day: date | None = None
    anything: Any = None
    free: dict[str, Any] = Field(default_factory=dict)
    port: int | str = 80
    target: IntOrString = "http"
    memory: Quantity = "1Gi"
    config: FreeForm = Field(default_factory=dict)
    template: EmbeddedResource | None = None
    ports: Annotated[list[Inner], ListType.map("someValue")] = Field(default_factory=list)
    atomic_list: Annotated[list[str], ListType("atomic")] = Field(default_factory=list)
    selector: Annotated[dict[str, str], MapType("atomic")] = Field(default_factory=dict)
    rules: Annotated[dict[str, int], XValidation("size(self) <= 3", message="at most 3")] = Field(
        default_factory=dict
    )
    nullable: Annotated[str | None, Nullable] = None
    open_inner: Annotated[Inner, PreserveUnknownFields] = Field(default_factory=Inner)
    conditions: list[Condition] = Field(default_factory=list)
    pattern: str = Field(default="abc", pattern=r"^[a-z]+$", examples=["abc"], title="T")


def test_every_shape_is_structural() -> None:
    schema = schema_of(Shapes)
    assert check_schema(schema) == []


def test_descriptions_from_docstrings_and_field() -> None:
    s = schema_of(Shapes)
    assert s["description"] == "Every supported field shape."
    assert s["properties"]["name"]["description"] == "Docstring description."
    assert s["properties"]["described"]["description"] == "Field description."
    assert s["properties"]["nested"]["description"] == "Field doc wins over the model doc."
    assert s["properties"]["nestedList"]["items"]["description"] == "Inner is a nested model."


def test_refs_are_inlined_and_titles_dropped() -> None:
    s = schema_of(Shapes)
    text = repr(s)
    assert "$ref" not in text and "$defs" not in text and "'title'" not in text and "examples" not in text
    assert s["properties"]["nested"]["properties"]["someValue"] == {
        "default": 3,
        "description": "Some value.",
        "type": "integer",
    }


def test_optional_is_not_nullable_and_not_required() -> None:
    s = schema_of(Shapes)
    assert s["required"] == ["name"]
    assert s["properties"]["maybe"] == {"type": "integer"}
    assert s["properties"]["maybeNested"]["type"] == "object"
    assert s["properties"]["nullable"] == {"nullable": True, "type": "string"}


def test_const_enum_and_exclusive_bounds() -> None:
    p = props(Shapes)
    assert p["fixed"] == {"default": "only", "enum": ["only"], "type": "string"}
    assert p["mode"]["enum"] == ["A", "B"]
    assert p["color"] == {
        "default": "red",
        "description": "A color.",
        "enum": ["red", "blue"],
        "type": "string",
    }
    assert p["level"]["enum"] == [1, 2] and p["level"]["type"] == "integer"
    assert p["ratio"] == {
        "default": 0.5,
        "exclusiveMaximum": True,
        "exclusiveMinimum": True,
        "maximum": 1,
        "minimum": 0,
        "type": "number",
    }
    assert p["count"]["minimum"] == 0 and p["count"]["maximum"] == 10


def test_kubernetes_shapes() -> None:
    p = props(Shapes)
    assert p["tags"] == {"items": {"type": "string"}, "type": "array", "x-kubernetes-list-type": "set"}
    assert p["anything"] == {"x-kubernetes-preserve-unknown-fields": True}
    assert p["free"] == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert p["config"] == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    int_or_string = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
    assert p["port"] == {**int_or_string, "default": 80}
    assert p["target"] == {**int_or_string, "default": "http"}
    assert p["memory"]["x-kubernetes-int-or-string"] and p["memory"]["pattern"].startswith("^(\\+|-)?")
    assert p["template"] == {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
    }
    assert p["ports"]["x-kubernetes-list-type"] == "map"
    assert p["ports"]["x-kubernetes-list-map-keys"] == ["someValue"]
    assert p["atomicList"]["x-kubernetes-list-type"] == "atomic"
    assert p["selector"]["x-kubernetes-map-type"] == "atomic"
    assert p["selector"]["additionalProperties"] == {"type": "string"}
    assert p["rules"]["x-kubernetes-validations"] == [{"message": "at most 3", "rule": "size(self) <= 3"}]
    assert p["openInner"]["x-kubernetes-preserve-unknown-fields"] is True
    assert p["when"] == {"format": "date-time", "type": "string"}
    assert p["day"] == {"format": "date", "type": "string"}
    assert p["items"]["minItems"] == 1 and p["items"]["maxItems"] == 5


def test_defaults_dumped_by_alias_and_validated() -> None:
    p = props(Shapes)
    assert p["nested"]["default"] == {"someValue": 5}
    assert "default" not in p["maybe"]  # None defaults are dropped
    assert check_schema(schema_of(Shapes)) == []


class Requests(KubeModel):
    cpu: Quantity = "100m"
    memory: Quantity | None = None


class PortDefault(KubeModel):
    name: str
    node_port: int | None = None


class ModelDefaults(KubeModel):
    resources: Requests = Requests()
    ports: list[PortDefault] = [PortDefault(name="http")]
    by_name: dict[str, PortDefault] = {"a": PortDefault(name="a")}


def test_model_defaults_leave_out_unset_fields_like_to_dict() -> None:
    # `resources: Requests = Requests()` wrote `default: {cpu: 100m, memory: null}`: a CRD the server rejects
    p = props(ModelDefaults)
    assert p["resources"]["default"] == {"cpu": "100m"}
    assert p["ports"]["default"] == [{"name": "http"}]
    assert p["byName"]["default"] == {"a": {"name": "a"}}
    assert check_schema(schema_of(ModelDefaults)) == []


class Node(KubeModel):
    children: list[Node] = Field(default_factory=list)


class HasTuple(KubeModel):
    pair: tuple[int, str]


class HasDecimal(KubeModel):
    price: Decimal


class HasMixed(KubeModel):
    value: int | bool


class A(KubeModel):
    a: int


class B(KubeModel):
    b: str


class HasModelUnion(KubeModel):
    either: A | B


class HasIntFloat(KubeModel):
    number: int | float


@pytest.mark.parametrize(
    ("model", "field", "message"),
    [
        (Node, "children", r"Node\.children\[\]: recursive model Node"),
        (HasTuple, "pair", r"HasTuple\.pair: tuples are not supported"),
        (HasDecimal, "price", r"HasDecimal\.price: the union number \| string is not structural \(Decimal"),
        (HasMixed, "value", r"HasMixed\.value: the union integer \| boolean is not structural"),
        (HasModelUnion, "either", r"HasModelUnion\.either: a union of models"),
        (HasIntFloat, "number", r"HasIntFloat\.number: the union integer \| number"),
    ],
)
def test_unsupported_shapes_name_file_line_model_and_field(model: type, field: str, message: str) -> None:
    with pytest.raises(GenerateError, match=r"^\S*test_schema\.py:(\d+): " + message) as err:
        schema_of(model)
    line = int(str(err.value).split(":")[1])
    assert Path(__file__).read_text().splitlines()[line - 1].strip().startswith(f"{field}:")


class Widget(CustomResource):
    """A widget."""

    gvk = GroupVersionKind("demo.example.com", "v1", "Widget")
    spec: Inner = Field(default_factory=Inner)


def test_kind_root_rules() -> None:
    s = SchemaConverter().kind_schema(Widget)
    assert s["type"] == "object"
    assert s["properties"]["metadata"] == {"type": "object"}
    assert s["properties"]["kind"]["type"] == "string"
    assert "required" not in s
    assert check_schema(s) == []


class Formats(KubeModel):
    timeout: timedelta = timedelta(seconds=5)
    url: AnyUrl | None = None


def test_formats_whose_wire_form_differs_are_dropped() -> None:
    p = props(Formats)
    assert p["timeout"]["type"] == "string" and "format" not in p["timeout"]  # ISO 8601, not Go's 1h
    assert p["url"]["format"] == "uri" and p["url"]["type"] == "string"


class NoDocstringConfig(BaseModel):
    """Docstrings under fields without pydantic's use_attribute_docstrings."""

    name: str
    """Read by the generator itself."""
    inner: Inner = Field(default_factory=Inner)
    """Beats the model's docstring."""
    explicit: str = Field(default="", description="Field(description=...) wins.")
    """Ignored: an explicit description wins."""


def test_attribute_docstrings_are_read_by_the_generator() -> None:
    assert not NoDocstringConfig.model_config.get("use_attribute_docstrings")
    p = props(NoDocstringConfig)
    assert p["name"]["description"] == "Read by the generator itself."
    assert p["inner"]["description"] == "Beats the model's docstring."
    assert p["explicit"]["description"] == "Field(description=...) wins."


class BaseSpec(KubeModel):
    # +kubebuilder:validation:Minimum=1
    replicas: int = 1
    """How many copies."""


class DerivedSpec(BaseSpec):
    image: str = "busybox"
    """The image to run."""


def test_inherited_fields_keep_markers_and_docstrings() -> None:
    p = props(DerivedSpec)
    assert p["replicas"] == {"default": 1, "description": "How many copies.", "minimum": 1, "type": "integer"}
    assert p["image"]["description"] == "The image to run."


class TwoSpecs(KubeModel):
    first: DerivedSpec = DerivedSpec()
    second: BaseSpec = BaseSpec()


def test_conversions_do_not_share_state() -> None:
    """A conversion started while another runs (here from the marker lookup of `first`) leaves the
    outer one's models alone: `second` still finds its class and markers afterwards."""
    from pyscaffold_op.gen.markers import class_markers

    inner: list[dict[str, Any]] = []

    def markers_of(cls: type) -> Any:
        if cls is DerivedSpec and not inner:
            inner.append(SchemaConverter().model_schema(Shapes))
        return class_markers(cls)

    p = SchemaConverter(markers_of).model_schema(TwoSpecs)["properties"]
    assert inner and inner[0]["properties"]["name"]["description"] == "Docstring description."
    assert p["first"]["properties"]["replicas"]["minimum"] == 1
    assert p["second"]["properties"]["replicas"]["minimum"] == 1


def test_every_registered_marker_applies_through_the_one_registry() -> None:
    """Each marker that sets a schema keyword does so from its registry entry alone."""
    from pyscaffold_op.gen.markers import SPECS, Marker
    from pyscaffold_op.gen.schema import apply_markers

    samples = {"number": 2, "int": 2, "bool": True, "str": "x", "values": ["x"], "any": "x", "json": "x"}
    for name, spec in SPECS.items():
        if name.startswith("kubebuilder:validation:items:"):
            continue
        if spec.keyword is not None:
            if name == "structType":
                value = "atomic"
            elif spec.keyword == "type":
                value = "string"  # a real type
            else:
                value = samples[spec.value or "any"]
            marker = Marker(name, value, where="t.py:1")
            assert apply_markers({}, [marker], "T.f")[spec.keyword] == marker.value, name
        if spec.sets is not None:
            key, value = spec.sets
            assert apply_markers({}, [Marker(name, True, where="t.py:1")], "T.f")[key] == value, name
        if spec.items and spec.keyword is not None:
            item = Marker(
                "kubebuilder:validation:items:" + name.rsplit(":", 1)[1],
                "string" if spec.keyword == "type" else samples[spec.value or "any"],
            )
            assert apply_markers({"type": "array", "items": {}}, [item], "T.f")["items"][spec.keyword], name


class ConstrainedAliases(KubeModel):
    generation: Annotated[Int64, Field(ge=0, lt=10)] | None = None
    small: Annotated[Int32, Field(gt=-1)] = 0


def test_constraints_on_validated_aliases_become_schema_keywords() -> None:
    # pydantic writes `ge`/`lt` as is when they sit on a type with its own validator (Int64)
    p = props(ConstrainedAliases)
    assert p["generation"] == {
        "type": "integer",
        "format": "int64",
        "minimum": 0,
        "maximum": 10,
        "exclusiveMaximum": True,
    }
    assert p["small"] == {
        "type": "integer",
        "format": "int32",
        "minimum": -1,
        "exclusiveMinimum": True,
        "default": 0,
    }
