"""`pyop bundle validate`: the at bundle passes; each rule refuses a bundle broken for it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from pyscaffold_op.dev.golden_at import AT_DIR
from pyscaffold_op.dev.regen import generate_manifests
from pyscaffold_op.olm.validate import validate_bundle

CSV = "manifests/programming-kubernetes.clusterserviceversion.yaml"
CRD = "manifests/programming-kubernetes.viper.run_ats.yaml"
ANNOTATIONS = "metadata/annotations.yaml"


def edit(bundle: Path, rel: str, change: Callable[[dict[str, Any]], None]) -> None:
    path = bundle / rel
    doc = yaml.safe_load(path.read_text())
    change(doc)
    path.write_text(yaml.safe_dump(doc))


def test_the_at_bundle_passes_the_default_suite(at_bundle: Path) -> None:
    report = validate_bundle(at_bundle)
    assert report.errors == []
    assert report.warnings == []


def test_the_placeholders_of_the_csv_base_fail_operatorhub(at_bundle: Path) -> None:
    report = validate_bundle(at_bundle, "suite=operatorframework")
    assert [f.message for f in report.errors] == [
        "csv.Spec.Icon elements should contain both data and mediatype"
    ]


def _spec(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["spec"]


def _ann(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["metadata"]["annotations"]


def _deployment(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["spec"]["install"]["spec"]["deployments"][0]


# (rule, file, change, optional suite, expected words of an error)
DEFAULT_CASES: list[tuple[str, str, Callable[[dict[str, Any]], Any], str]] = [
    ("csv-name", CSV, lambda d: d["metadata"].update(name="Bad_Name"), "metadata.name 'Bad_Name' is invalid"),
    ("csv-replaces", CSV, lambda d: _spec(d).update(replaces="UP"), "spec.replaces 'UP' is invalid"),
    ("csv-strategy", CSV, lambda d: _spec(d)["install"].update(strategy=""), "Spec.InstallStrategy.StrategyName"),
    ("csv-deployments", CSV, lambda d: _spec(d)["install"]["spec"].update(deployments=None), "StrategySpec.DeploymentSpecs"),
    ("csv-display-name", CSV, lambda d: _spec(d).pop("displayName"), "Spec.DisplayName"),
    ("csv-version", CSV, lambda d: _spec(d).update(version="v1.0"), "not a semantic version"),
    ("csv-examples-json", CSV, lambda d: _ann(d).update({"alm-examples": "[{"}), "invalid example"),
    ("csv-example-api", CSV, lambda d: _ann(d).update({"alm-examples": json.dumps([{"apiVersion": "x.io/v1", "kind": "Y"}])}), "example must have a provided API"),
    ("csv-install-modes", CSV, lambda d: _spec(d).pop("installModes"), "install modes not found"),
    ("csv-install-mode-dup", CSV, lambda d: _spec(d)["installModes"].append({"type": "AllNamespaces", "supported": True}), "duplicate install modes"),
    ("csv-none-supported", CSV, lambda d: [m.update(supported=False) for m in _spec(d)["installModes"]], "none of InstallModeTypes are supported"),
    ("csv-min-kube", CSV, lambda d: _spec(d).update(minKubeVersion="1.x"), "MinKubeVersion has an invalid value"),
    ("csv-annotation-case", CSV, lambda d: _ann(d).update({"olm.skiprange": "<1.0.0"}), "uses wrong case"),
    ("csv-owned-fields", CSV, lambda d: _spec(d)["customresourcedefinitions"]["owned"][0].pop("kind"), "required field missing: kind"),
    ("csv-owned-name", CSV, lambda d: _spec(d)["customresourcedefinitions"]["owned"][0].update(name="ats"), "couldn't parse plural.group"),
    ("csv-conversion-modes", CSV, lambda d: (_spec(d).update(webhookdefinitions=[{"type": "ConversionWebhook", "generateName": "c", "deploymentName": _deployment(d)["name"], "sideEffects": "None", "admissionReviewVersions": ["v1"], "conversionCRDs": ["ats.programming-kubernetes.viper.run"]}]), _spec(d)["installModes"][0].update(supported=True)), "only AllNamespaces"),
    ("csv-webhook-deployment", CSV, lambda d: _spec(d).update(webhookdefinitions=[{"type": "ValidatingAdmissionWebhook", "generateName": "v", "deploymentName": "nope", "sideEffects": "None", "admissionReviewVersions": ["v1"]}]), "is not a deployment of the install strategy"),
    ("bundle-owned-missing", CSV, lambda d: _spec(d)["customresourcedefinitions"]["owned"].append({"name": "bs.programming-kubernetes.viper.run", "version": "v1", "kind": "B", "description": "x", "displayName": "B"}), "owned CRD programming-kubernetes.viper.run/v1, Kind=B not found in bundle"),
    ("bundle-crd-not-owned", CSV, lambda d: _spec(d)["customresourcedefinitions"].pop("owned"), "is present in bundle but not defined in CSV"),
    ("crd-rules", CRD, lambda d: d["spec"]["versions"][0].update(storage=False), "storage"),
    ("crd-version", CRD, lambda d: d.update(apiVersion="apiextensions.k8s.io/v1beta1"), "only apiextensions.k8s.io/v1"),
    ("annotations-missing", ANNOTATIONS, lambda d: d["annotations"].pop("operators.operatorframework.io.bundle.package.v1"), "missing annotation operators.operatorframework.io.bundle.package.v1"),
    ("annotations-mediatype", ANNOTATIONS, lambda d: d["annotations"].update({"operators.operatorframework.io.bundle.mediatype.v1": "zip"}), "mediatype 'zip'"),
    ("annotations-default-channel", ANNOTATIONS, lambda d: d["annotations"].update({"operators.operatorframework.io.bundle.channel.default.v1": "stable"}), "default channel 'stable' is not one of"),
    ("annotations-manifests-dir", ANNOTATIONS, lambda d: d["annotations"].update({"operators.operatorframework.io.bundle.manifests.v1": "other/"}), "does not exist"),
    ("annotations-package", ANNOTATIONS, lambda d: d["annotations"].update({"operators.operatorframework.io.bundle.package.v1": "Bad_Pkg"}), "not a DNS-1123 subdomain"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "rel", "change", "expected"), DEFAULT_CASES, ids=[c[0] for c in DEFAULT_CASES]
)
def test_each_default_rule_refuses_its_broken_bundle(
    at_bundle: Path, rule: str, rel: str, change: Callable[[dict[str, Any]], Any], expected: str
) -> None:
    edit(at_bundle, rel, change)
    report = validate_bundle(at_bundle)
    assert any(expected in f.message for f in report.errors), [str(f) for f in report.findings]


def test_a_kind_a_bundle_may_not_hold_is_refused(at_bundle: Path) -> None:
    (at_bundle / "manifests" / "ns.yaml").write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"
    )
    assert any(
        "Namespace is not a kind a bundle may hold" in f.message for f in validate_bundle(at_bundle).errors
    )


def test_a_service_account_named_like_the_csvs_is_refused(at_bundle: Path) -> None:
    doc = yaml.safe_load((at_bundle / CSV).read_text())
    account = _deployment(doc)["spec"]["template"]["spec"]["serviceAccountName"]
    (at_bundle / "manifests" / "sa.yaml").write_text(
        f"apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {account}\n"
    )
    assert any("invalid service account" in f.message for f in validate_bundle(at_bundle).errors)


def test_no_csv_and_no_annotations_are_refused(at_bundle: Path) -> None:
    (at_bundle / CSV).unlink()
    (at_bundle / ANNOTATIONS).unlink()
    messages = [f.message for f in validate_bundle(at_bundle).errors]
    assert any("unable to find a csv" in m for m in messages)
    assert any("metadata/annotations.yaml" in m for m in messages)


def test_a_bundle_over_a_mebibyte_compressed_is_refused(at_bundle: Path) -> None:
    import base64
    import os

    data = base64.b64encode(os.urandom(1_200_000)).decode()
    (at_bundle / "manifests" / "big.yaml").write_text(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\nbinaryData:\n  x: {data}\n"
    )
    assert any("maximum bundle compressed size" in f.message for f in validate_bundle(at_bundle).errors)


OPERATORHUB_CASES: list[tuple[str, Callable[[dict[str, Any]], Any], str]] = [
    ("provider", lambda d: _spec(d)["provider"].update(name=""), "csv.Spec.Provider.Name not specified"),
    ("maintainer-fields", lambda d: _spec(d)["maintainers"][0].pop("email"), "should contain both name and email"),
    ("maintainer-email", lambda d: _spec(d)["maintainers"][0].update(email="not an email"), "email not an email is invalid"),
    ("link-fields", lambda d: _spec(d)["links"][0].pop("name"), "should contain both name and url"),
    ("link-url", lambda d: _spec(d)["links"][0].update(url="no url"), "url no url is invalid"),
    ("icon-count", lambda d: _spec(d).update(icon=[{"base64data": "aGk=", "mediatype": "image/png"}] * 2), "should only have one element"),
    ("icon-mediatype", lambda d: _spec(d).update(icon=[{"base64data": "aGk=", "mediatype": "image/bmp"}]), "does not have a valid mediatype"),
    ("icon-base64", lambda d: _spec(d).update(icon=[{"base64data": "!!", "mediatype": "image/png"}]), "not valid base64"),
    ("capabilities", lambda d: _ann(d).update(capabilities="Magic"), "is not a valid capabilities level"),
    ("categories", lambda d: _ann(d).update(categories="Database,Toys"), 'value "Toys" is not in the set of standard categories'),
    ("max-k8s", lambda d: _ann(d).update({"operatorhub.io/ui-metadata-max-k8s-version": "one"}), "ui-metadata-max-k8s-version"),
    ("min-kube", lambda d: _spec(d).update(minKubeVersion="latest"), "MinKubeVersion has an invalid value"),
    ("version", lambda d: _spec(d).pop("version"), "csv.Spec.Version must be set"),
]  # fmt: skip


def _with_icon(doc: dict[str, Any]) -> None:
    _spec(doc)["icon"] = [{"base64data": "aGk=", "mediatype": "image/png"}]


@pytest.mark.parametrize(
    ("rule", "change", "expected"), OPERATORHUB_CASES, ids=[c[0] for c in OPERATORHUB_CASES]
)
def test_each_operatorhub_rule_refuses_its_broken_bundle(
    at_bundle: Path, rule: str, change: Callable[[dict[str, Any]], Any], expected: str
) -> None:
    edit(at_bundle, CSV, _with_icon)
    assert validate_bundle(at_bundle, "name=operatorhub").passed
    edit(at_bundle, CSV, change)
    report = validate_bundle(at_bundle, "suite=operatorframework")
    assert any(expected in f.message for f in report.errors), [str(f) for f in report.findings]


def test_good_practices(at_bundle: Path) -> None:
    edit(at_bundle, CSV, _with_icon)
    assert validate_bundle(at_bundle, "name=good-practices").errors == []

    def change(d: dict[str, Any]) -> None:
        _spec(d)["customresourcedefinitions"]["owned"][0]["description"] = ""
        _deployment(d)["spec"]["template"]["spec"]["containers"][0]["resources"] = {}
        d["metadata"]["name"] = "programming-kubernetes-latest"

    edit(at_bundle, CSV, change)
    edit(
        at_bundle,
        CRD,
        lambda d: d["spec"]["versions"].append(
            {**d["spec"]["versions"][0], "name": "v0", "served": False, "storage": False}
        ),
    )
    report = validate_bundle(at_bundle, "name=good-practices")
    assert any("has an empty description" in f.message for f in report.errors)
    warnings = " ".join(f.message for f in report.warnings)
    assert "resource requests for the container: (manager)" in warnings
    assert "not following the versioning convention" in warnings
    assert "channel(s) ['alpha'] are not following the recommended naming convention" in warnings
    assert "has unserved versions ['v0']" in warnings


def test_deprecated_apis_are_errors_from_the_release_that_removed_them(at_bundle: Path) -> None:
    (at_bundle / "manifests" / "pdb.yaml").write_text(
        "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: p\n"
    )
    assert not validate_bundle(at_bundle, "name=alpha-deprecated-apis", "1.24").errors
    assert validate_bundle(at_bundle, "name=alpha-deprecated-apis", "1.24").warnings
    assert any(
        "removed in v1.25" in f.message
        for f in validate_bundle(at_bundle, "name=alpha-deprecated-apis", "1.25").errors
    )


def test_an_unknown_optional_selection_is_a_usage_error(at_bundle: Path) -> None:
    from pyscaffold_op.errors import ValidationError

    with pytest.raises(ValidationError, match="suite=operatorframework"):
        validate_bundle(at_bundle, "suite=everything")


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_a_bundle_mounting_cert_managers_secret_is_warned_until_the_webhook_patch_is_on(
    tmp_path: Path,
) -> None:
    """Issue 35: after `create webhook`, config/default mounts Secret webhook-server-cert, which only
    cert-manager makes; under OLM the Pod never starts until config/manifests' [WEBHOOK] patches are
    uncommented. The bundle of such a project is warned; with the patches on it is not."""
    from pyscaffold_op.olm.bundle import BundleOptions, generate_bundle
    from pyscaffold_op.olm.csvbase import generate_kustomize_manifests
    from pyscaffold_op.olm.kustomize import read_manifests
    from pyscaffold_op.scaffold.inputs import WebhookOptions
    from pyscaffold_op.scaffold.webhook import create_webhook

    root = tmp_path / "at"
    shutil.copytree(AT_DIR, root, ignore=shutil.ignore_patterns("__pycache__"))
    hooks = WebhookOptions(
        group="programming-kubernetes", version="v1alpha1", kind="At", defaulting=True, validation=True
    )
    create_webhook(hooks, root)
    generate_manifests(root)

    def bundle_warnings() -> list[str]:
        generate_kustomize_manifests(root)
        generate_bundle(root, read_manifests(root, None, "config/manifests"), BundleOptions(version="0.0.1"))
        return [f.message for f in validate_bundle(root / "bundle").warnings]

    assert any("mounts Secret 'webhook-server-cert'" in w and "[WEBHOOK]" in w for w in bundle_warnings())
    kustomization = root / "config/manifests/kustomization.yaml"
    text = kustomization.read_text()
    start = text.index("#patches:")
    kustomization.write_text(text[:start] + text[start:].replace("\n#", "\n").removeprefix("#"))
    assert not any("webhook-server-cert" in w for w in bundle_warnings())
