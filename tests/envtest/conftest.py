from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from pyscaffold_op.envtest import Environment

CRDS = Path(__file__).parent / "crds"
AT_API = "/apis/cnat.programming-kubernetes.info/v1alpha1"
ATS = f"{AT_API}/namespaces/default/ats"


def at(name: str = "example", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "cnat.programming-kubernetes.info/v1alpha1",
        "kind": "At",
        "metadata": {"name": name},
        "spec": {"schedule": "2026-12-02T15:00:00Z", "command": "echo hi", **spec},
    }


def cm(name: str, labels: dict[str, str] | None = None, **data: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


@pytest.fixture
async def env() -> AsyncIterator[Environment]:
    async with Environment(crd_paths=[CRDS], bookmark_interval=0.1) as e:
        yield e


@pytest.fixture
async def http(env: Environment) -> AsyncIterator[httpx2.AsyncClient]:
    """Raw HTTP over loopback, to check status codes and bodies byte for byte."""
    async with httpx2.AsyncClient(base_url=env.url, timeout=10) as c:
        yield c


@pytest.fixture(scope="module")
def thread_env() -> Iterator[Environment]:
    """One server on its own thread for sync clients (kubernetes, kubectl)."""
    env = Environment(crd_paths=[CRDS]).start_in_thread()
    yield env
    env.stop()
