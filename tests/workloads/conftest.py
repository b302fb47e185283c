"""One emulator (with its kubelet simulator and workload controllers) and one cluster (cluster mode)
for the whole corpus, every selected scenario run at first use, and the `N/M scenarios agree` report."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pyscaffold_op.dev.oracles import missing_reason, oracle_bin
from tests.workloads.harness import Outcome, Scenario, run_all
from tests.workloads.kube import Side
from tests.workloads.report import REPORT

TOOLS = ("kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler", "kwok")
# scenarios at once: each waits on controllers far more than it works, but their Pods share one
# node of 110 Pods (the emulator's and kind's figure)
WORKERS = 16


def assets() -> Path | None:
    found = [oracle_bin(t) for t in TOOLS]
    return found[0].parent if all(found) and found[0] is not None else None


@pytest.fixture(scope="package")
def sides() -> Iterator[tuple[Side, Side]]:
    folder = assets()
    if folder is None:
        missing = next(t for t in TOOLS if oracle_bin(t) is None)
        pytest.skip(missing_reason(missing))
    from pyscaffold_op.envtest import Environment, KubeletSimulator

    emulator = Environment(kubelet=KubeletSimulator(), workloads=True).start_in_thread()
    try:
        cluster = Environment(mode="cluster", assets=folder).start_in_thread(timeout=180)
    except BaseException:
        emulator.stop()
        raise
    try:
        yield (
            Side("emulator", emulator.url, emulator.token, emulator.ca_pem, emulator.kubeconfig_path),
            Side("cluster", cluster.url, cluster.token, cluster.ca_pem, cluster.kubeconfig_path),
        )
    finally:
        cluster.stop(timeout=60)
        emulator.stop()


@pytest.fixture(scope="package")
def outcomes(
    request: pytest.FixtureRequest, sides: tuple[Side, Side], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[Outcome, Outcome]]:
    """Every scenario the session selected, run concurrently on both servers (once)."""
    from tests.workloads.scenarios import SCENARIOS

    REPORT.path = tmp_path_factory.getbasetemp() / "workload-report.txt"
    selected = {item.callspec.params["scenario"].name for item in request.session.items if _is_scenario(item)}
    chosen: list[Scenario] = [s for s in SCENARIOS if s.name in selected]
    return run_all(chosen, *sides, workers=WORKERS)


def _is_scenario(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    return callspec is not None and isinstance(callspec.params.get("scenario"), Scenario)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not REPORT.results:
        return
    lines = REPORT.lines()
    for line in lines:
        terminalreporter.write_line(line)
    if REPORT.path is not None:
        REPORT.path.write_text("\n".join(lines) + "\n")
        terminalreporter.write_line(f"(written to {REPORT.path})")
