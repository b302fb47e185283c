"""The conformance corpus's DELIBERATE scenarios, judged by a cluster's control plane (envtest's cluster
mode: `cluster.Cluster`).

Against a bare kube-apiserver those scenarios differ on purpose: the oracle has no
kube-controller-manager (no garbage collector to finish a foreground or orphan deletion, no
pvc-protection controller, no `default` ServiceAccount for the ServiceAccount admission plugin). With
one, they must agree with the emulator running its simulated controllers. The cluster runs the
controller-manager beside the API server (the default admission plugins on) but no scheduler and no
kwok: these scenarios judge the controller-manager and admission, and their Pods stay unscheduled on
both sides, as on the bare oracle. Each GET is repeated until two answers a second apart agree (a
garbage collector finishes a deletion a moment after it). Differences left are listed in
`allowlist.CLUSTER_PENDING`, each with its reason.
"""

from __future__ import annotations

import fnmatch
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
    from pyscaffold_op.envtest.cluster import Cluster

    folder = oracle_bin("kube-apiserver").parent  # type: ignore[union-attr]
    cluster = Cluster(assets=folder, components=("kube-controller-manager",)).start()
    # the emulator with its simulated controller-manager (ServiceAccounts) and no kubelet simulator
    emulator = Environment(workloads=True).start_in_thread()
    try:
        e = Target("emulator", emulator.url, emulator.token)
        c = Target("cluster", cluster.url, cluster.token, cluster.ca_pem)
        _install(e)
        _install(c)
        yield Pair(e, c, (e.netloc, c.netloc))
    finally:
        emulator.stop()
        cluster.stop()


def test_every_deliberate_pattern_names_a_judged_scenario() -> None:
    """Every scenario a DELIBERATE pattern names is judged here, and every pattern names one (a stale
    pattern would leave a difference unjudged), except /version, which no controller-manager explains."""
    assert JUDGED, "no DELIBERATE scenario left to judge"
    assert {p for p in DELIBERATE if p != "discovery/version"} <= {
        p for p in DELIBERATE for s in JUDGED if fnmatch.fnmatchcase(s.name, p)
    }


@pytest.mark.parametrize("scenario", JUDGED, ids=[s.name for s in JUDGED])
def test_deliberate_scenario_agrees_with_a_cluster(pair: Pair, scenario: Scenario) -> None:
    ns = "cl-" + scenario.name.replace("/", "-").replace("@", "-").replace(".", "-")[-40:].strip("-")
    emulated = run(pair.emulator, scenario, ns, service_account=True, settle=1.0)
    real = run(pair.cluster, scenario, ns, service_account=True, settle=1.0)
    diffs = compare(scenario, emulated, real, pair.addresses)
    if diffs and not cluster_reason_for(scenario.name):
        pytest.fail("the emulator and a cluster differ:\n" + "\n".join(diffs), pytrace=False)
