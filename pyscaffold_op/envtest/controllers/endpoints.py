"""The EndpointSlice and Endpoints controllers: a Service with a selector gets an EndpointSlice (and
an Endpoints object of the same name) listing the matching Pods that have an IP, with their
readiness, and the Service's ports resolved against each Pod's container ports."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pyscaffold_op.apimachinery import labels
from pyscaffold_op.envtest.controllers import pods as P
from pyscaffold_op.envtest.controllers.base import SimulatedController, new_owner_ref
from pyscaffold_op.envtest.types import Key, Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Event

SLICES = ("discovery.k8s.io", "v1", "endpointslices")
ENDPOINTS = ("", "v1", "endpoints")
SERVICE_NAME = "kubernetes.io/service-name"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
CONTROLLER = "endpointslice-controller.k8s.io"


def _target_port(port: Obj, pod: Obj) -> int | None:
    target = port.get("targetPort", port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for c in (pod.get("spec") or {}).get("containers") or []:
        for cp in c.get("ports") or []:
            if cp.get("name") == target and cp.get("protocol", "TCP") == port.get("protocol", "TCP"):
                return int(cp["containerPort"])
    return None


class EndpointSliceController(SimulatedController):
    primary = ("", "v1", "services")

    def keys_for(self, event: Event) -> Iterable[Key]:
        yield from super().keys_for(event)
        if event.gr == ("", "pods"):
            ns = event.obj["metadata"].get("namespace", "")
            for svc in self.list(self.primary, ns):
                match = self._selector(svc)
                if match is not None and (match(event.obj) or (event.prev is not None and match(event.prev))):
                    yield (ns, svc["metadata"]["name"])
        elif event.gr == ("discovery.k8s.io", "endpointslices"):
            labels = event.obj["metadata"].get("labels") or {}
            if labels.get(MANAGED_BY) == CONTROLLER and labels.get(SERVICE_NAME):
                yield (event.obj["metadata"].get("namespace", ""), labels[SERVICE_NAME])

    @staticmethod
    def _selector(svc: Obj) -> Any:
        sel = (svc.get("spec") or {}).get("selector")
        if not isinstance(sel, dict) or not sel or (svc.get("spec") or {}).get("type") == "ExternalName":
            return None
        try:
            parsed = labels.from_label_selector({"matchLabels": sel})
        except labels.SelectorError:
            return None
        return lambda obj: parsed.matches(obj.get("metadata", {}).get("labels") or {})

    def reconcile(self, namespace: str, name: str) -> None:
        svc = self.get(self.primary, namespace, name)
        slices = [
            s
            for s in self.list(SLICES, namespace)
            if (s["metadata"].get("labels") or {}).get(SERVICE_NAME) == name
            and (s["metadata"].get("labels") or {}).get(MANAGED_BY) == CONTROLLER
        ]
        match = (
            self._selector(svc) if svc is not None and not svc["metadata"].get("deletionTimestamp") else None
        )
        if svc is None or match is None:
            for s in slices:  # the owner reference lets the GC do it too; no selector: no slices
                self.delete(SLICES, s)
            return
        spec = svc.get("spec") or {}
        publish = bool(spec.get("publishNotReadyAddresses"))
        pods = [p for p in self.list(P.PODS, namespace) if match(p) and not P.is_terminal(p)]
        pods = [p for p in pods if (p.get("status") or {}).get("podIP")]
        pods.sort(key=lambda p: p["metadata"]["name"])
        svc_ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
        endpoints = []
        ready_addrs: list[Obj] = []
        not_ready_addrs: list[Obj] = []
        ports: list[Obj] | None = None
        for pod in pods:
            terminating = bool(pod["metadata"].get("deletionTimestamp"))
            serving = P.is_ready(pod)
            ready = (serving or publish) and not terminating
            ep: Obj = {
                "addresses": [pod["status"]["podIP"]],
                "conditions": {"ready": ready, "serving": serving or publish, "terminating": terminating},
                "targetRef": {
                    "kind": "Pod",
                    "namespace": namespace,
                    "name": pod["metadata"]["name"],
                    "uid": pod["metadata"]["uid"],
                },
            }
            if (pod.get("spec") or {}).get("nodeName"):
                ep["nodeName"] = pod["spec"]["nodeName"]
            endpoints.append(ep)
            if ports is None:
                ports = [
                    {
                        "name": sp.get("name", ""),
                        "port": _target_port(sp, pod),
                        "protocol": sp.get("protocol", "TCP"),
                    }
                    for sp in svc_ports
                ]
            if not terminating:
                addr = {"ip": pod["status"]["podIP"], "targetRef": ep["targetRef"]}
                if "nodeName" in ep:
                    addr["nodeName"] = ep["nodeName"]
                (ready_addrs if ready else not_ready_addrs).append(addr)
        labels = {
            **(svc["metadata"].get("labels") or {}),
            SERVICE_NAME: name,
            MANAGED_BY: CONTROLLER,
        }
        body: Obj = {
            "addressType": "IPv4",
            "endpoints": endpoints,
            "ports": ports,
        }
        if slices:
            current, extra = slices[0], slices[1:]
            for s in extra:
                self.delete(SLICES, s)
            meta = {**current["metadata"], "labels": labels}
            self.update(SLICES, {**current, **body, "metadata": meta})
        else:
            self.create(
                SLICES,
                namespace,
                {
                    "metadata": {
                        "generateName": f"{name}-",
                        "labels": labels,
                        "ownerReferences": [new_owner_ref(svc)],
                    },
                    **body,
                },
            )
        self._endpoints(svc, ready_addrs, not_ready_addrs, ports or [])

    def _endpoints(self, svc: Obj, ready: list[Obj], not_ready: list[Obj], ports: list[Obj]) -> None:
        """The legacy v1 Endpoints object the endpoints controller keeps beside the slices."""
        ns, name = svc["metadata"].get("namespace", ""), svc["metadata"]["name"]
        subset: Obj = {}
        if ready:
            subset["addresses"] = ready
        if not_ready:
            subset["notReadyAddresses"] = not_ready
        if subset:
            subset["ports"] = [{k: v for k, v in p.items() if v != "" and v is not None} for p in ports]
        body: Obj = {"metadata": {"name": name, "labels": dict(svc["metadata"].get("labels") or {})}}
        if subset:
            body["subsets"] = [subset]
        current = self.get(ENDPOINTS, ns, name)
        if current is None:
            self.create(ENDPOINTS, ns, body)
        else:
            new = {**current, "metadata": {**current["metadata"], "labels": body["metadata"]["labels"]}}
            new.pop("subsets", None)
            if subset:
                new["subsets"] = body["subsets"]
            self.update(ENDPOINTS, new)
