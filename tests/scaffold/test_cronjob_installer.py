"""`make build-installer` and `make helm` of `testdata/cronjob/` (a project with two versions, a
conversion webhook and a CRD of 1.4 MB that embeds a Pod template), judged by the real tools: Helm lints
the chart strictly and renders the objects install.yaml holds, and the real kube-apiserver accepts
install.yaml applied the way the project's README says. The generic chart tests
(`test_helm_chart.py`) use a small one-version project; this is the large, multiversion case."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from pyscaffold_op.dev.golden_cronjob import CRONJOB_DIR
from pyscaffold_op.dev.oracles import missing_reason, oracle_bin

from .chartrender import by_key, lint_chart, objects, render_chart

KUBECTL = shutil.which("kubectl")
NAMESPACE = "project-system"

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(KUBECTL is None or shutil.which("make") is None, reason="kubectl or make missing"),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("installer") / "cronjob"
    shutil.copytree(CRONJOB_DIR, root, ignore=shutil.ignore_patterns("wheels", "__pycache__", ".*_cache"))
    pyop = Path(sys.executable).parent / "pyop"
    run = subprocess.run(
        ["make", "build-installer", "helm", f"PYOP={pyop}", "IMG=example.com/project:v1"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return root


def installer(root: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all((root / "dist/install.yaml").read_text()) if doc]


def test_the_chart_lints_strict(project: Path) -> None:
    lint_chart(project / "dist/chart", namespace=NAMESPACE)


def test_the_chart_renders_what_install_yaml_holds(project: Path) -> None:
    """Default values give back install.yaml object by object, but for Helm's labels and the CRD's keep
    policy; the conversion webhook's Service and cert-manager's CA injection included."""
    expected = []
    for obj in installer(project):
        if obj["kind"] == "Namespace":  # Helm: --create-namespace
            continue
        obj = copy.deepcopy(obj)
        obj["metadata"].setdefault("labels", {}).update(
            {
                "app.kubernetes.io/managed-by": "Helm",
                "app.kubernetes.io/instance": "rel",
                "helm.sh/chart": "project-0.1.0",
            }
        )
        if obj["kind"] == "CustomResourceDefinition":
            obj["metadata"].setdefault("annotations", {})["helm.sh/resource-policy"] = "keep"
        expected.append(obj)
    rendered = by_key(objects(render_chart(project / "dist/chart", namespace=NAMESPACE, name="rel")))
    assert rendered == by_key(expected)
    crd = rendered["CustomResourceDefinition", "cronjobs.batch.tutorial.kubebuilder.io"]
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["namespace"] == NAMESPACE


def readme_install_command(root: Path) -> list[str]:
    """The command the project's README gives for installing dist/install.yaml."""
    found = re.search(r"`(kubectl apply [^`]*dist/install\.yaml)`", (root / "README.md").read_text())
    assert found, "the README names no kubectl command for dist/install.yaml"
    return found.group(1).split()


def test_the_readmes_install_command_is_accepted_by_kube_apiserver(project: Path, tmp_path: Path) -> None:
    from pyscaffold_op.envtest import Environment

    apiserver = oracle_bin("kube-apiserver")
    if apiserver is None:
        pytest.skip(missing_reason("kube-apiserver"))
    # cert-manager's Certificate and Issuer need cert-manager, which the README installs first
    without_cert_manager = [
        o for o in installer(project) if not o["apiVersion"].startswith("cert-manager.io/")
    ]
    install = tmp_path / "dist" / "install.yaml"
    install.parent.mkdir()
    install.write_text(yaml.safe_dump_all(without_cert_manager))
    command = readme_install_command(project)
    assert command[0] == "kubectl"
    env = Environment(
        mode="real", assets=apiserver.parent, kubeconfig_path=tmp_path / "kubeconfig"
    ).start_in_thread(timeout=120)
    try:
        run = subprocess.run(
            [str(KUBECTL), "--kubeconfig", str(env.kubeconfig_path), *command[1:]],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        env.stop()
    assert run.returncode == 0, run.stderr
    assert (
        "customresourcedefinition.apiextensions.k8s.io/cronjobs.batch.tutorial.kubebuilder.io" in run.stdout
    )
