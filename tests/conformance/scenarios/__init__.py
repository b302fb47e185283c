"""Every scenario of the corpus, gathered from the families' modules."""

from __future__ import annotations

from tests.conformance.harness import Scenario
from tests.conformance.scenarios import (
    api,
    builtin,
    cronjobs,
    csr,
    custom,
    decoding,
    events,
    fidelity,
    protobuf,
    protobuf_answers,
    quantities,
    rbac,
    registry,
    smp,
    workload_facts,
)

SCENARIOS: list[Scenario] = [
    *builtin.SCENARIOS,
    *custom.SCENARIOS,
    *api.SCENARIOS,
    *smp.SCENARIOS,
    *rbac.SCENARIOS,
    *protobuf.SCENARIOS,
    *protobuf_answers.SCENARIOS,
    *fidelity.SCENARIOS,
    *quantities.SCENARIOS,
    *csr.SCENARIOS,
    *workload_facts.SCENARIOS,
    *registry.SCENARIOS,
    *decoding.SCENARIOS,
    *events.SCENARIOS,
    *cronjobs.SCENARIOS,
]
