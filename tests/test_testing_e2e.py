"""pyscaffold_op.testing.e2e's pure parts: where the suite runs, what it expects of each sample, and
the answers it reads (the processes themselves: tests/scaffold/test_e2e_scaffold.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pyscaffold_op.dev.regen import REPO_ROOT
from pyscaffold_op.testing.e2e import Sample, curl_answer, metric_value, samples, target

AT = REPO_ROOT / "testdata" / "at"


@pytest.mark.parametrize(
    ("existing", "option", "env", "expected"),
    [
        ("", None, "", "emulator"),
        ("", "real", "", "real"),
        ("", None, "real", "real"),
        ("", "emulator", "real", "emulator"),  # the command line wins over the environment
        ("", "cluster", "", "cluster"),
        ("true", "real", "", "kubeconfig"),  # USE_EXISTING_CLUSTER=true: the kubeconfig's cluster
        ("TRUE", None, "", "kubeconfig"),
        ("false", None, "", "emulator"),
    ],
)
def test_the_target_follows_use_existing_cluster_then_the_envtest_choice(
    monkeypatch: pytest.MonkeyPatch, existing: str, option: str | None, env: str, expected: str
) -> None:
    monkeypatch.setenv("USE_EXISTING_CLUSTER", existing)
    monkeypatch.setenv("PYOP_ENVTEST", env)
    assert target(option) == expected


def test_the_at_sample_is_reconciled_by_the_at_controller_and_calls_no_webhook() -> None:
    (sample,) = samples(AT)
    assert sample == Sample(
        path=AT / "config" / "samples" / "programming-kubernetes_v1alpha1_at.yaml",
        obj=sample.obj,
        kind="At",
        plural="ats",
        namespaced=True,
        controller="at",
        webhooks=(),
    )
    assert sample.obj["spec"]["command"]


def test_a_samples_webhooks_are_the_paths_whose_rules_create_its_resource(tmp_path: Path) -> None:
    root = tmp_path / "at"
    shutil.copytree(AT, root, ignore=shutil.ignore_patterns("wheels"))
    (root / "config" / "webhook").mkdir()
    (root / "config" / "webhook" / "manifests.yaml").write_text(
        """apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: mutating-webhook-configuration}
webhooks:
- name: mat-v1alpha1.kb.io
  clientConfig: {service: {name: webhook-service, namespace: system, path: /mutate-at}}
  rules:
  - apiGroups: [programming-kubernetes.viper.run]
    apiVersions: [v1alpha1]
    operations: [CREATE, UPDATE]
    resources: [ats]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: validating-webhook-configuration}
webhooks:
- name: vat-v1alpha1.kb.io
  clientConfig: {service: {name: webhook-service, namespace: system, path: /validate-at}}
  rules:
  - apiGroups: [programming-kubernetes.viper.run]
    apiVersions: [v1alpha1]
    operations: [UPDATE]
    resources: [ats]
- name: vother.kb.io
  clientConfig: {service: {name: webhook-service, namespace: system, path: /validate-other}}
  rules:
  - {apiGroups: [other.viper.run], apiVersions: [v1], operations: ["*"], resources: [ats]}
"""
    )
    (sample,) = samples(root)
    assert sample.webhooks == ("/mutate-at",)  # not the update-only one, not another group's


def test_metric_values_are_summed_over_the_matching_labels() -> None:
    text = """# HELP controller_runtime_reconcile_total Total number of reconciliations per controller
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="at",result="success"} 3.0
controller_runtime_reconcile_total{controller="at",result="error"} 1.0
controller_runtime_reconcile_total{controller="other",result="success"} 7.0
"""
    assert metric_value(text, "controller_runtime_reconcile_total", controller="at") == 4
    assert metric_value(text, "controller_runtime_reconcile_total", controller="at", result="success") == 3
    assert metric_value(text, "controller_runtime_reconcile_total", controller="missing") == 0


def test_the_curl_pods_answer_is_its_body_then_the_status_line() -> None:
    assert curl_answer("# HELP x\nx 1\n200") == (200, "# HELP x\nx 1")
    assert curl_answer("Authentication failed\n401") == (401, "Authentication failed")
    assert curl_answer("curl: (7) Failed to connect") == (0, "curl: (7) Failed to connect")
