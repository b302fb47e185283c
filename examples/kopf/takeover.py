"""Moving a live cluster from kopf to pyop (docs/coming-from-kopf.md, "Moving a live cluster"): the
children controller of children.py, releasing each object from kopf once it has reconciled it.

Stop the kopf operator, start this one: every KopfExample is reconciled (it had been reconciled by
kopf: its Pod is found, or made), then kopf's finalizer, its `kopf.zalando.org/` annotations and
`status.kopf` are removed, so deleting it no longer waits for a kopf operator that is not there.

    python examples/kopf/takeover.py --kubeconfig ~/.kube/config
"""

from __future__ import annotations

import sys

from children import ChildrenReconciler
from kopfexample import KopfExample

from pyscaffold_op.models.core_v1 import Pod
from pyscaffold_op.runtime import Manager, ManagerFlags, run_manager


def setup(mgr: Manager, flags: ManagerFlags | None = None) -> None:
    mgr.builder().for_(KopfExample).owns(Pod).taking_over_from_kopf().complete(ChildrenReconciler(mgr.client))


if __name__ == "__main__":
    sys.exit(run_manager(setup, prog="takeover", leader_election_id="children.kopf.dev"))
