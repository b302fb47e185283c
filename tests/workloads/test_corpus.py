"""The workload corpus: every scenario on the emulator and on a cluster (kube-controller-manager,
kube-scheduler and kwok beside kube-apiserver), their converged objects compared.

Run: `PYOP_ORACLES_BIN=$PWD/bin python -m pytest -q -m '' tests/workloads` (needs `make oracles`). The
session ends with `N/M scenarios agree` and every difference with the reason it is listed; a
difference fails its scenario unless `allowlist.py` lists it (docs/envtest.md, "The workload corpus").
"""

from __future__ import annotations

import pytest

from tests.workloads.allowlist import reason_for
from tests.workloads.harness import Outcome, Scenario, brief, compare
from tests.workloads.report import REPORT
from tests.workloads.scenarios import SCENARIOS

# the first scenario's test runs them all (the `outcomes` fixture): its bound is the corpus's
pytestmark = [pytest.mark.oracle, pytest.mark.slow, pytest.mark.timeout(1800)]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_scenario(outcomes: dict[str, tuple[Outcome, Outcome]], scenario: Scenario) -> None:
    emulator, cluster = outcomes[scenario.name]
    diffs = [(d, reason_for(scenario.name, d)) for d in compare(emulator, cluster)]
    REPORT.results[scenario.name] = diffs
    unlisted = [d for d, reason in diffs if reason is None]
    if unlisted:
        pytest.fail(
            "the emulator and the cluster converged differently:\n"
            + "\n".join(unlisted)
            + f"\n-- emulator ({emulator.seconds:.1f}s):\n{brief(emulator)}"
            + f"\n-- cluster ({cluster.seconds:.1f}s):\n{brief(cluster)}",
            pytrace=False,
        )


def test_names_unique() -> None:
    names = [s.name for s in SCENARIOS]
    assert len(names) == len(set(names))


def test_at_least_150_scenarios() -> None:
    assert len(SCENARIOS) >= 150
