"""The seam between the object store and the controllers that run inside the emulator's API server.

The garbage collector and the namespace controller are controllers over the store, as in a real
control plane: they observe every stored change (`observe`), and after each write the store lets them
act until none has work left (`reconcile`), through the small `StoreAccess` interface below. They run
synchronously on the server's event loop, so a client sees dependents gone right after the DELETE of
their owner (the real garbage collector is only a little slower).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from pyscaffold_op.envtest.registry import namespaces
from pyscaffold_op.envtest.types import GR, Key, Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.registry.resources import Registry, ServedResource
    from pyscaffold_op.envtest.storage.objectstore import Event


class StoreAccess(Protocol):
    """What a controller may read and write."""

    registry: Registry

    def find(self, gr: GR, namespace: str, name: str) -> Obj | None: ...
    def locate(self, uid: str) -> tuple[GR, Key] | None: ...
    def keys_in(self, gr: GR) -> list[Key]: ...
    def stored_resources(self) -> list[GR]: ...
    def delete(
        self,
        info: ServedResource,
        namespace: str,
        name: str,
        *,
        propagation: str | None = None,
        preconditions: dict[str, Any] | None = None,
        dry_run: bool = False,
        grace_period: int | None = None,
    ) -> tuple[Obj, bool]: ...
    def put(self, gr: GR, key: Key, old: Obj | None, new: Obj) -> None: ...
    def drop(self, gr: GR, key: Key, obj: Obj) -> None: ...
    def run_controllers(self) -> None: ...


class StoreController(Protocol):
    def observe(self, event: Event) -> None:
        """A change was stored; note the work it makes (no writes here)."""

    def reconcile(self) -> bool:
        """Do the noted work; whether anything was done (the store then asks every controller again)."""


def write_metadata(store: StoreAccess, gr: GR, key: Key, obj: Obj, changes: dict[str, Any]) -> None:
    """A controller's write of metadata (removing owner references or finalizers): `None` removes a
    field; an object being deleted with no finalizers left is gone."""
    meta = {**obj["metadata"]}
    for k, v in changes.items():
        if v is None:
            meta.pop(k, None)
        else:
            meta[k] = v
    new = {**obj, "metadata": meta}
    if meta.get("deletionTimestamp") and not meta.get("finalizers") and not namespaces.held(gr, new):
        store.drop(gr, key, new)
    else:
        store.put(gr, key, obj, new)
