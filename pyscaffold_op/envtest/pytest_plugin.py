"""pytest fixtures for projects tested against the emulator.

    # tests/conftest.py
    pytest_plugins = ["pyscaffold_op.envtest.pytest_plugin"]

Fixtures: `envtest_crd_paths` (override to choose CRD folders), `envtest_kubelet` (override with
`KubeletSimulator(rule=...)` or None), `envtest_workloads` (None: override with `Workloads()` to run
Deployments, Jobs, ... as a cluster would), `envtest` (a running `Environment`), `kubeconfig` (its
path as a string) and `client` (a `pyscaffold_op.runtime` client for it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pyscaffold_op.envtest import Environment, KubeletSimulator, Workloads


@pytest.fixture
def envtest_crd_paths(request: pytest.FixtureRequest) -> list[Path]:
    """`<rootdir>/config/crd/bases` when it exists, else no CRDs."""
    bases = Path(str(request.config.rootpath)) / "config" / "crd" / "bases"
    return [bases] if bases.is_dir() else []


@pytest.fixture
def envtest_kubelet() -> KubeletSimulator | None:
    return KubeletSimulator()


@pytest.fixture
def envtest_workloads() -> Workloads | None:
    """No workload controllers, like envtest's bare API server; return `Workloads()` to opt in."""
    return None


@pytest.fixture
async def envtest(
    envtest_crd_paths: list[Path],
    envtest_kubelet: KubeletSimulator | None,
    envtest_workloads: Workloads | None,
) -> AsyncIterator[Environment]:
    async with Environment(
        crd_paths=envtest_crd_paths, kubelet=envtest_kubelet, workloads=envtest_workloads or False
    ) as env:
        yield env


@pytest.fixture
def kubeconfig(envtest: Environment) -> str:
    return str(envtest.kubeconfig_path)


@pytest.fixture
async def client(envtest: Environment) -> AsyncIterator[Any]:
    # imported here to keep the plugin cheap to load; a broken runtime must fail the test, not skip it
    from pyscaffold_op.runtime import new_client

    c = new_client(envtest.config)
    try:
        yield c
    finally:
        await c.close()
