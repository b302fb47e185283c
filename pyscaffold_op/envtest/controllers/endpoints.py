"""The EndpointSlice and Endpoints controllers (k8s.io/endpointslice's Reconciler and
pkg/controller/endpoint): a Service with a selector gets EndpointSlices (one per set of resolved
ports, a placeholder without endpoints when no Pod matches) and an Endpoints object of its name,
listing the matching Pods that have an IP, with their readiness, the Service's ports resolved against
each Pod's container ports, the Service's labels, and the time of the change that triggered the
write (endpoints.kubernetes.io/last-change-trigger-time)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pyscaffold_op.apimachinery import labels
from pyscaffold_op.envtest.controllers import pods as P
from pyscaffold_op.envtest.controllers.base import SimulatedController, new_owner_ref
from pyscaffold_op.envtest.controllers.timestamps import parse_time
from pyscaffold_op.envtest.status import StatusError
from pyscaffold_op.envtest.types import Key, Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Event

SLICES = ("discovery.k8s.io", "v1", "endpointslices")
ENDPOINTS = ("", "v1", "endpoints")
NODES = ("", "v1", "nodes")
SERVICE_NAME = "kubernetes.io/service-name"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
CONTROLLER = "endpointslice-controller.k8s.io"
HEADLESS = "service.kubernetes.io/headless"  # v1.IsHeadlessService
ENDPOINTS_MANAGED_BY = "endpoints.kubernetes.io/managed-by"
ENDPOINTS_CONTROLLER = "endpoint-controller"
TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"
ZONE = "topology.kubernetes.io/zone"
_RESERVED = (SERVICE_NAME, MANAGED_BY, HEADLESS)


def find_port(port: Obj, pod: Obj) -> int | None:
    """FindPort: a numeric targetPort as it is, a named one from the Pod's container ports."""
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


def _ip_set(svc: Obj) -> bool:
    """helper.IsServiceIPSet: a cluster IP that is neither empty nor None."""
    ip = (svc.get("spec") or {}).get("clusterIP")
    return bool(ip) and ip != "None"


def _set_hostname(pod: Obj, svc: Obj) -> bool:
    """ShouldSetHostname: the Pod's hostname under a subdomain named after the Service."""
    spec = pod.get("spec") or {}
    return (
        bool(spec.get("hostname"))
        and spec.get("subdomain") == svc["metadata"]["name"]
        and pod["metadata"].get("namespace") == svc["metadata"].get("namespace")
    )


def _in_endpoints(pod: Obj, include_terminating: bool) -> bool:
    """ShouldPodBeInEndpoints: not terminal, has an IP, terminating only when asked."""
    status = pod.get("status") or {}
    if P.is_terminal(pod) or not (status.get("podIP") or status.get("podIPs")):
        return False
    return include_terminating or not pod["metadata"].get("deletionTimestamp")


def _trigger_stamp(t: datetime | None) -> str | None:
    if t is None:
        return None
    # RFC3339Nano in UTC: whole seconds print without a fraction
    text = t.strftime("%Y-%m-%dT%H:%M:%S")
    if t.microsecond:
        text += f".{t.microsecond:06d}".rstrip("0")
    return text + "Z"


class TriggerTimeTracker:
    """util.TriggerTimeTracker: the earliest change (a Pod's Ready transition, the Service's
    creation) not seen at the previous sync of the Service; a new Service's creation time."""

    def __init__(self) -> None:
        self._states: dict[Key, tuple[dict[str, datetime], datetime | None]] = {}

    def compute(self, svc: Obj, pods: list[Obj]) -> datetime | None:
        key = (svc["metadata"].get("namespace", ""), svc["metadata"]["name"])
        known = key in self._states
        last_pods, last_svc = self._states.get(key, ({}, None))
        earliest: datetime | None = None
        times: dict[str, datetime] = {}
        for pod in pods:
            cond = P.ready_condition(pod)
            t = parse_time((cond or {}).get("lastTransitionTime"))
            if t is None:
                continue
            times[pod["metadata"]["name"]] = t
            before = last_pods.get(pod["metadata"]["name"])
            if before is None or t > before:
                earliest = t if earliest is None else min(earliest, t)
        created = parse_time(svc["metadata"].get("creationTimestamp"))
        if created is not None and (last_svc is None or created > last_svc):
            earliest = created if earliest is None else min(earliest, created)
        self._states[key] = (times, created)
        return created if not known else earliest

    def forget(self, key: Key) -> None:
        self._states.pop(key, None)


def _with_trigger(meta: Obj, t: datetime | None) -> Obj:
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != TRIGGER_TIME}
    stamp = _trigger_stamp(t)
    if stamp is not None:
        annotations[TRIGGER_TIME] = stamp
    out = {**meta, "annotations": annotations}
    if not annotations:
        out.pop("annotations")
    return out


def _port_key(ports: list[Obj]) -> str:
    return json.dumps(ports, sort_keys=True)


class EndpointSliceController(SimulatedController):
    primary = ("", "v1", "services")

    def __init__(self) -> None:
        super().__init__()
        self._slice_times = TriggerTimeTracker()
        self._endpoints_times = TriggerTimeTracker()

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
        if svc is None:
            # the slices go with their owner (the garbage collector); the Endpoints controller
            # deletes the Endpoints of the Service's name
            self._slice_times.forget((namespace, name))
            self._endpoints_times.forget((namespace, name))
            current = self.get(ENDPOINTS, namespace, name)
            if current is not None:
                self.delete(ENDPOINTS, current)
            return
        match = self._selector(svc)
        if match is None:
            return  # ExternalName or no selector: endpoints come from elsewhere
        pods = [p for p in self.list(P.PODS, namespace) if match(p)]
        pods.sort(key=lambda p: p["metadata"]["name"])
        self._slices(svc, pods)
        self._endpoints(svc, pods)

    # -- EndpointSlices ------------------------------------------------------------------------------

    def _slice_labels(self, svc: Obj) -> Obj:
        """setEndpointSliceLabels: the Service's labels but the reserved ones, then those."""
        out = {k: v for k, v in (svc["metadata"].get("labels") or {}).items() if k not in _RESERVED}
        if not _ip_set(svc):
            out[HEADLESS] = ""
        out[SERVICE_NAME] = svc["metadata"]["name"]
        out[MANAGED_BY] = CONTROLLER
        return out

    def _endpoint_ports(self, svc: Obj, pod: Obj) -> list[Obj]:
        """getEndpointPorts: each Service port the Pod resolves."""
        out = []
        for sp in (svc.get("spec") or {}).get("ports") or []:
            if not isinstance(sp, dict):
                continue
            num = find_port(sp, pod)
            if num is None:
                continue
            port: Obj = {"name": sp.get("name", ""), "port": num, "protocol": sp.get("protocol", "TCP")}
            if sp.get("appProtocol"):
                port["appProtocol"] = sp["appProtocol"]
            out.append(port)
        return out

    def _endpoint(self, svc: Obj, pod: Obj, node: Obj | None) -> Obj:
        """podToEndpoint."""
        serving = P.is_ready(pod)
        terminating = bool(pod["metadata"].get("deletionTimestamp"))
        publish = bool((svc.get("spec") or {}).get("publishNotReadyAddresses"))
        ep: Obj = {
            "addresses": [pod["status"].get("podIP") or pod["status"]["podIPs"][0]["ip"]],
            "conditions": {
                "ready": publish or (serving and not terminating),
                "serving": serving,
                "terminating": terminating,
            },
            "targetRef": {
                "kind": "Pod",
                "namespace": pod["metadata"].get("namespace", ""),
                "name": pod["metadata"]["name"],
                "uid": pod["metadata"]["uid"],
            },
        }
        spec = pod.get("spec") or {}
        if _set_hostname(pod, svc):
            ep["hostname"] = spec["hostname"]
        if spec.get("nodeName"):
            ep["nodeName"] = spec["nodeName"]
        zone = ((node or {}).get("metadata", {}).get("labels") or {}).get(ZONE)
        if zone:
            ep["zone"] = zone
        return ep

    def _slices(self, svc: Obj, pods: list[Obj]) -> None:
        """reconcileByAddressType for IPv4: a slice per set of resolved ports, creates turned into
        updates of the slices that would go, a placeholder when no Pod is an endpoint."""
        ns, name = svc["metadata"].get("namespace", ""), svc["metadata"]["name"]
        trigger = self._slice_times.compute(svc, pods)
        uid = svc["metadata"]["uid"]
        existing = [
            s
            for s in self.list(SLICES, ns)
            if (s["metadata"].get("labels") or {}).get(SERVICE_NAME) == name
            and (s["metadata"].get("labels") or {}).get(MANAGED_BY) == CONTROLLER
        ]
        publish = bool((svc.get("spec") or {}).get("publishNotReadyAddresses"))
        desired: dict[str, tuple[list[Obj], list[Obj]]] = {}
        for pod in pods:
            if not _in_endpoints(pod, True):
                continue
            node_name = (pod.get("spec") or {}).get("nodeName") or ""
            node = self.get(NODES, "", node_name) if node_name else None
            if node is None and not publish:
                continue  # the Pod's node is missing: left out (unless the Service publishes all)
            ports = self._endpoint_ports(svc, pod)
            _, eps = desired.setdefault(_port_key(ports), (ports, []))
            eps.append(self._endpoint(svc, pod, node))
        labels = self._slice_labels(svc)
        by_ports: dict[str, list[Obj]] = {}
        to_delete: list[Obj] = []
        for s in existing:
            owned = any(r.get("uid") == uid for r in s["metadata"].get("ownerReferences") or [])
            if owned:
                by_ports.setdefault(_port_key(s.get("ports") or []), []).append(s)
            else:
                to_delete.append(s)
        to_create: list[Obj] = []
        to_update: list[Obj] = []
        for key, (ports, eps) in desired.items():
            current = by_ports.pop(key, [])
            if current:
                keep, extra = current[0], current[1:]
                to_delete.extend(extra)
                if keep.get("endpoints") != eps or (keep["metadata"].get("labels") or {}) != labels:
                    to_update.append(
                        {**keep, "endpoints": eps, "metadata": {**keep["metadata"], "labels": labels}}
                    )
            else:
                to_create.append(self._new_slice(svc, ports, eps, labels))
        for rest in by_ports.values():
            to_delete.extend(rest)
        if not desired:
            placeholder_ok = (
                len(to_delete) == 1
                and not to_delete[0].get("ports")
                and not to_delete[0].get("endpoints")
                and (to_delete[0]["metadata"].get("labels") or {}) == labels
            )
            if placeholder_ok:
                to_delete = []
            elif len(existing) == len(to_delete):
                to_create.append(self._new_slice(svc, [], [], labels))
        # finalize: a slice to create takes the name of one that would be deleted
        while to_create and to_delete:
            new, old = to_create.pop(), to_delete.pop(0)
            to_update.append({**new, "metadata": {**old["metadata"], "labels": new["metadata"]["labels"]}})
        if not svc["metadata"].get("deletionTimestamp"):
            for s in to_create:
                self.create(SLICES, ns, {**s, "metadata": _with_trigger(s["metadata"], trigger)})
        for s in to_update:
            self.update(SLICES, {**s, "metadata": _with_trigger(s["metadata"], trigger)})
        for s in to_delete:
            self.delete(SLICES, s)

    def _new_slice(self, svc: Obj, ports: list[Obj], eps: list[Obj], labels: Obj) -> Obj:
        body: Obj = {
            "metadata": {
                "generateName": f"{svc['metadata']['name']}-",
                "labels": labels,
                "ownerReferences": [new_owner_ref(svc)],
            },
            "addressType": "IPv4",
            "endpoints": eps,
            # `ports` has no omitempty: an empty list comes back from storage as null
            "ports": ports or None,
        }
        return body

    # -- Endpoints -----------------------------------------------------------------------------------

    def _endpoints(self, svc: Obj, pods: list[Obj]) -> None:
        """syncService of the Endpoints controller: the legacy v1 Endpoints beside the slices."""
        ns, name = svc["metadata"].get("namespace", ""), svc["metadata"]["name"]
        spec = svc.get("spec") or {}
        publish = bool(spec.get("publishNotReadyAddresses"))
        trigger = self._endpoints_times.compute(svc, pods)
        entries: list[tuple[Obj, bool, list[Obj]]] = []  # address, ready, ports
        for pod in pods:
            if not _in_endpoints(pod, publish):
                continue
            addr: Obj = {
                "ip": pod["status"].get("podIP") or pod["status"]["podIPs"][0]["ip"],
                "nodeName": (pod.get("spec") or {}).get("nodeName", ""),
                "targetRef": {
                    "kind": "Pod",
                    "namespace": pod["metadata"].get("namespace", ""),
                    "name": pod["metadata"]["name"],
                    "uid": pod["metadata"]["uid"],
                },
            }
            if _set_hostname(pod, svc):
                addr["hostname"] = pod["spec"]["hostname"]
            ready = publish or P.is_ready(pod)
            svc_ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
            if not svc_ports:
                if spec.get("clusterIP") == "None":
                    entries.append((addr, ready, []))
                continue
            ports = []
            for sp in svc_ports:
                num = find_port(sp, pod)
                if num is None:
                    continue
                port: Obj = {"port": num, "protocol": sp.get("protocol", "TCP")}
                if sp.get("name"):
                    port = {"name": sp["name"], **port}
                if sp.get("appProtocol"):
                    port["appProtocol"] = sp["appProtocol"]
                ports.append(port)
            if ports:
                entries.append((addr, ready, ports))
        subsets = _repack(entries)
        current = self.get(ENDPOINTS, ns, name)
        svc_labels = dict(svc["metadata"].get("labels") or {})
        if current is not None and (
            _strip_rv(current.get("subsets") or []) == _strip_rv(subsets)
            and _labels_correct(current["metadata"].get("labels") or {}, svc_labels)
        ):
            return
        new_labels = dict(svc_labels)
        if not _ip_set(svc):
            new_labels[HEADLESS] = ""
        else:
            new_labels.pop(HEADLESS, None)
        new_labels[ENDPOINTS_MANAGED_BY] = ENDPOINTS_CONTROLLER
        if current is None:
            meta = _with_trigger({"name": name, "labels": new_labels}, trigger)
            body: Obj = {"metadata": meta}
            if subsets:
                body["subsets"] = subsets
            try:
                self.create(ENDPOINTS, ns, body)
            except StatusError as err:
                if err.code != 403:  # a terminating namespace takes no new objects
                    raise
            return
        new = {**current, "metadata": _with_trigger({**current["metadata"], "labels": new_labels}, trigger)}
        new.pop("subsets", None)
        if subsets:
            new["subsets"] = subsets
        self.update(ENDPOINTS, new)


def _labels_correct(ep_labels: Obj, svc_labels: Obj) -> bool:
    """labelsCorrectForEndpoints."""
    if ep_labels.get(ENDPOINTS_MANAGED_BY) != ENDPOINTS_CONTROLLER:
        return False
    rest = {k: v for k, v in ep_labels.items() if k not in (HEADLESS, ENDPOINTS_MANAGED_BY)}
    return rest == svc_labels


def _strip_rv(subsets: list[Obj]) -> str:
    def clean(addr: Obj) -> Obj:
        ref = {k: v for k, v in (addr.get("targetRef") or {}).items() if k != "resourceVersion"}
        return {**addr, "targetRef": ref} if ref else addr

    return json.dumps(
        [
            {
                **s,
                "addresses": [clean(a) for a in s.get("addresses") or []],
                "notReadyAddresses": [clean(a) for a in s.get("notReadyAddresses") or []],
            }
            for s in subsets
        ],
        sort_keys=True,
    )


def _repack(entries: list[tuple[Obj, bool, list[Obj]]]) -> list[Obj]:
    """RepackSubsets: the addresses that share the same ports make one subset, ready ones under
    addresses, the rest under notReadyAddresses (not ready trumps ready); addresses sorted by IP
    then uid."""
    no_port: Obj = {}
    by_port: dict[str, tuple[Obj, dict[str, tuple[Obj, bool]]]] = {}
    for addr, ready, ports in entries:
        for port in ports or [no_port]:
            _, addrs = by_port.setdefault(json.dumps(port, sort_keys=True), (port, {}))
            addr_key = f"{addr['ip']}/{addr['targetRef']['uid']}"
            if addr_key not in addrs or addrs[addr_key][1]:
                addrs[addr_key] = (addr, ready)
    groups: dict[str, tuple[dict[str, tuple[Obj, bool]], list[Obj]]] = {}
    for port, addrs in by_port.values():
        key = json.dumps(sorted((k, r) for k, (_, r) in addrs.items()))
        _, group_ports = groups.setdefault(key, (addrs, []))
        if port is not no_port:
            group_ports.append(port)
    out = []
    for addrs, group_ports in groups.values():
        order = sorted(addrs.values(), key=lambda ar: (ar[0]["ip"], ar[0]["targetRef"]["uid"]))
        subset: Obj = {}
        ready_addrs = [a for a, r in order if r]
        not_ready_addrs = [a for a, r in order if not r]
        if ready_addrs:
            subset["addresses"] = ready_addrs
        if not_ready_addrs:
            subset["notReadyAddresses"] = not_ready_addrs
        if group_ports:
            subset["ports"] = group_ports
        out.append(subset)
    return out
