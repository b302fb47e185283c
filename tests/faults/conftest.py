from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from pyscaffold_op.envtest import Environment

CRDS = Path(__file__).parent.parent / "envtest" / "crds"
CMS = "/api/v1/namespaces/default/configmaps"
ATS = "/apis/cnat.programming-kubernetes.info/v1alpha1/namespaces/default/ats"


@pytest.fixture
async def env() -> AsyncIterator[Environment]:
    async with Environment(crd_paths=[CRDS]) as e:
        yield e


@pytest.fixture
async def http(env: Environment) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(base_url=env.url, timeout=30) as c:
        yield c
