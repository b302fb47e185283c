"""The differential conformance corpus: every scenario against the emulator and the real kube-apiserver.

Run: `PYTHONPATH=$PWD python -m pytest -q -p no:cacheprovider tests/conformance` (needs `make
oracles`, or PYOP_ENVTEST_ASSETS naming a folder with kube-apiserver and etcd). The session ends
with `N/M scenarios agree` and each difference; a difference fails its test unless it is in
`allowlist.DELIBERATE` (each documented in docs/envtest.md, "The conformance corpus").
"""

from __future__ import annotations

import hashlib

import pytest

from tests.conformance.allowlist import reason_for
from tests.conformance.conftest import Servers
from tests.conformance.harness import Scenario, compare, run
from tests.conformance.report import REPORT
from tests.conformance.scenarios import SCENARIOS

pytestmark = pytest.mark.oracle


def _namespace(name: str) -> str:
    return "cf-" + hashlib.sha1(name.encode()).hexdigest()[:12]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_scenario(servers: Servers, scenario: Scenario) -> None:
    ns = _namespace(scenario.name)
    emulated = run(servers.emulator, scenario, ns)
    real = run(servers.real, scenario, ns)
    diffs = compare(scenario, emulated, real, servers.addresses)
    REPORT.results[scenario.name] = diffs
    reason = reason_for(scenario.name)
    if reason:
        REPORT.allowed[scenario.name] = reason
    if diffs and not reason:
        pytest.fail("emulator and kube-apiserver differ:\n" + "\n".join(diffs), pytrace=False)


def test_names_unique() -> None:
    names = [s.name for s in SCENARIOS]
    assert len(names) == len(set(names))
