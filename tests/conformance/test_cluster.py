"""The conformance corpus's DELIBERATE scenarios, judged by a whole cluster (envtest's cluster mode).

Against a bare kube-apiserver those scenarios differ on purpose: the oracle has no
kube-controller-manager (no garbage collector to finish a foreground or orphan deletion, no
pvc-protection controller, no `default` ServiceAccount for the ServiceAccount admission plugin). A
cluster has all of them, so there they must agree with the emulator running its simulated
controllers. Differences left are listed in `allowlist.CLUSTER_PENDING`, each with its reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from pyscaffold_op.dev.oracles import missing_reason, oracle_bin
from tests.conformance.allowlist import DELIBERATE, cluster_reason_for, reason_for
from tests.conformance.conftest import _install
from tests.conformance.harness import Scenario, Target, compare, run
from tests.conformance.scenarios import SCENARIOS

pytestmark = [pytest.mark.oracle, pytest.mark.slow, pytest.mark.timeout(600)]
TOOLS = ("kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler", "kwok")
JUDGED = [s for s in SCENARIOS if (reason_for(s.name) or "").startswith("deliberate")]


@dataclass
class Pair:
    emulator: Target
    cluster: Target
    addresses: tuple[str, ...]


@pytest.fixture(scope="module")
def pair() -> Iterator[Pair]:
    missing = [t for t in TOOLS if oracle_bin(t) is None]
    if missing:
        pytest.skip(missing_reason(missing[0]))
    from pyscaffold_op.envtest import Environment

    folder = oracle_bin("kube-apiserver").parent  # type: ignore[union-attr]
    cluster = Environment(mode="cluster", assets=folder).start_in_thread(timeout=180)
    # the emulator as a cluster: its controller-manager (ServiceAccounts) beside the API server;
    # no kubelet simulator, as kwok's node plays the kubelet only for Pods the scheduler placed
    emulator = Environment(workloads=True).start_in_thread()
    try:
        e = Target("emulator", emulator.url, emulator.token)
        c = Target("cluster", cluster.url, cluster.token, cluster.ca_pem)
        _install(e)
        _install(c)
        yield Pair(e, c, (e.netloc, c.netloc))
    finally:
        emulator.stop()
        cluster.stop(timeout=60)


def test_the_deliberate_scenarios_are_the_issue_s_sixteen() -> None:
    assert len(JUDGED) == 16, [s.name for s in JUDGED]
    assert set(DELIBERATE)  # each judged scenario is deliberate only for want of a controller-manager


@pytest.mark.parametrize("scenario", JUDGED, ids=[s.name for s in JUDGED])
def test_deliberate_scenario_agrees_with_a_cluster(pair: Pair, scenario: Scenario) -> None:
    ns = "cl-" + scenario.name.replace("/", "-").replace("@", "-").replace(".", "-")[-40:].strip("-")
    emulated = run(pair.emulator, scenario, ns, service_account=True)
    real = run(pair.cluster, scenario, ns, service_account=True)
    diffs = compare(scenario, emulated, real, pair.addresses)
    if diffs and not cluster_reason_for(scenario.name):
        pytest.fail("the emulator and a cluster differ:\n" + "\n".join(diffs), pytrace=False)
