# ruff: noqa: E501 - marker comments read best on one line
"""`+kubebuilder:webhook` markers -> config/webhook/manifests.yaml (controller-gen's output for the
CronJob tutorial, byte for byte), CRD `spec.conversion` for hub kinds, and errors with file:line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pyscaffold_op.errors import GenerateError
from pyscaffold_op.gen import generate_manifests, render_crds
from pyscaffold_op.gen.markers import parse_marker
from pyscaffold_op.gen.webhook import build_configurations

CRONJOB_MARKERS = """\
# +kubebuilder:webhook:path=/mutate-batch-tutorial-kubebuilder-io-v1-cronjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=create;update,versions=v1,name=mcronjob.kb.io,admissionReviewVersions=v1
# +kubebuilder:webhook:path=/mutate-batch-tutorial-kubebuilder-io-v1-cronjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=create;update,versions=v1,name=mcronjob-v1.kb.io,admissionReviewVersions=v1
# +kubebuilder:webhook:path=/validate-batch-tutorial-kubebuilder-io-v1-cronjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=create;update,versions=v1,name=vcronjob-v1.kb.io,admissionReviewVersions=v1
# +kubebuilder:webhook:path=/validate-batch-tutorial-kubebuilder-io-v1-cronjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=create;update;delete,versions=v1,name=vcronjob.kb.io,admissionReviewVersions=v1
"""

# kubebuilder's docs/book/src/cronjob-tutorial/testdata/project/config/webhook/manifests.yaml
CONTROLLER_GEN = """\
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /mutate-batch-tutorial-kubebuilder-io-v1-cronjob
  failurePolicy: Fail
  name: mcronjob-v1.kb.io
  rules:
  - apiGroups:
    - batch.tutorial.kubebuilder.io
    apiVersions:
    - v1
    operations:
    - CREATE
    - UPDATE
    resources:
    - cronjobs
  sideEffects: None
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /mutate-batch-tutorial-kubebuilder-io-v1-cronjob
  failurePolicy: Fail
  name: mcronjob.kb.io
  rules:
  - apiGroups:
    - batch.tutorial.kubebuilder.io
    apiVersions:
    - v1
    operations:
    - CREATE
    - UPDATE
    resources:
    - cronjobs
  sideEffects: None
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /validate-batch-tutorial-kubebuilder-io-v1-cronjob
  failurePolicy: Fail
  name: vcronjob-v1.kb.io
  rules:
  - apiGroups:
    - batch.tutorial.kubebuilder.io
    apiVersions:
    - v1
    operations:
    - CREATE
    - UPDATE
    resources:
    - cronjobs
  sideEffects: None
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /validate-batch-tutorial-kubebuilder-io-v1-cronjob
  failurePolicy: Fail
  name: vcronjob.kb.io
  rules:
  - apiGroups:
    - batch.tutorial.kubebuilder.io
    apiVersions:
    - v1
    operations:
    - CREATE
    - UPDATE
    - DELETE
    resources:
    - cronjobs
  sideEffects: None
"""

WIDGET = """\
from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel


class WidgetSpec(KubeModel):
    size: int = 0


class Widget(CustomResource):
    gvk = GroupVersionKind("toys.example.com", "v1", "Widget")
    spec: WidgetSpec = WidgetSpec()
"""


def webhook_file(project, text: str) -> Path:
    builder = project().api("toys", "v1", "Widget", "widget", WIDGET)
    folder = builder.root / "src" / "demo" / "webhooks" / "v1"
    folder.mkdir(parents=True)
    (folder / "widget_webhook.py").write_text(text)
    return builder.root


def test_cronjob_tutorial_output_is_controller_gens(project) -> None:
    root = webhook_file(project, '"""CronJob webhooks."""\n\n' + CRONJOB_MARKERS)
    changed = generate_manifests(root)
    manifest = root / "config/webhook/manifests.yaml"
    assert manifest in changed
    assert manifest.read_text() == CONTROLLER_GEN
    assert generate_manifests(root, check=True) == []


def test_optional_arguments() -> None:
    marker = parse_marker(
        "kubebuilder:webhook:path=/m,mutating=true,failurePolicy=ignore,sideEffects=NoneOnDryRun,"
        "groups=core,resources=pods;pods/status,verbs=*,versions=v1,name=m.pods.io,admissionReviewVersions=v1;v1beta1,"
        "matchPolicy=Exact,timeoutSeconds=5,reinvocationPolicy=IfNeeded",
        "w.py:3",
    )
    assert marker is not None
    [doc] = build_configurations([marker])
    [hook] = doc["webhooks"]
    assert hook["failurePolicy"] == "Ignore" and hook["sideEffects"] == "NoneOnDryRun"
    assert hook["rules"] == [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"], "resources": ["pods", "pods/status"]}
    ]
    assert (hook["matchPolicy"], hook["timeoutSeconds"], hook["reinvocationPolicy"]) == (
        "Exact",
        5,
        "IfNeeded",
    )
    assert hook["admissionReviewVersions"] == ["v1", "v1beta1"]


BASE = "path=/v,mutating=false,failurePolicy=fail,sideEffects=None,groups=g.io,resources=ws,verbs=create,versions=v1,name=v.g.io,admissionReviewVersions=v1"


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("kubebuilder:webhooks:" + BASE, "unknown marker +kubebuilder:webhooks"),
        ("kubebuilder:webhook:pth=/v," + BASE[7:], "has no argument 'pth'"),
        (
            "kubebuilder:webhook:" + BASE.replace("failurePolicy=fail", "failurePolicy=sometimes"),
            "unknown value for failurePolicy: sometimes",
        ),
        ("kubebuilder:webhook:" + BASE.replace("verbs=create", "verbs=get"), "unknown verb 'get'"),
        ("kubebuilder:webhook:" + BASE.replace("name=v.g.io", "name=vgio"), "at least three segments"),
        (
            "kubebuilder:webhook:" + BASE.replace("sideEffects=None", "sideEffects=Some"),
            "should not be set to `Some`",
        ),
        ("kubebuilder:webhook:" + BASE.replace(",sideEffects=None", ""), "sideEffects is required"),
        ("kubebuilder:webhook:" + BASE + ",timeoutSeconds=31", "between 1 and 30"),
        ("kubebuilder:webhook:" + BASE + ",reinvocationPolicy=IfNeeded", "only for mutating"),
        ("kubebuilder:webhook:" + BASE.replace(",name=v.g.io", ""), "needs name"),
    ],
)
def test_errors_name_file_and_line(project, marker: str, message: str) -> None:
    root = webhook_file(project, f'"""Webhooks."""\n\n\n# +{marker}\n')
    with pytest.raises(GenerateError) as err:
        generate_manifests(root)
    assert "widget_webhook.py:4" in str(err.value) and message in str(err.value)
    assert not (root / "config/webhook/manifests.yaml").exists()


def test_no_markers_no_manifest(project) -> None:
    root = webhook_file(project, '"""Nothing here."""\n')
    generate_manifests(root)
    assert not (root / "config/webhook").exists()


HUB = """\
from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel
from pyscaffold_op.runtime.webhook import Hub


class WidgetSpec(KubeModel):
    size: int = 0


# +kubebuilder:storageversion
class Widget(CustomResource, Hub):
    gvk = GroupVersionKind("toys.example.com", "v1", "Widget")
    spec: WidgetSpec = WidgetSpec()
"""

SPOKE = """\
from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel


class WidgetSpec(KubeModel):
    width: int = 0


class Widget(CustomResource):
    gvk = GroupVersionKind("toys.example.com", "v2", "Widget")
    spec: WidgetSpec = WidgetSpec()
{methods}"""

METHODS = """
    def convert_to(self):
        raise NotImplementedError

    @classmethod
    def convert_from(cls, hub):
        raise NotImplementedError
"""


def test_hub_kinds_get_a_conversion_webhook(project) -> None:
    builder = (
        project()
        .api("toys", "v1", "Widget", "widget", HUB)
        .api("toys", "v2", "Widget", "widget", SPOKE.format(methods=METHODS))
    )
    [crd] = render_crds(builder.root).values()
    assert crd["spec"]["conversion"] == {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {
                "service": {"name": "webhook-service", "namespace": "system", "path": "/convert"}
            },
            "conversionReviewVersions": ["v1"],
        },
    }
    generate_manifests(builder.root)
    written = yaml.safe_load((builder.root / "config/crd/bases/toys.example.com_widgets.yaml").read_text())
    assert written["spec"]["conversion"]["strategy"] == "Webhook"


def test_a_spoke_without_conversion_functions_is_an_error(project) -> None:
    builder = (
        project()
        .api("toys", "v1", "Widget", "widget", HUB)
        .api("toys", "v2", "Widget", "widget", SPOKE.format(methods=""))
    )
    with pytest.raises(
        GenerateError, match=r"Widget v2: a spoke of hub v1 needs convert_to\(\) and convert_from\(\)"
    ):
        render_crds(builder.root)
