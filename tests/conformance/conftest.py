"""One real control plane and one emulator for the whole corpus, and the `N/M scenarios agree` report."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conformance.crds import CRDS
from tests.conformance.harness import Target
from tests.conformance.report import REPORT

REPO = Path(__file__).resolve().parents[2]
NOT_INSTALLED = "kube-apiserver/etcd is not installed (run `make oracles`, or set PYOP_ENVTEST_ASSETS)"


def assets() -> Path | None:
    for var in ("PYOP_ENVTEST_ASSETS", "KUBEBUILDER_ASSETS"):
        if os.environ.get(var):
            return Path(os.environ[var])
    return REPO / "bin"


def have_oracle() -> bool:
    folder = assets()
    return folder is not None and all(os.access(folder / b, os.X_OK) for b in ("kube-apiserver", "etcd"))


@dataclass
class Servers:
    emulator: Target
    real: Target
    addresses: tuple[str, ...]


def _install(target: Target) -> None:
    for crd in CRDS:
        resp = target.send(
            "POST",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            json.dumps(crd).encode(),
            {"Content-Type": "application/json"},
        )
        assert resp.status in (201, 409), (target.name, resp.status, resp.body)
    for crd in CRDS:  # established and in discovery
        spec = crd["spec"]
        deadline = time.monotonic() + 30
        while True:
            got = target.send("GET", f"/apis/{spec['group']}/v1", None, {})
            names = [r["name"] for r in got.body.get("resources", [])] if got.status == 200 else []
            if spec["names"]["plural"] in names:
                break
            assert time.monotonic() < deadline, f"{target.name}: CRD {spec['names']['plural']} not served"
            time.sleep(0.05)


# the package, not the session: the emulator it serves from a thread is torn down before other tests
# (tests/envtest/test_gctuning.py counts the serving environments)
@pytest.fixture(scope="package")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    if not have_oracle():
        pytest.skip(NOT_INSTALLED)
    from pyscaffold_op.envtest import Environment
    from pyscaffold_op.envtest.controlplane import ControlPlane

    cp = ControlPlane(assets=assets()).start()
    env = Environment().start_in_thread()
    try:
        emulator = Target("emulator", env.url, env.token)
        real = Target("real", cp.url, cp.token, cp.ca_pem)
        _install(emulator)
        _install(real)
        REPORT.path = tmp_path_factory.getbasetemp() / "conformance-report.txt"
        yield Servers(emulator, real, (emulator.netloc, real.netloc))
    finally:
        env.stop()
        cp.stop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not REPORT.results:
        return
    lines = REPORT.lines()
    for line in lines:
        terminalreporter.write_line(line)
    if REPORT.path is not None:
        REPORT.path.write_text("\n".join(lines) + "\n")
        terminalreporter.write_line(f"(written to {REPORT.path})")
