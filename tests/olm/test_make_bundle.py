"""The user's path: `make bundle` on a copy of the at example gives a bundle `pyop bundle validate`
accepts and scorecard's basic and OLM suites pass (docs/olm.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pyscaffold_op.dev.golden_at import AT_DIR

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=300)


@pytest.mark.skipif(
    shutil.which("kubectl") is None or shutil.which("make") is None, reason="kubectl is not installed"
)
def test_make_bundle_then_validate_and_scorecard(tmp_path: Path) -> None:
    at = tmp_path / "at"
    shutil.copytree(AT_DIR, at, ignore=shutil.ignore_patterns("__pycache__"))
    pyop = f"{sys.executable} -m pyscaffold_op"
    made = run(
        [
            "make",
            "bundle",
            f"PYOP={pyop}",
            "VERSION=0.1.0",
            "CHANNELS=stable,fast",
            "DEFAULT_CHANNEL=stable",
            "IMG=example.com/at:v0.1.0",
        ],
        at,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    assert "All validation tests have completed successfully" in made.stdout
    csv = (at / "bundle/manifests/programming-kubernetes.clusterserviceversion.yaml").read_text()
    assert "name: programming-kubernetes.v0.1.0" in csv
    assert "image: example.com/at:v0.1.0" in csv
    annotations = (at / "bundle/metadata/annotations.yaml").read_text()
    assert "operators.operatorframework.io.bundle.channels.v1: stable,fast" in annotations
    assert "operators.operatorframework.io.bundle.channel.default.v1: stable" in annotations
    dockerfile = (at / "bundle.Dockerfile").read_text()
    assert "LABEL operators.operatorframework.io.bundle.package.v1=programming-kubernetes" in dockerfile
    assert (at / "bundle/tests/scorecard/config.yaml").is_file()

    scored = run([sys.executable, "-m", "pyscaffold_op", "scorecard", "bundle", "-o", "json"], at)
    assert scored.returncode == 0, scored.stdout + scored.stderr
    results = [t["status"]["results"][0] for t in json.loads(scored.stdout)["items"]]
    assert [(r["name"], r["state"]) for r in results] == [
        ("basic-check-spec", "pass"),
        ("olm-bundle-validation", "pass"),
        ("olm-crds-have-validation", "pass"),
        ("olm-crds-have-resources", "pass"),
        ("olm-spec-descriptors", "pass"),
        ("olm-status-descriptors", "pass"),
    ]

    # the good-practices suite is happy with stable/fast channels; OperatorHub wants an icon
    hub = run(
        [
            sys.executable,
            "-m",
            "pyscaffold_op",
            "bundle",
            "validate",
            "bundle",
            "--select-optional",
            "suite=operatorframework",
        ],
        at,
    )
    assert hub.returncode == 1
    assert "csv.Spec.Icon elements should contain both data and mediatype" in hub.stderr
    assert "channel(s)" not in hub.stdout


def test_use_image_digests_refuses_tags(tmp_path: Path) -> None:
    from pyscaffold_op.errors import GenerateError
    from pyscaffold_op.olm.bundle import BundleOptions, build_bundle

    objects = [
        {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "ClusterServiceVersion",
            "metadata": {"name": "x"},
            "spec": {},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "m"},
            "spec": {
                "template": {"spec": {"containers": [{"name": "manager", "image": "example.com/m:v1"}]}}
            },
        },
    ]
    with pytest.raises(GenerateError, match=r"not pinned by digest: example\.com/m:v1"):
        build_bundle(objects, "x", BundleOptions(use_image_digests=True))
    objects[1]["spec"]["template"]["spec"]["containers"][0]["image"] = "example.com/m@sha256:" + "a" * 64
    bundle = build_bundle(objects, "x", BundleOptions(use_image_digests=True))
    assert bundle.csv["spec"]["relatedImages"] == [
        {"image": "example.com/m@sha256:" + "a" * 64, "name": "manager"}
    ]
    with pytest.raises(GenerateError, match="not a semantic version"):
        build_bundle(objects, "x", BundleOptions(version="v1"))


def test_webhooks_become_webhook_definitions() -> None:
    from pyscaffold_op.olm.bundle import BundleOptions, build_bundle

    hook = {
        "name": "vat-v1.example.com",
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": "Fail",
        "clientConfig": {
            "service": {"name": "p-webhook-service", "namespace": "p-system", "path": "/validate-x"}
        },
        "rules": [
            {
                "apiGroups": ["example.com"],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["ats"],
            }
        ],
    }
    objects = [
        {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion", "metadata": {"name": "x"}, "spec": {}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "p-controller-manager"}, "spec": {"template": {"spec": {"containers": [{"name": "manager", "image": "m:v1"}]}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "p-webhook-service"}, "spec": {"ports": [{"port": 443, "targetPort": 9443}]}},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "v"}, "webhooks": [hook]},
        {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "serving-cert"}},
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "ats.example.com"}, "spec": {"group": "example.com", "names": {"kind": "At", "plural": "ats"}, "versions": [{"name": "v1"}], "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {"service": {"name": "p-webhook-service", "path": "/convert"}}}}}},
    ]  # fmt: skip
    bundle = build_bundle(objects, "p", BundleOptions())
    defs = bundle.csv["spec"]["webhookdefinitions"]
    assert [d["type"] for d in defs] == ["ValidatingAdmissionWebhook", "ConversionWebhook"]
    assert defs[0]["deploymentName"] == "p-controller-manager"
    assert (defs[0]["containerPort"], defs[0]["targetPort"], defs[0]["webhookPath"]) == (
        443,
        9443,
        "/validate-x",
    )
    assert defs[1]["conversionCRDs"] == ["ats.example.com"]
    assert sorted(bundle.manifests) == [
        "example.com_ats.yaml"
    ]  # the Service, configuration and Certificate are OLM's
    assert "clientConfig" not in bundle.manifests["example.com_ats.yaml"]["spec"]["conversion"]["webhook"]
