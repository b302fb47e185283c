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


TYPES = """\
from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel

from . import GROUP, VERSION


class WidgetSpec(KubeModel):
    {marker}
    size: int = 1


class Widget(CustomResource):
    gvk = GroupVersionKind(GROUP, VERSION, "Widget")
    spec: WidgetSpec
"""


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("# +kubebuiler:validation:Minimum=1",
         "unknown marker +kubebuiler:validation:Minimum (did you mean +kubebuilder:validation:Minimum?)"),
        ("# +Kubebuilder:validation:Minimum=1",
         "unknown marker +Kubebuilder:validation:Minimum (did you mean +kubebuilder:validation:Minimum?)"),
        ("# +kubebuilder:validation:Minimun=1",
         "unknown marker +kubebuilder:validation:Minimun (did you mean +kubebuilder:validation:Minimum?)"),
    ],
)  # fmt: skip
def test_a_typo_in_a_marker_is_an_error_with_a_did_you_mean(project, marker: str, message: str) -> None:
    builder = project()
    builder.api("demo", "v1", "Widget", "widget_types", TYPES.format(marker=marker))
    with pytest.raises(GenerateError) as err:
        generate_manifests(builder.root)
    assert str(err.value).endswith(f"widget_types.py:7: {message}"), str(err.value)


def test_other_tools_markers_are_still_ignored(project) -> None:
    builder = project()
    builder.api("demo", "v1", "Widget", "widget_types", TYPES.format(marker="# +k8s:openapi-gen=true"))
    builder.controller("widget_controller", "# +operator-sdk:csv:customresourcedefinitions:type=spec\n")
    generate_manifests(builder.root)


CONTROLLER = """\
# +kubebuilder:rbac:groups=demo.example.com,resources=widgets,verbs=get;list;watch
{marker}
"""


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ('# +kubebuilder:rbac:groups="",resources=event,verbs=create;patch',
         "group \"\" has no resource 'event' (did you mean events?)"),
        ("# +kubebuilder:rbac:groups=apps,resources=deployment/status,verbs=get",
         "group apps has no resource 'deployment' (did you mean deployments?)"),
        ("# +kubebuilder:rbac:groups=demo.example.com,resources=widget,verbs=get",
         "group demo.example.com has no resource 'widget' (did you mean widgets?)"),
        ('# +kubebuilder:rbac:groups="",resources=events,verbs=create;pach',
         "unknown verb 'pach' (did you mean patch?); valid verbs: get, list, watch, create, update, patch, "
         "delete, deletecollection, use, bind, escalate, impersonate, approve, sign, attest, *"),
        ("# +kubebuilder:rbac:urls=/metrics,verbs=list", "unknown verb 'list'"),
    ],
)  # fmt: skip
def test_an_rbac_marker_with_an_unknown_verb_or_resource_is_refused(
    project, marker: str, message: str
) -> None:
    builder = project()
    builder.api("demo", "v1", "Widget", "widget_types", TYPES.format(marker=""))
    builder.controller("widget_controller", CONTROLLER.format(marker=marker))
    with pytest.raises(GenerateError) as err:
        generate_manifests(builder.root)
    assert re.search(r"widget_controller\.py:2: \+kubebuilder:rbac: ", str(err.value)), str(err.value)
    assert message in str(err.value)


def test_rbac_markers_of_unknown_groups_subresources_and_wildcards_pass(project) -> None:
    builder = project()
    builder.api("demo", "v1", "Widget", "widget_types", TYPES.format(marker=""))
    markers = "\n".join([
        "# +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get",  # an unknown group
        '# +kubebuilder:rbac:groups="",resources=pods/log;pods/exec,verbs=get;create',
        "# +kubebuilder:rbac:groups=apps,resources=*,verbs=*",
        "# +kubebuilder:rbac:urls=/metrics,verbs=get",
        "# +kubebuilder:rbac:groups=demo.example.com,resources=widgets/status;widgets/finalizers,verbs=get",
    ])  # fmt: skip
    builder.controller("widget_controller", CONTROLLER.format(marker=markers))
    generate_manifests(builder.root)
