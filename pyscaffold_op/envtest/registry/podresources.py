"""Pod-level resources as the Pod strategy defaults them at create (api/pod's DefaultPodLevelResources,
PodLevelResourcesFixDefaulting being on in 1.37): a Pod that sets `spec.resources` gets pod-level
requests for cpu and memory from its containers' aggregated requests, then from its pod-level limits;
and pod-level limits for the requested resources every container limits, as the larger of the
request and the containers' aggregated limits. Hugepage limits are not defaulted here.

Aggregation is resourcehelper's: the containers summed, each init container (with the sidecars
started before it) a floor, sidecars added. Sums keep the first term's format, as Quantity.Add."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from pyscaffold_op.apiextensions import celquantity
from pyscaffold_op.envtest.server.quantity import canonical

_SUPPORTED = ("cpu", "memory")  # IsSupportedPodLevelResource, hugepages-* aside


def _supported(name: str) -> bool:
    return name in _SUPPORTED or name.startswith("hugepages-")


def _value(text: Any) -> Fraction | None:
    try:
        q = celquantity.parse(str(text))
    except celquantity.QuantityError:
        return None
    return Fraction(q.mantissa) * Fraction(10) ** q.exponent


def _text(value: Fraction, like: str) -> str:
    """The value written in the format of `like` (binary when that is binary), canonical."""
    if like.endswith("i") and value.denominator == 1 and value and int(value) % 1024 == 0:
        return canonical(f"{int(value) // 1024}Ki")
    nanos = value * 10**9
    return canonical(f"{int(nanos)}n") if nanos.denominator == 1 else canonical(str(float(value)))


def _add(acc: dict[str, tuple[Fraction, str]], name: str, text: Any) -> None:
    v = _value(text)
    if v is None:
        return
    if name in acc:
        acc[name] = (acc[name][0] + v, acc[name][1])
    else:
        acc[name] = (v, str(text))


def aggregate(spec: dict[str, Any], which: str) -> dict[str, tuple[Fraction, str]]:
    """AggregateContainerRequests/Limits (`which`: requests or limits) over the spec's containers."""
    total: dict[str, tuple[Fraction, str]] = {}
    for c in spec.get("containers") or []:
        for name, text in (
            ((c.get("resources") or {}).get(which) or {}).items() if isinstance(c, dict) else ()
        ):
            _add(total, name, text)
    sidecars: dict[str, tuple[Fraction, str]] = {}
    floor: dict[str, tuple[Fraction, str]] = {}
    for c in spec.get("initContainers") or []:
        if not isinstance(c, dict):
            continue
        own: dict[str, tuple[Fraction, str]] = {}
        for name, text in ((c.get("resources") or {}).get(which) or {}).items():
            _add(own, name, text)
        if c.get("restartPolicy") == "Always":
            for name, (v, like) in own.items():
                total[name] = (total[name][0] + v, total[name][1]) if name in total else (v, like)
                sidecars[name] = (sidecars[name][0] + v, sidecars[name][1]) if name in sidecars else (v, like)
            use = dict(sidecars)
        else:
            use = dict(own)
            for name, (v, like) in sidecars.items():
                use[name] = (use[name][0] + v, use[name][1]) if name in use else (v, like)
        for name, (v, like) in use.items():
            if name not in floor or v > floor[name][0]:
                floor[name] = (v, like)
    for name, (v, like) in floor.items():
        if name not in total or v > total[name][0]:
            total[name] = (v, like)
    return total


def default_pod_level_resources(pod: dict[str, Any]) -> None:
    spec = pod.get("spec")
    resources = spec.get("resources") if isinstance(spec, dict) else None
    if not isinstance(resources, dict) or not (resources.get("requests") or resources.get("limits")):
        return
    assert isinstance(spec, dict)
    requests = dict(resources.get("requests") or {})
    limits = dict(resources.get("limits") or {})
    for name, (v, like) in aggregate(spec, "requests").items():
        if name not in requests and name in _SUPPORTED:  # overcommittable: cpu and memory
            requests[name] = _text(v, like)
    for name, text in limits.items():
        if name not in requests and _supported(name):
            requests[name] = text
    if requests:
        resources["requests"] = requests
    candidates = [n for n in requests if _supported(n) and n not in limits]
    containers = [
        c for key in ("initContainers", "containers") for c in spec.get(key) or [] if isinstance(c, dict)
    ]
    candidates = [
        n
        for n in candidates
        if all(n in ((c.get("resources") or {}).get("limits") or {}) for c in containers)
    ]
    if candidates:
        aggregated = aggregate(spec, "limits")
        for name in candidates:
            if name not in aggregated:
                continue
            v, like = aggregated[name]
            req = _value(requests[name])
            limits[name] = requests[name] if req is not None and req > v else _text(v, like)
        resources["limits"] = limits


def consistency_errors(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """validatePodResourceConsistency: (field, message) for pod-level requests below the containers'
    aggregated requests, hugepage limits below theirs, and a container limit above the pod's."""
    resources = spec.get("resources")
    if not isinstance(resources, dict):
        return []
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    out: list[tuple[str, str]] = []
    for name, (v, like) in sorted(aggregate(spec, "requests").items()):
        pod_req = _value(requests.get(name)) if name in requests else None
        if pod_req is not None and v > pod_req:
            out.append(
                (
                    f"spec.resources.requests[{name}]",
                    f'Invalid value: "{canonical(str(requests[name]))}": must be greater than or equal to '
                    f"aggregate container requests of {_text(v, like)}",
                )
            )
    for name, (v, like) in sorted(aggregate(spec, "limits").items()):
        pod_lim = _value(limits.get(name)) if name.startswith("hugepages-") and name in limits else None
        if pod_lim is not None and v > pod_lim:
            out.append(
                (
                    f"spec.resources.limits[{name}]",
                    f'Invalid value: "{canonical(str(limits[name]))}": must be greater than or equal to '
                    f"aggregate container limits of {_text(v, like)}",
                )
            )
    for i, c in enumerate(spec.get("containers") or []):
        for name, text in (
            ((c.get("resources") or {}).get("limits") or {}).items() if isinstance(c, dict) else ()
        ):
            ctr, pod_lim = _value(text), _value(limits.get(name)) if name in limits else None
            if ctr is not None and pod_lim is not None and ctr > pod_lim:
                out.append(
                    (
                        f"spec.resources.containers[{i}][{name}].limits",
                        f'Invalid value: "{canonical(str(text))}": must be less than or equal to pod limits '
                        f"of {canonical(str(limits[name]))}",
                    )
                )
    return out
