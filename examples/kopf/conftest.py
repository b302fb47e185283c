"""Fixtures of kopf's examples on pyop: the KopfExample CRD, the admission example's webhook
configurations (from its `+kubebuilder:webhook` markers) and a manager, on pyop's pytest plugin, so
every test runs on the emulator and, with `PYOP_ENVTEST=real`, on kube-apiserver + etcd."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # the examples import kopfexample as kopf's examples are run: as scripts

from pyscaffold_op.envtest import Environment  # noqa: E402
from pyscaffold_op.runtime import Clock, Manager, ManagerOptions  # noqa: E402
from pyscaffold_op.runtime.log import current_reconcile  # noqa: E402


@pytest.fixture
def envtest_crd_paths() -> list[Path]:
    return [HERE / "crd.yaml"]


@pytest.fixture
def envtest_kubelet() -> None:
    """No kubelet: the children example's Pods need not run (kube-apiserver has none either)."""


@pytest.fixture
def envtest_webhook_paths(tmp_path: Path) -> list[Path]:
    from pyscaffold_op.gen.webhook import build_configurations, collect_markers

    manifests = tmp_path / "manifests.yaml"
    manifests.write_text(yaml.safe_dump_all(build_configurations(collect_markers(HERE))))
    return [manifests]


@pytest.fixture
def manager(envtest: Environment) -> Any:
    def make(**options: Any) -> Manager:
        options.setdefault("health_probe_bind_address", "0")
        options.setdefault("metrics_bind_address", "0")
        options.setdefault("graceful_shutdown_timeout", 5.0)
        return Manager(envtest.config, ManagerOptions(**options))

    return make


@pytest.fixture
async def running(manager: Any) -> AsyncIterator[Any]:
    """`async with running(setup, clock=...)`-style helper: a manager with one example set up."""
    import contextlib

    @contextlib.asynccontextmanager
    async def run(setup: Any, **options: Any) -> AsyncIterator[Manager]:
        mgr = manager(**options)
        setup(mgr)
        async with mgr.running():
            yield mgr

    yield run


@dataclass
class Line:
    message: str
    keys: dict[str, Any]  # the reconcile's log keys it was written under (daemon, name, ...)
    at: float  # when, on the manager's clock


@dataclass
class Lines(logging.Filter):
    """What one logger writes, with the keys every line inside a daemon or timer carries."""

    clock: Clock | None = None
    lines: list[Line] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()

    def filter(self, record: logging.LogRecord) -> bool:
        at = self.clock.monotonic() if self.clock is not None else 0.0
        self.lines.append(Line(record.getMessage(), dict(current_reconcile() or {}), at))
        return True


@pytest.fixture
def lines_of() -> Iterator[Callable[..., Lines]]:
    """`lines_of("timers", clock)`: the lines logger "timers" writes during the test."""
    attached: list[tuple[logging.Logger, Lines]] = []

    def attach(name: str, clock: Clock | None = None) -> Lines:
        logger = logging.getLogger(name)
        logger.setLevel(logging.INFO)
        lines = Lines(clock)
        logger.addFilter(lines)
        attached.append((logger, lines))
        return lines

    yield attach
    for logger, lines in attached:
        logger.removeFilter(lines)
