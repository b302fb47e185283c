from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Client, Manager, ManagerOptions, new_client

CRDS = Path(__file__).parent / "crds"


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


def make_manager(env: Environment, **kwargs: Any) -> Manager:
    """A manager for tests: no servers unless asked for."""
    kwargs.setdefault("health_probe_bind_address", "0")
    kwargs.setdefault("metrics_bind_address", "0")
    kwargs.setdefault("graceful_shutdown_timeout", 5.0)
    return Manager(env.config, ManagerOptions(**kwargs))
