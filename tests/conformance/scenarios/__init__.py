"""Every scenario of the corpus, gathered from the families' modules."""

from __future__ import annotations

from tests.conformance.harness import Scenario
from tests.conformance.scenarios import api, builtin, custom, protobuf, smp

SCENARIOS: list[Scenario] = [
    *builtin.SCENARIOS,
    *custom.SCENARIOS,
    *api.SCENARIOS,
    *smp.SCENARIOS,
    *protobuf.SCENARIOS,
]
