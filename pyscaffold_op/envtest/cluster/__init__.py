"""envtest's cluster mode: kube-apiserver, kube-controller-manager, kube-scheduler and kwok's fake
nodes (`plane.Cluster`), the judge of what the emulator simulates beside its API server.

`Environment(mode="cluster")`, `PYOP_ENVTEST=cluster` and `pyop envtest serve --cluster` run it;
docs/envtest.md, "Cluster mode", says what it runs and what kwok does not do.
"""

from __future__ import annotations

from pyscaffold_op.envtest.cluster.plane import ADMIN, CLUSTER_BINARIES, Cluster

__all__ = ["ADMIN", "CLUSTER_BINARIES", "Cluster"]
