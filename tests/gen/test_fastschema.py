"""gen.fastschema: the JSON schema written from a model's fields gives the CRD schema pydantic's own
`model_json_schema` gives, on the golden projects and on a matrix of field types, wrappers and
field options; and it declines (pydantic's path answers) what it does not know.

Every other test of tests/gen also compares both paths (the `fast_schema_checked` fixture)."""

from __future__ import annotations

import importlib
import itertools
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pyscaffold_op.errors import GenerateError
from pyscaffold_op.gen import render_crds
from pyscaffold_op.gen.loader import purge_package
from pyscaffold_op.gen.schema import SchemaConverter

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["at", "project"])
def test_golden_projects_take_the_fast_path(name: str, fast_schema_checked: list[str]) -> None:
    crds = render_crds(REPO / "testdata" / name)
    kinds = {crd["spec"]["names"]["kind"] for crd in crds.values()}
    assert kinds and kinds <= set(fast_schema_checked)  # and each equal to pydantic's (the fixture)


# (annotation, a default that fits it or None for "required", Field options that fit it)
TYPES: dict[str, tuple[str, str | None, list[str]]] = {
    "str": ("str", '"x"', ["min_length=1", "max_length=9", 'pattern="^[a-z]+$"']),
    "int": ("int", "3", ["ge=0", "lt=10", "multiple_of=2"]),
    "float": ("float", "0.5", ["gt=0", "le=1.5"]),
    "bool": ("bool", "True", []),
    "datetime": ("datetime", None, []),
    "date": ("date", None, []),
    "timedelta": ("timedelta", None, []),
    "int32": ("Int32", "5", ["ge=0"]),
    "int64": ("Int64", None, ["le=100"]),
    "quantity": ("Quantity", '"1Gi"', []),
    "intorstring": ("IntOrString", "8080", []),
    "duration": ("Duration", None, []),
    "time": ("Time", None, []),
    "freeform": ("FreeForm", None, []),
    "embedded": ("EmbeddedResource", None, []),
    "any": ("Any", None, []),
    "literal": ('Literal["A", "B"]', '"A"', []),
    "intliteral": ("Literal[1, 2]", "1", []),
    "strenum": ("Color", "Color.RED", []),
    "intenum": ("Level", "Level.LOW", []),
    "dictstr": ("dict[str, str]", None, ["min_length=1"]),
    "liststr": ("list[str]", None, ["max_length=4"]),
    "setstr": ("set[str]", None, []),
    "model": ("Inner", "Inner()", []),
    "builtin": ("ObjectReference", None, []),
    "condition": ("Condition", None, []),
    "podspec": ("JobTemplateSpec", None, []),
}
WRAPPERS = {
    "bare": "{}",
    "optional": "{} | None",
    "list": "list[{}]",
    "dict": "dict[str, {}]",
    "nullable": "Annotated[{} | None, Nullable]",
    "listmap": 'Annotated[list[{}], ListType("atomic")]',
    "rule": 'Annotated[{}, XValidation("true", message="m")]',
}
HEADER = '''\
from datetime import date, datetime, timedelta
from enum import Enum, IntEnum
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from pyscaffold_op.apimachinery import (
    Condition, Duration, EmbeddedResource, FreeForm, Int32, Int64, IntOrString, KubeModel, ListType,
    Nullable, Quantity, Time, XValidation,
)
from pyscaffold_op.models.batch_v1 import JobTemplateSpec
from pyscaffold_op.models.core_v1 import ObjectReference


class Color(str, Enum):
    """A color."""

    RED = "red"
    BLUE = "blue"


class Level(IntEnum):
    LOW = 1
    HIGH = 2


class Inner(KubeModel):
    """Inner is nested."""

    # +kubebuilder:validation:MinLength=2
    some_value: str = "ab"
    """The value."""
    count: Int32 | None = Field(default=None, ge=1, description="How many.")
'''


def _fields(wrapper: str, annotation: str, default: str | None, options: list[str]) -> list[str]:
    """Field lines for one (wrapper, type): required, with its default, with each option."""
    typ = WRAPPERS[wrapper].format(annotation)
    lines = [f"    plain: {typ}"]
    if wrapper in ("optional", "nullable"):
        lines.append(f"    defaulted: {typ} = None")
        lines.append(f'    described: {typ} = Field(default=None, description="Described.", title="T")')
    elif wrapper in ("list", "listmap"):
        lines.append(f"    defaulted: {typ} = Field(default_factory=list)")
        lines.append(f'    described: {typ} = Field(default_factory=list, examples=[[]], deprecated="old")')
    elif wrapper == "dict":
        lines.append(f"    defaulted: {typ} = Field(default_factory=dict)")
        extra = 'json_schema_extra={"example": {}}'
        lines.append(f"    described: {typ} = Field(default_factory=dict, {extra})")
    elif default is not None:
        lines.append(f"    defaulted: {typ} = {default}")
        lines.append(f'    described: {typ} = Field(default={default}, description="Described.")')
        lines.append(f'    aliased: {typ} = Field(default={default}, alias="otherName")')
    if wrapper == "bare":
        lines += [f"    constrained_{i}: {typ} = Field({option})" for i, option in enumerate(options)]
    return lines


def _matrix_source() -> tuple[str, list[str]]:
    parts, names = [HEADER], []
    for (tname, (annotation, default, options)), wrapper in itertools.product(TYPES.items(), WRAPPERS):
        name = f"M_{tname}_{wrapper}"
        names.append(name)
        doc = f'    """{name} is one cell of the matrix."""\n\n' if len(names) % 2 else ""
        config = '    model_config = ConfigDict(extra="forbid")\n' if len(names) % 3 == 0 else ""
        body = "\n".join(_fields(wrapper, annotation, default, options))
        parts.append(f"\n\nclass {name}(KubeModel):\n{doc}{config}{body}\n")
    return "".join(parts), names


def _import(tmp_path: Path, name: str, source: str) -> ModuleType:
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))


@pytest.fixture
def matrix(tmp_path: Path) -> Any:
    source, names = _matrix_source()
    module = _import(tmp_path, "fastschema_matrix", source)
    yield [getattr(module, name) for name in names]
    purge_package("fastschema_matrix")


def _both(cls: type) -> tuple[dict[str, Any] | None, dict[str, Any] | GenerateError]:
    fast = SchemaConverter().fast_schema(cls)  # type: ignore[arg-type]
    try:
        return fast, SchemaConverter().pydantic_schema(cls)  # type: ignore[arg-type]
    except GenerateError as err:
        return fast, err


def test_matrix_fast_path_equals_pydantic(matrix: list[type]) -> None:
    answered, rejected = 0, []
    for cls in matrix:
        fast, slow = _both(cls)
        if isinstance(slow, GenerateError):
            assert fast is None, f"{cls.__name__}: the fast path accepts what pydantic's rejects: {slow}"
            rejected.append(cls.__name__)
            continue
        assert fast is not None, f"{cls.__name__}: the fast path declined"
        assert fast == slow, cls.__name__
        answered += 1
    # the structural rules reject a few cells either way (a rule on Any, a nullable FreeForm...):
    # the matrix is mostly cells both paths write
    assert answered > 4 * len(rejected), rejected
    print(f"{answered} cells equal, {len(rejected)} rejected by both: {rejected}")


def _classes(tmp_path: Path, name: str, source: str) -> dict[str, type]:
    module = _import(tmp_path, name, HEADER + textwrap.dedent(source))
    try:
        return {k: v for k, v in vars(module).items() if isinstance(v, type)}
    finally:
        purge_package(name)


@pytest.mark.parametrize(
    ("case", "source"),
    [
        ("union of models", "class U(KubeModel):\n    x: Inner | Condition\n"),
        ("recursion", 'class U(KubeModel):\n    child: "U | None" = None\n'),
        (
            "plain validator",
            "from pydantic import field_validator\n\nclass U(KubeModel):\n    x: int = 1\n\n"
            "    @field_validator('x', mode='plain')\n    @classmethod\n"
            "    def v(cls, value: Any) -> int:\n        return 1\n",
        ),
        ("root model", "from pydantic import RootModel\n\nclass U(RootModel[int]):\n    pass\n"),
        ("config", "class U(KubeModel):\n    model_config = ConfigDict(str_max_length=3)\n    x: str\n"),
        ("tuple", "class U(KubeModel):\n    x: tuple[int, str]\n"),
        ("complex", "class U(KubeModel):\n    x: complex\n"),
    ],
)
def test_fast_path_declines_what_it_does_not_know(tmp_path: Path, case: str, source: str) -> None:
    cls = _classes(tmp_path, "fastschema_" + case.replace(" ", "_"), source)["U"]
    fast, slow = _both(cls)
    assert fast is None
    if not isinstance(slow, GenerateError):
        assert SchemaConverter().model_schema(cls) == slow  # pydantic's path answered


def test_leaf_schemas_are_cached_per_converter(tmp_path: Path) -> None:
    source = "class A(KubeModel):\n    x: Int32\n\n\nclass B(KubeModel):\n    y: Int32\n"
    classes = _classes(tmp_path, "fastschema_cache", source)
    converter = SchemaConverter()
    assert converter.fast_schema(classes["A"]) is not None
    leaves = dict(converter._fast._leaves)  # type: ignore[union-attr]
    assert converter.fast_schema(classes["B"]) is not None
    assert converter._fast._leaves == leaves  # type: ignore[union-attr]


def test_the_generator_never_builds_the_project_classes(tmp_path: Path) -> None:
    """The classes stay deferred through a generation: no validator is built for them."""
    classes = _classes(tmp_path, "fastschema_deferred", "class A(KubeModel):\n    x: Inner\n    y: int = 1\n")
    assert SchemaConverter().fast_schema(classes["A"]) is not None
    assert not classes["A"].__pydantic_complete__
    assert classes["A"](x={"someValue": "cd"}).x.some_value == "cd"  # built on first use
