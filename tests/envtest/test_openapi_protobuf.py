"""/openapi/v2 as gnostic protobuf (what kubectl asks for, to validate the items of a `kind: List`):
kubectl run against the emulator and against kube-apiserver must refuse (or accept) the same Lists
with the same words."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from pyscaffold_op.dev.oracles import missing_reason, oracle_bin
from pyscaffold_op.envtest import Environment

from .conftest import CRDS

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

CONTAINER: dict[str, Any] = {"name": "c", "image": "nginx"}
DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "l2"},
    "spec": {
        "selector": {"matchLabels": {"app": "l2"}},
        "template": {"metadata": {"labels": {"app": "l2"}}, "spec": {"containers": [CONTAINER]}},
    },
}
AT: dict[str, Any] = {
    "apiVersion": "cnat.programming-kubernetes.info/v1alpha1",
    "kind": "At",
    "metadata": {"name": "l3"},
    "spec": {"schedule": "2026-12-02T15:00:00Z", "command": "echo"},
}
LISTS: dict[str, list[dict[str, Any]]] = {
    "valid": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "l1"}, "data": {"a": "1"}},
        DEPLOYMENT,
    ],
    "unknown-nested-field": [
        {
            **DEPLOYMENT,
            "spec": {
                **DEPLOYMENT["spec"],
                "template": {"spec": {"containers": [{**CONTAINER, "bogus": 1}]}},
            },
        }
    ],
    "wrong-types": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "l1", "bogus": 2}, "data": {"a": 1}},
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "s"},
            "spec": {"ports": [{"port": "eighty"}]},
        },
    ],
    "custom-resource": [AT, {**AT, "spec": {**AT["spec"], "bogus": True, "replicas": "two"}}],
}


@pytest.fixture(scope="module")
def real_kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    server = oracle_bin("kube-apiserver")
    if server is None or oracle_bin("etcd") is None:
        pytest.skip(missing_reason("kube-apiserver"))
    from pyscaffold_op.envtest.controlplane import ControlPlane

    with ControlPlane(assets=server.parent) as cp:
        cp.install_crds(yaml.safe_load_all(next(CRDS.glob("*.yaml")).read_text()))
        path = tmp_path_factory.mktemp("real") / "kubeconfig"
        path.write_text(yaml.safe_dump(cp.kubeconfig_dict()))
        yield path


def create(kubeconfig: Path, manifest: Path) -> tuple[int, str]:
    proc = subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), "create", "--dry-run=server", "-f", str(manifest)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc.returncode, proc.stderr


@pytest.mark.oracle
@pytest.mark.parametrize("case", LISTS)
def test_list_validation_as_against_kube_apiserver(
    real_kubeconfig: Path, thread_env: Environment, tmp_path: Path, case: str
) -> None:
    manifest = tmp_path / "list.yaml"
    manifest.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": LISTS[case]}))
    emulated = create(thread_env.kubeconfig_path, manifest)
    real = create(real_kubeconfig, manifest)
    assert emulated == real
    assert (real[0] == 0) == (case == "valid")  # the cases mean what they say
