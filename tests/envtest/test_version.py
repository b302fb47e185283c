"""The emulator reports the Kubernetes release it is (envtest/kubeversion.py): the one the oracles are
pinned to in hack/oracles/versions.env, at /version, on the simulated kubelet's Node and in `pyop version`."""

from __future__ import annotations

import re
from pathlib import Path

import httpx2

from pyscaffold_op.commands.about import kubernetes_versions
from pyscaffold_op.envtest import Environment, KubeletSimulator
from pyscaffold_op.envtest.kubeversion import KUBERNETES_VERSION

VERSIONS_ENV = Path(__file__).resolve().parents[2] / "hack" / "oracles" / "versions.env"


def test_the_release_is_the_one_the_oracles_are_pinned_to() -> None:
    pinned = re.search(r"^KUBERNETES_VERSION=(\S+)$", VERSIONS_ENV.read_text(), re.M)
    assert pinned is not None
    assert pinned[1] == KUBERNETES_VERSION


async def test_version_and_the_kubelets_node_report_it() -> None:
    async with (
        Environment(kubelet=KubeletSimulator()) as env,
        httpx2.AsyncClient(base_url=env.url, timeout=10) as http,
    ):
        info = (await http.get("/version")).json()
        node = (await http.get("/api/v1/nodes/envtest-node")).json()
    major, minor = KUBERNETES_VERSION.lstrip("v").split(".")[:2]
    assert info["gitVersion"] == KUBERNETES_VERSION
    assert (info["major"], info["minor"]) == (major, minor)
    assert (info["emulationMajor"], info["emulationMinor"]) == (major, minor)
    assert (info["minCompatibilityMajor"], info["minCompatibilityMinor"]) == (major, str(int(minor) - 1))
    assert node["status"]["nodeInfo"]["kubeletVersion"] == KUBERNETES_VERSION


def test_pyop_version_names_it() -> None:
    assert kubernetes_versions()["envtest"] == KUBERNETES_VERSION
