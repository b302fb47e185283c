"""pyop's envtest: an in-memory Kubernetes API server emulator over real HTTP.

    from pyscaffold_op.envtest import Environment, KubeletSimulator, PodOutcome
    async with Environment(crd_paths=["config/crd/bases"], kubelet=KubeletSimulator()) as env:
        client = new_client(env.config)        # pyscaffold_op.runtime; or any client: env.kubeconfig_path

See docs/envtest.md for what is emulated and what is not.
"""

from __future__ import annotations

from pyscaffold_op.envtest.controllers import FakeClock, Workloads
from pyscaffold_op.envtest.controllers.kubelet import KubeletSimulator, PodOutcome, default_rule
from pyscaffold_op.envtest.environment import Environment

__all__ = ["Environment", "FakeClock", "KubeletSimulator", "PodOutcome", "Workloads", "default_rule"]
