"""Every scenario of the workload corpus, gathered from the families' modules."""

from __future__ import annotations

from tests.workloads.harness import Scenario
from tests.workloads.scenarios import (
    cronjobs,
    daemonsets,
    deployments,
    disruption,
    endpointslices,
    events,
    gc,
    jobs,
    namespaces,
    qos,
    replicasets,
    serviceaccounts,
    statefulsets,
)

SCENARIOS: list[Scenario] = [
    *deployments.SCENARIOS,
    *replicasets.SCENARIOS,
    *jobs.SCENARIOS,
    *cronjobs.SCENARIOS,
    *statefulsets.SCENARIOS,
    *daemonsets.SCENARIOS,
    *gc.SCENARIOS,
    *namespaces.SCENARIOS,
    *serviceaccounts.SCENARIOS,
    *events.SCENARIOS,
    *qos.SCENARIOS,
    *endpointslices.SCENARIOS,
    *disruption.SCENARIOS,
]
