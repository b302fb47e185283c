"""Simulated kube-controller-manager controllers that run over the emulator's store.

    Environment(workloads=Workloads())        # or workloads=True; `pyop envtest serve` turns it on

Each controller follows the store's changes (like the kubelet simulator) and writes through the
store's verbs as field manager `kube-controller-manager`. See docs/envtest.md for what each one
simulates and what it does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyscaffold_op.clock import REAL_CLOCK, Clock, FakeClock
from pyscaffold_op.envtest.controllers.base import SimulatedController
from pyscaffold_op.envtest.controllers.cronjob import CronJobController
from pyscaffold_op.envtest.controllers.daemonset import DaemonSetController
from pyscaffold_op.envtest.controllers.deployment import DeploymentController
from pyscaffold_op.envtest.controllers.disruption import DisruptionController
from pyscaffold_op.envtest.controllers.endpoints import EndpointSliceController
from pyscaffold_op.envtest.controllers.job import JobController
from pyscaffold_op.envtest.controllers.nodeipam import NodeIpamController
from pyscaffold_op.envtest.controllers.nodelifecycle import NodeLifecycleController
from pyscaffold_op.envtest.controllers.replicaset import ReplicaSetController, ReplicationControllerController
from pyscaffold_op.envtest.controllers.rootca import RootCAPublisher
from pyscaffold_op.envtest.controllers.serviceaccount import ServiceAccountController
from pyscaffold_op.envtest.controllers.statefulset import StatefulSetController

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Store


class Workloads:
    """The workload controllers, started and stopped together with an `Environment`."""

    def __init__(
        self, *, clock: Clock | None = None, job_backoff_seconds: float = 0.1, events: bool = True
    ) -> None:
        """`clock`: a `FakeClock` (`pyscaffold_op.clock`'s, which a runtime `Manager` takes too) to drive
        CronJob schedules, Job deadlines and TTLs, and
        minReadySeconds by hand; `job_backoff_seconds`: the first delay before a failed Job pod is
        replaced (doubled per failure; the real controller starts at 10 s); `events=False`: the
        controllers record no Events."""
        self.clock = clock or REAL_CLOCK
        self.events = events
        self.root_ca = RootCAPublisher()
        self.controllers: list[SimulatedController] = [
            ServiceAccountController(),
            self.root_ca,
            NodeLifecycleController(),
            NodeIpamController(),
            ReplicaSetController(),
            ReplicationControllerController(),
            DeploymentController(),
            StatefulSetController(),
            DaemonSetController(),
            JobController(job_backoff_seconds),
            CronJobController(),
            EndpointSliceController(),
            DisruptionController(),
        ]

    def attach(self, store: Store, *, root_ca_pem: bytes = b"") -> None:
        """Start the controllers; `root_ca_pem` is the CA published as `kube-root-ca.crt`."""
        self.root_ca.ca_pem = root_ca_pem
        for c in self.controllers:
            c.attach(store, self.clock, events=self.events)

    def detach(self) -> None:
        for c in self.controllers:
            c.detach()


__all__ = ["Clock", "FakeClock", "SimulatedController", "Workloads"]
