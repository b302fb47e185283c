"""`Environment(mode="real")` and `mode="cluster"`: the same test API over real Kubernetes processes.

Real mode (`controlplane.ControlPlane`), like controller-runtime's envtest, runs the API server alone:
no kubelet, no kube-controller-manager (so no garbage collector, namespace finalizer, workload
controllers or ServiceAccount tokens), no cluster DNS. Cluster mode (`cluster.Cluster`) adds
kube-controller-manager, kube-scheduler and kwok's fake nodes: what the emulator's kubelet simulator
and `Workloads` simulate is done by the real controllers there (a default `KubeletSimulator()` or
`Workloads()` asks for what the cluster already runs). What neither mode has (a kubelet rule of your
own, a fake clock driving the controllers, `drop_watches`/`compact` fault injection, the review
`policy`) raises `EmulatorOnly`, which the pytest plugin turns into a skip that names it: a test that
needs a simulation is never silently run against a server that lacks it.

Webhooks: with no cluster DNS, a webhook configuration or a CRD conversion webhook that names a
Service registered with `env.webhook_service_url` is sent to that URL instead, with the CA as its
caBundle (envtest's WebhookInstallOptions does the same).
"""

from __future__ import annotations

import asyncio
import base64
import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyscaffold_op.envtest.controlplane import ControlPlane, ControlPlaneError
from pyscaffold_op.envtest.modes import CLUSTER, LABELS, REAL
from pyscaffold_op.envtest.types import Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.environment import Environment

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WEBHOOK_KINDS = {
    "MutatingWebhookConfiguration": "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    "ValidatingWebhookConfiguration": "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
}


class EmulatorOnly(RuntimeError):
    """What a test asked for is simulated by the emulator only; the real processes have no such part."""

    def __init__(self, what: str, mode: str = REAL) -> None:
        super().__init__(f"{LABELS[mode]}: {what} is simulated by pyop's emulator only")
        self.what = what
        self.mode = mode


class RealMode:
    """The real control plane behind an `Environment`: started, fed CRDs and webhooks, stopped."""

    def __init__(self, env: Environment, assets: str | Path | None, mode: str = REAL) -> None:
        self.env = env
        self.mode = mode
        folder = Path(assets) if assets else None
        if mode == CLUSTER:
            from pyscaffold_op.envtest.cluster import Cluster

            self.plane: ControlPlane = Cluster(assets=folder, host=env.host, port=env.port)
        else:
            self.plane = ControlPlane(assets=folder, host=env.host, port=env.port)
        # (namespace, name, port) of a Service -> (URL, CA PEM) to call instead
        self.services: dict[tuple[str, str, int], tuple[str, bytes | None]] = {}

    def _refuse_simulations(self) -> None:
        from pyscaffold_op.clock import REAL_CLOCK
        from pyscaffold_op.envtest.controllers.kubelet import default_rule

        env = self.env
        if self.mode == REAL:
            if env.kubelet is not None:
                raise EmulatorOnly("the kubelet simulator (Pods that run)")
            if env.workloads is not None:
                raise EmulatorOnly("the workload controllers (Deployments, Jobs, ... that act)")
            return
        # the cluster runs Pods (kwok plays the kubelet) and the real controllers: the defaults ask for
        # what it already does, anything else for what only the simulation can be told
        if env.kubelet is not None and env.kubelet.rule is not default_rule:
            raise EmulatorOnly("a KubeletSimulator rule (kwok runs Pods by its stages)", self.mode)
        if env.workloads is not None and env.workloads.clock is not REAL_CLOCK:
            raise EmulatorOnly("a clock that drives the workload controllers", self.mode)

    async def start(self) -> None:
        env = self.env
        self._refuse_simulations()
        if env.crd_paths:
            from pyscaffold_op.envtest.registry import crds

            # installed before a controller-manager starts, so its garbage collector watches them
            docs = crds.load_crd_files(list(env.crd_paths))
            self.plane.crds = [self._redirect_conversion(copy.deepcopy(d)) for d in docs]
        # a plane that fails to start stops itself (`async with` never enters, nothing else would)
        await asyncio.to_thread(self.plane.start)
        env.url, env.token, env.ca_pem = self.plane.url, self.plane.token, self.plane.ca_pem
        env.client_cert_pem = self.plane.client_cert_pem or None
        env.client_key_pem = self.plane.client_key_pem or None
        env.port = int(env.url.rsplit(":", 1)[1])

    async def stop(self) -> None:
        await asyncio.to_thread(self.plane.stop)

    def kubeconfig_dict(self) -> dict[str, Any]:
        return self.plane.kubeconfig_dict(self.env.namespace)

    async def install_crds(self, docs: list[Obj]) -> list[Obj]:
        docs = [self._redirect_conversion(copy.deepcopy(d)) for d in docs]
        try:
            return await asyncio.to_thread(self.plane.install_crds, docs)
        except ControlPlaneError as err:
            raise RuntimeError(str(err)) from None

    async def install_webhooks(self, docs: list[Obj]) -> list[Obj]:
        return await asyncio.to_thread(self._put_webhooks, [copy.deepcopy(d) for d in docs])

    def _put_webhooks(self, docs: list[Obj]) -> list[Obj]:
        out = []
        for doc in docs:
            for hook in doc.get("webhooks") or []:
                self._redirect(hook.setdefault("clientConfig", {}))
            base, name = WEBHOOK_KINDS[doc["kind"]], doc["metadata"]["name"]
            out.append(self._put(base, name, doc))
        return out

    def webhook_service_url(
        self, namespace: str, name: str, url: str, port: int, ca: bytes | Path | None
    ) -> None:
        pem = ca.read_bytes() if isinstance(ca, Path) else ca
        self.services[(namespace, name, port)] = (url.rstrip("/"), pem)
        # CRDs installed before the webhook server started: point their conversion webhooks at it now
        for crd in self.plane.request("GET", CRDS)[1].get("items", []):
            service = (
                ((crd["spec"].get("conversion") or {}).get("webhook") or {}).get("clientConfig") or {}
            ).get("service")
            if service and (service.get("namespace"), service.get("name"), service.get("port", 443)) == (
                namespace,
                name,
                port,
            ):
                crd.pop("status", None)
                self._put(CRDS, crd["metadata"]["name"], self._redirect_conversion(crd))

    def _redirect_conversion(self, crd: Obj) -> Obj:
        webhook = (crd.get("spec", {}).get("conversion") or {}).get("webhook")
        if webhook:
            self._redirect(webhook.setdefault("clientConfig", {}))
        return crd

    def _redirect(self, client_config: dict[str, Any]) -> None:
        """A clientConfig naming a registered Service becomes a URL (no cluster DNS), trusting its CA."""
        service = client_config.get("service")
        if not service:
            return
        key = (service.get("namespace", ""), service.get("name", ""), int(service.get("port", 443)))
        if key not in self.services:
            return
        url, pem = self.services[key]
        client_config.pop("service")
        client_config["url"] = url + (service.get("path") or "")
        if pem is not None and not client_config.get("caBundle"):
            client_config["caBundle"] = base64.b64encode(pem).decode()

    def _put(self, base: str, name: str, doc: Obj) -> Any:
        status, current = self.plane.request("GET", f"{base}/{name}")
        if status == 200:
            doc["metadata"] = {**doc["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]}
            status, stored = self.plane.request("PUT", f"{base}/{name}", doc)
        else:
            status, stored = self.plane.request("POST", base, doc)
        if status not in (200, 201):
            message = stored.get("message", stored) if isinstance(stored, dict) else stored
            raise RuntimeError(f"{doc.get('kind')} {name}: the API server answered {status}: {message}")
        return stored


__all__ = ["EmulatorOnly", "RealMode"]
