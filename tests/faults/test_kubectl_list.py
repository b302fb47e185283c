"""`kubectl apply -f` of a `kind: List` against `pyop envtest serve`: kubectl validates List items
with /openapi/v2, which used to be 404 (the apply failed before sending anything)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

LIST = """apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: one}
  data: {a: "1"}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: two}
  data: {a: "2"}
"""


def test_kubectl_apply_list(tmp_path: Path) -> None:
    kc = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pyscaffold_op",
            "envtest",
            "serve",
            "--no-kubelet",
            "--kubeconfig-out",
            str(kc),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == str(kc)  # printed once the server is up
        manifest = tmp_path / "list.yaml"
        manifest.write_text(LIST)

        def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                ["kubectl", "--kubeconfig", str(kc), *args], capture_output=True, text=True, timeout=60
            )

        out = kubectl("apply", "-f", str(manifest))
        assert out.returncode == 0, out.stderr
        assert out.stdout.split("\n")[:2] == ["configmap/one created", "configmap/two created"]
        out = kubectl("apply", "-f", str(manifest))
        assert out.returncode == 0 and "configmap/one unchanged" in out.stdout, out.stderr
        out = kubectl("get", "configmap", "one", "two", "-o", "name")
        assert out.stdout.split() == ["configmap/one", "configmap/two"]
    finally:
        proc.terminate()
        proc.wait(30)
