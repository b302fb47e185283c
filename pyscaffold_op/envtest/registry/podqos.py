"""A Pod's QoS class, as kube-apiserver v1.37.2 sets `status.qosClass` when it creates the Pod
(`pkg/apis/core/helper/qos.ComputePodQOS`, called by the pod strategy's PrepareForCreate; the field is
immutable after that, and a status write that leaves it out keeps the old one).

Only cpu and memory count. Per resource: request == limit (by value, "1" == "1000m") and non-zero is
Guaranteed, both zero or unset is BestEffort, anything else Burstable; the pod is Burstable as soon as
one container (init containers included) or one resource is, Guaranteed or BestEffort when every one
agrees, Burstable when they disagree. Requests missing where a limit is set count as the limit: the
server defaults them so (SetDefaults_Pod) before the strategy runs. Pod-level `spec.resources` with cpu,
memory or hugepages (PodLevelResources, beta and on in 1.37) decide alone.
"""

from __future__ import annotations

from typing import Any

from pyscaffold_op.apiextensions import celquantity

_COMPUTE = ("cpu", "memory")
_ZERO = celquantity.Quantity.of(0)


def pod_qos(pod: dict[str, Any]) -> str:
    """`status.qosClass` for a Pod being created: "Guaranteed", "Burstable" or "BestEffort"."""
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    pod_level = spec.get("resources")
    if isinstance(pod_level, dict) and _pod_level_set(pod_level):
        return _requirements_qos(pod_level)
    qos = ""
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            if not isinstance(container, dict):
                continue
            resources = container.get("resources")
            this = _requirements_qos(resources if isinstance(resources, dict) else {})
            if this == "Burstable":
                return this
            if not qos:
                qos = this
            elif qos != this:
                return "Burstable"
    return qos or "BestEffort"


def _pod_level_set(resources: dict[str, Any]) -> bool:
    """helper.IsPodLevelResourcesSet: a supported resource (cpu, memory, hugepages-*) is named."""
    names = [*_names(resources.get("requests")), *_names(resources.get("limits"))]
    return any(n in _COMPUTE or n.startswith("hugepages-") for n in names)


def _names(values: Any) -> list[str]:
    return [str(k) for k in values] if isinstance(values, dict) else []


def _requirements_qos(resources: dict[str, Any]) -> str:
    limits = resources.get("limits") if isinstance(resources.get("limits"), dict) else {}
    requests = resources.get("requests") if isinstance(resources.get("requests"), dict) else {}
    assert isinstance(limits, dict) and isinstance(requests, dict)
    if not requests and not limits:
        return "BestEffort"
    requests = {**limits, **requests}  # SetDefaults_Pod: a limit without a request is also the request
    qos = ""
    for name in _COMPUTE:
        this = _resource_qos(_quantity(requests.get(name)), _quantity(limits.get(name)))
        if this == "Burstable":
            return this
        if not qos:
            qos = this
        elif qos != this:
            return "Burstable"
    return qos


def _resource_qos(request: celquantity.Quantity, limit: celquantity.Quantity) -> str:
    if request.compare(limit) != 0:
        return "Burstable"
    return "BestEffort" if request.compare(_ZERO) == 0 else "Guaranteed"


def _quantity(value: Any) -> celquantity.Quantity:
    """An unset or unparseable quantity is zero (validation refuses the latter before it matters)."""
    if value is None:
        return _ZERO
    try:
        return celquantity.parse(str(value))
    except celquantity.QuantityError:
        return _ZERO
