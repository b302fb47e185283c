"""The root CA certificate publisher (kube-controller-manager's root-ca-cert-publisher): every active
namespace has the ConfigMap `kube-root-ca.crt` with the cluster's CA (`ca.crt`) and its description
annotation, made again when deleted and put back when changed. Pods' projected ServiceAccount token
volumes read it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pyscaffold_op.envtest.controllers.base import SimulatedController
from pyscaffold_op.envtest.status import StatusError
from pyscaffold_op.envtest.types import Key

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Event

CONFIGMAPS = ("", "v1", "configmaps")
NAME = "kube-root-ca.crt"
DESCRIPTION_ANNOTATION = "kubernetes.io/description"
DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
    "such as the internal service IP or kubernetes.default.svc. "
    "No other usage is guaranteed across distributions of Kubernetes clusters."
)


class RootCAPublisher(SimulatedController):
    primary = ("", "v1", "namespaces")

    def __init__(self) -> None:
        super().__init__()
        self.ca_pem = b""  # set before attach: the CA clients verify the API server with

    def keys_for(self, event: Event) -> Iterable[Key]:
        if event.gr == ("", "namespaces") and event.type != "DELETED":
            if (event.obj.get("status") or {}).get("phase", "Active") == "Active":
                yield ("", event.obj["metadata"]["name"])
        elif event.gr == ("", "configmaps") and event.obj["metadata"]["name"] == NAME:
            yield ("", event.obj["metadata"].get("namespace", ""))

    def reconcile(self, namespace: str, name: str) -> None:
        del namespace  # namespaces are cluster-scoped: the key is ("", name)
        ns = self.get(self.primary, "", name)
        if ns is None or ns["metadata"].get("deletionTimestamp"):
            return
        data = {"ca.crt": self.ca_pem.decode()}
        cm = self.get(CONFIGMAPS, name, NAME)
        try:
            if cm is None:
                self.create(
                    CONFIGMAPS,
                    name,
                    {
                        "metadata": {"name": NAME, "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
                        "data": data,
                    },
                )
            elif cm.get("data") != data or not (cm["metadata"].get("annotations") or {}).get(
                DESCRIPTION_ANNOTATION
            ):
                annotations = {
                    **(cm["metadata"].get("annotations") or {}),
                    DESCRIPTION_ANNOTATION: DESCRIPTION,
                }
                self.update(
                    CONFIGMAPS,
                    {**cm, "metadata": {**cm["metadata"], "annotations": annotations}, "data": data},
                )
        except StatusError as err:
            if err.code not in (403, 404, 409):  # raced with the namespace's deletion or a client
                raise
