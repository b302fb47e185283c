"""The ServiceAccount controller: every active namespace has a `default` ServiceAccount (recreated
when deleted), which Pods use unless they name another."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pyscaffold_op.envtest.controllers.base import SimulatedController
from pyscaffold_op.envtest.status import StatusError
from pyscaffold_op.envtest.types import Key

if TYPE_CHECKING:
    from pyscaffold_op.clock import Clock
    from pyscaffold_op.envtest.storage.objectstore import Event, Store

SERVICE_ACCOUNTS = ("", "v1", "serviceaccounts")


class ServiceAccountController(SimulatedController):
    primary = ("", "v1", "namespaces")

    def keys_for(self, event: Event) -> Iterable[Key]:
        if event.gr == ("", "namespaces") and event.type != "DELETED":
            yield ("", event.obj["metadata"]["name"])
        elif (
            event.gr == ("", "serviceaccounts")
            and event.type == "DELETED"
            and event.obj["metadata"]["name"] == "default"
        ):
            yield ("", event.obj["metadata"].get("namespace", ""))

    def attach(self, store: Store, clock: Clock, *, events: bool = True) -> None:
        super().attach(store, clock, events=events)
        store.admission.await_default_account = self.ensure

    def detach(self) -> None:
        if self._store is not None and self._store.admission.await_default_account == self.ensure:
            self._store.admission.await_default_account = None
        super().detach()

    def ensure(self, namespace: str) -> None:
        """Make the namespace's `default` ServiceAccount now (the admission plugin is waiting for it)."""
        self.reconcile("", namespace)

    def reconcile(self, namespace: str, name: str) -> None:
        del namespace  # namespaces are cluster-scoped: the key is ("", name)
        ns = self.get(self.primary, "", name)
        if ns is None or ns["metadata"].get("deletionTimestamp"):
            return
        if self.get(SERVICE_ACCOUNTS, name, "default") is None:
            try:
                self.create(SERVICE_ACCOUNTS, name, {"metadata": {"name": "default"}})
            except StatusError as err:
                if err.code not in (403, 409):  # raced with the namespace's deletion or a client
                    raise
