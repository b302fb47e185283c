"""pyop's envtest: an in-memory Kubernetes API server emulator over real HTTP.

    from pyscaffold_op.envtest import Environment, KubeletSimulator, PodOutcome
    async with Environment(crd_paths=["config/crd/bases"], kubelet=KubeletSimulator()) as env:
        client = new_client(env.config)        # pyscaffold_op.runtime; or any client: env.kubeconfig_path

See docs/envtest.md for what is emulated and what is not.

Names resolve lazily (PEP 562): the pytest plugin (`pyscaffold_op.envtest.pytest_plugin`, loaded by
pytest wherever pyscaffold-op is installed) lives in this package, and importing it must cost nothing
and need none of the envtest extra's libraries until a fixture runs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyscaffold_op.envtest.controllers import FakeClock, Workloads
    from pyscaffold_op.envtest.controllers.kubelet import KubeletSimulator, PodOutcome, default_rule
    from pyscaffold_op.envtest.environment import Environment

__all__ = ["Environment", "FakeClock", "KubeletSimulator", "PodOutcome", "Workloads", "default_rule"]

_WHERE = {
    "Environment": "pyscaffold_op.envtest.environment",
    "FakeClock": "pyscaffold_op.envtest.controllers",
    "Workloads": "pyscaffold_op.envtest.controllers",
    "KubeletSimulator": "pyscaffold_op.envtest.controllers.kubelet",
    "PodOutcome": "pyscaffold_op.envtest.controllers.kubelet",
    "default_rule": "pyscaffold_op.envtest.controllers.kubelet",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value
