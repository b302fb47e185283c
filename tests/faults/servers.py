"""The API servers the watch faults run against: the emulator, and the real kube-apiserver + etcd (oracle
tests, skipped without `make oracles`), each reached directly or through a `FreezableProxy`."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest

from pyscaffold_op.dev.oracles import missing_reason, oracle_bin
from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import RestConfig

from .conftest import RUNTIME_CRDS
from .tcpproxy import FreezableProxy

_APISERVER, _ETCD = oracle_bin("kube-apiserver"), oracle_bin("etcd")
_MISSING = None
if _APISERVER is None or _ETCD is None:
    _MISSING = missing_reason("kube-apiserver" if _APISERVER is None else "etcd")

# parametrize a test over both servers: `@pytest.mark.parametrize("mode", MODES)`
MODES = [
    pytest.param("emulator"),
    pytest.param(
        "real", marks=[pytest.mark.oracle, pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")]
    ),
]


def environment(mode: str, **options: Any) -> Environment:
    """An environment serving the runtime tests' Widget CRD (not started)."""
    if mode == "real":
        assert _APISERVER is not None
        assets = _APISERVER.parent
        return Environment(crd_paths=[RUNTIME_CRDS], kubelet=None, real=True, assets=assets, **options)
    return Environment(crd_paths=[RUNTIME_CRDS], kubelet=None, **options)


def through(config: RestConfig, proxy: FreezableProxy) -> RestConfig:
    """`config` with its server replaced by the proxy in front of it (TLS verified as before)."""
    scheme = config.server.split("://", 1)[0]
    return dataclasses.replace(config, server=f"{scheme}://{proxy.url_host}")


@contextlib.asynccontextmanager
async def proxied(env: Environment) -> AsyncIterator[FreezableProxy]:
    host, _, port = env.url.split("://", 1)[1].rpartition(":")
    async with FreezableProxy(host, int(port)) as proxy:
        yield proxy
