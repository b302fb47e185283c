"""Issue 27: a user's mistake in the types or markers is one line naming file:line and the fix (the
command exits 2), never a traceback."""

from __future__ import annotations

import re

import pytest

from pyscaffold_op.errors import GenerateError
from pyscaffold_op.gen import generate_manifests

PLAIN_CLASS = """\
from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel

from . import GROUP, VERSION


class Owner:
    name: str


class WidgetSpec(KubeModel):
    size: int = 1
    owner: Owner | None = None


class Widget(CustomResource):
    gvk = GroupVersionKind(GROUP, VERSION, "Widget")
    spec: WidgetSpec
"""


def test_a_field_typed_with_a_plain_class_names_its_line_and_the_fix(project) -> None:
    builder = project()
    builder.api("demo", "v1", "Widget", "widget_types", PLAIN_CLASS)
    with pytest.raises(GenerateError) as err:
        generate_manifests(builder.root)
    message = str(err.value)
    assert "\n" not in message
    assert re.fullmatch(
        r".*widget_types\.py:12: Widget field spec\.owner has type Owner; pydantic cannot describe the "
        r"plain class Owner: derive it from KubeModel \(`class Owner\(KubeModel\):`, from "
        r"pyscaffold_op\.apimachinery\) or use a type pydantic knows",
        message,
    ), message
