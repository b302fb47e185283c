"""Fault probes (issue 17): each reproduces a fault found by driving the emulator, the CLI or a manager
into it, so it stays fixed. All are marked slow; CI runs them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Client, new_client

TESTS = Path(__file__).parents[1]
CRDS = TESTS / "envtest" / "crds"  # the cnat At kind the body and parameter probes write
RUNTIME_CRDS = TESTS / "runtime" / "crds"  # the Widget kind the manager probes reconcile
CMS = "/api/v1/namespaces/default/configmaps"
ATS = "/apis/cnat.programming-kubernetes.info/v1alpha1/namespaces/default/ats"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
async def env() -> AsyncIterator[Environment]:
    async with Environment(crd_paths=[CRDS, RUNTIME_CRDS], kubelet=None, bookmark_interval=0.2) as e:
        yield e


@pytest.fixture
async def http(env: Environment) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(base_url=env.url, timeout=30) as c:
        yield c


@pytest.fixture
async def api(env: Environment) -> AsyncIterator[Client]:
    c = new_client(env.config)
    try:
        yield c
    finally:
        await c.close()
