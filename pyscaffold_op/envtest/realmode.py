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
import contextlib
import copy
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyscaffold_op.envtest.controlplane import ControlPlane, ControlPlaneError
from pyscaffold_op.envtest.modes import CLUSTER, LABELS, REAL
from pyscaffold_op.envtest.types import Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.environment import Environment

log = logging.getLogger(__name__)

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CA_POLL_SECONDS = 0.5  # how often a CA file given for a Service is looked at
ServiceKey = tuple[str, str, int]  # a Service's namespace, name and port
Stamp = tuple[int, int] | None  # a file's mtime and size; None while it does not exist
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
        self.services: dict[ServiceKey, tuple[str, bytes | None]] = {}
        # a Service's CA given as a file (`make run` writes it when it starts) and its last stamp
        self.ca_files: dict[ServiceKey, tuple[Path, Stamp]] = {}
        # the CRDs and webhook configurations installed, as given (before a Service became a URL)
        self.crd_docs: dict[str, Obj] = {}
        self.webhook_docs: dict[tuple[str, str], Obj] = {}
        self._ca_watch: asyncio.Task[None] | None = None

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
            for doc in docs:  # as given: a Service registered later re-installs them (`_reinstall`)
                self.crd_docs[doc["metadata"]["name"]] = copy.deepcopy(doc)
            self.plane.crds = [self._redirect_conversion(copy.deepcopy(d)) for d in docs]
        # a plane that fails to start stops itself (`async with` never enters, nothing else would)
        await asyncio.to_thread(self.plane.start)
        self._ca_watch = asyncio.create_task(self._watch_ca_files(), name="pyop-envtest-webhook-ca")
        env.url, env.token, env.ca_pem = self.plane.url, self.plane.token, self.plane.ca_pem
        env.client_cert_pem = self.plane.client_cert_pem or None
        env.client_key_pem = self.plane.client_key_pem or None
        env.port = int(env.url.rsplit(":", 1)[1])

    async def stop(self) -> None:
        if self._ca_watch is not None:
            self._ca_watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ca_watch
            self._ca_watch = None
        await asyncio.to_thread(self.plane.stop)

    def kubeconfig_dict(self) -> dict[str, Any]:
        return self.plane.kubeconfig_dict(self.env.namespace)

    async def install_crds(self, docs: list[Obj]) -> list[Obj]:
        for doc in docs:
            self.crd_docs[doc["metadata"]["name"]] = copy.deepcopy(doc)
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
            self.webhook_docs[(doc["kind"], doc["metadata"]["name"])] = copy.deepcopy(doc)
            for hook in doc.get("webhooks") or []:
                self._redirect(hook.setdefault("clientConfig", {}))
            base, name = WEBHOOK_KINDS[doc["kind"]], doc["metadata"]["name"]
            out.append(self._put(base, name, doc))
        return out

    def webhook_service_url(
        self, namespace: str, name: str, url: str, port: int, ca: bytes | Path | None
    ) -> None:
        """Calls for the Service go to `url`; a CA file is read now and again whenever it changes."""
        key = (namespace, name, port)
        if isinstance(ca, Path):
            self.ca_files[key] = (ca, _stamp(ca))
            pem = _read(ca)
        else:
            self.ca_files.pop(key, None)
            pem = ca
        self.services[key] = (url.rstrip("/"), pem)
        self._reinstall(key)

    def _reinstall(self, key: ServiceKey) -> None:
        """Point what was installed before (CRD conversion webhooks, webhook configurations) at the
        Service's URL and CA now: the real server has no cluster DNS and reads no files of ours."""
        for crd in self.plane.request("GET", CRDS)[1].get("items", []):
            name = crd["metadata"]["name"]
            crd = copy.deepcopy(self.crd_docs.get(name, crd))  # as installed here: the Service, no caBundle
            if _names(_conversion_client(crd), key):
                crd.pop("status", None)
                self._put(CRDS, name, self._redirect_conversion(crd))
        for doc in list(self.webhook_docs.values()):
            if any(_names(hook.get("clientConfig"), key) for hook in doc.get("webhooks") or []):
                self._put_webhooks([copy.deepcopy(doc)])

    async def _watch_ca_files(self) -> None:
        """Re-install what names a Service whose CA file changed (`make run` writes it after the
        server started; a restarted manager writes a new one)."""
        while True:
            await asyncio.sleep(CA_POLL_SECONDS)
            for key, (path, stamp) in list(self.ca_files.items()):
                now = _stamp(path)
                if now == stamp:
                    continue
                self.ca_files[key] = (path, now)
                self.services[key] = (self.services[key][0], _read(path))
                try:
                    await asyncio.to_thread(self._reinstall, key)
                except (OSError, RuntimeError) as err:  # the server stopping, or refusing: say so, go on
                    log.warning("re-installing the webhooks of Service %s/%s failed: %s", key[0], key[1], err)

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


def _names(client_config: dict[str, Any] | None, key: ServiceKey) -> bool:
    """Whether a webhook's clientConfig names the Service `key`."""
    service: dict[str, Any] = (client_config or {}).get("service") or {}
    if not service:
        return False
    return (service.get("namespace", ""), service.get("name", ""), int(service.get("port", 443))) == key


def _conversion_client(crd: Obj) -> dict[str, Any] | None:
    client_config: dict[str, Any] | None = (
        ((crd.get("spec") or {}).get("conversion") or {}).get("webhook") or {}
    ).get("clientConfig")
    return client_config


def _stamp(path: Path) -> Stamp:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() or None
    except OSError:
        return None


__all__ = ["EmulatorOnly", "RealMode"]
