"""The controllers a control plane always runs beside its API server: the garbage collector, the
namespace controller and the storage protection controllers (kube-controller-manager's), registered
with the store by `Environment`.

They are controllers over the store (`storage.storeaccess`): each observes every stored change and acts
synchronously after each write, so a client sees dependents gone right after the DELETE of their owner.
A bare `Store` has none, like an API server without a controller manager: owners' dependents stay and
a deleted namespace stays `Terminating`.
"""

from __future__ import annotations

from pyscaffold_op.envtest.controllers.garbagecollector import GarbageCollector
from pyscaffold_op.envtest.controllers.namespace import NamespaceController
from pyscaffold_op.envtest.controllers.protection import StorageProtection
from pyscaffold_op.envtest.storage.objectstore import Store


class CoreControllers:
    """The garbage collector, the namespace and the storage protection controllers of one store,
    registered with it at once."""

    def __init__(
        self,
        store: Store,
        *,
        namespace_deletion_delay: float = 0.2,
        namespace_deletion_max_delay: float = 5.0,
        collect_dangling: bool = False,
    ) -> None:
        self.gc = GarbageCollector(store, dangling=collect_dangling)
        self.namespaces = NamespaceController(
            store, delay=namespace_deletion_delay, max_delay=namespace_deletion_max_delay
        )
        self.protection = StorageProtection(store)
        store.add_controller(self.gc)
        store.add_controller(self.namespaces)
        store.add_controller(self.protection)

    def stop(self) -> None:
        """Cancel the controllers' pending work (the environment is stopping)."""
        self.namespaces.stop()


__all__ = ["CoreControllers"]
