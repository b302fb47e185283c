"""`make install` / `deploy` / `undeploy` of a scaffolded project against `pyop envtest serve`, by kubectl.

install and deploy use server-side apply (client-side apply's last-applied annotation overflows on large
CRDs); a CRD the emulator installed from `--crds` is taken over after the user changes the types.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pyscaffold_op.dev.regen import GOLDEN_DIR

pytestmark = [
    pytest.mark.slow,
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
    pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed"),
]

CRD = "ats.programming-kubernetes.viper.run"
TYPES = "src/programming_kubernetes/api/v1alpha1/at_types.py"


def wait_for(predicate: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(GOLDEN_DIR, root)
    return root


@pytest.fixture
def served(project: Path, tmp_path: Path) -> Iterator[dict[str, str]]:
    """`pyop envtest serve --crds config/crd/bases` in the project; yields the environment for kubectl."""
    kubeconfig = tmp_path / "kubeconfig"
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    command = [sys.executable, "-m", "pyscaffold_op", "envtest", "serve", "--no-kubelet"]
    command += ["--crds", "config/crd/bases", "--kubeconfig-out", str(kubeconfig)]
    server = subprocess.Popen(
        command, cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        wait_for(kubeconfig.exists, "the emulator's kubeconfig")
        yield env
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def make(project: Path, env: dict[str, str], target: str) -> str:
    args = ["make", "-s", target, f"PYOP={sys.executable} -m pyscaffold_op", "KUBECTL=kubectl"]
    done = subprocess.run(args, cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (target, done.stdout, done.stderr)
    return done.stdout


def kubectl(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["kubectl", *args], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_install_deploy_undeploy_with_server_side_apply(project: Path, served: dict[str, str]) -> None:
    description = "{.spec.versions[0].schema.openAPIV3Schema.description}"
    assert (
        kubectl(served, "get", "crd", CRD, "-o", f"jsonpath={description}")
        == "At is the Schema for the ats API."
    )
    # the user documents the kind, then installs the new CRD over the one the emulator loaded
    types = project / TYPES
    types.write_text(
        types.read_text().replace("At is the Schema for the ats API.", "An At runs a command once.")
    )
    assert "serverside-applied" in make(project, served, "install")
    assert kubectl(served, "get", "crd", CRD, "-o", f"jsonpath={description}") == "An At runs a command once."
    managers = kubectl(
        served,
        "get",
        "crd",
        CRD,
        "--show-managed-fields",
        "-o",
        "jsonpath={.metadata.managedFields[*].operation}",
    )
    assert "Apply" in managers.split()
    annotations = kubectl(served, "get", "crd", CRD, "-o", "jsonpath={.metadata.annotations}")
    assert "last-applied-configuration" not in annotations

    out = make(project, served, "deploy")
    assert "deployment.apps/programming-kubernetes-controller-manager serverside-applied" in out
    image = "{.spec.template.spec.containers[0].image}"
    deployment = [
        "-n",
        "programming-kubernetes-system",
        "deployment",
        "programming-kubernetes-controller-manager",
    ]
    assert kubectl(served, "get", *deployment, "-o", f"jsonpath={image}") == "controller:latest"
    make(project, served, "undeploy")
    wait_for(
        lambda: "programming-kubernetes-system" not in kubectl(served, "get", "namespaces", "-o", "name"),
        "the namespace to go",
    )
    assert kubectl(served, "get", "crd", "-o", "name") == ""
