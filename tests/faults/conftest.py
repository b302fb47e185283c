"""Fault probes (issue 17): each reproduces a fault found by driving a manager into it. Marked slow."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Client, new_client

CRDS = Path(__file__).parents[1] / "runtime" / "crds"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
async def env() -> AsyncIterator[Environment]:
    async with Environment(crd_paths=[CRDS], kubelet=None, bookmark_interval=0.2) as e:
        yield e


@pytest.fixture
async def api(env: Environment) -> AsyncIterator[Client]:
    c = new_client(env.config)
    try:
        yield c
    finally:
        await c.close()
