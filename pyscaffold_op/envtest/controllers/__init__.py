"""Simulated kube-controller-manager controllers that run over the emulator's store.

    Environment(workloads=Workloads())        # or workloads=True; `pyop envtest serve` turns it on

Each controller follows the store's changes (like the kubelet simulator) and writes through the
store's verbs as field manager `kube-controller-manager`. See docs/envtest.md for what each one
simulates and what it does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyscaffold_op.envtest.controllers.base import Controller
from pyscaffold_op.envtest.controllers.clock import Clock, FakeClock
from pyscaffold_op.envtest.controllers.deployment import DeploymentController
from pyscaffold_op.envtest.controllers.replicaset import ReplicaSetController, ReplicationControllerController
from pyscaffold_op.envtest.controllers.serviceaccount import ServiceAccountController

if TYPE_CHECKING:
    from pyscaffold_op.envtest.store import Store


class Workloads:
    """The workload controllers, started and stopped together with an `Environment`."""

    def __init__(self, *, clock: Clock | None = None) -> None:
        self.clock = clock or Clock()
        self.controllers: list[Controller] = [
            ServiceAccountController(),
            ReplicaSetController(),
            ReplicationControllerController(),
            DeploymentController(),
        ]

    def attach(self, store: Store) -> None:
        for c in self.controllers:
            c.attach(store, self.clock)

    def detach(self) -> None:
        for c in self.controllers:
            c.detach()


__all__ = ["Clock", "Controller", "FakeClock", "Workloads"]
