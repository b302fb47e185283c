"""Services' EndpointSlices (and v1 Endpoints): ready and not-ready Pods, named and several ports,
headless and selector-less Services, scaling to zero, deleted Pods and Services."""

from __future__ import annotations

from typing import Any

from tests.workloads.harness import Scenario
from tests.workloads.kube import Kube, container, obj, pod_template

RESOURCES = ("services", "endpointslices", "endpoints", "pods")


def deployment(replicas: int = 2, command: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    labels = {"app": "web"}
    ports = [{"name": "http", "containerPort": 8080}, {"name": "metrics", "containerPort": 9090}]
    c = container("web", "nginx", command, ports=ports, **extra)
    return obj(
        "apps/v1",
        "Deployment",
        "web",
        {"replicas": replicas, "selector": {"matchLabels": labels}, "template": pod_template(labels, c)},
    )


def service(name: str = "web", ports: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    body = {
        "selector": {"app": "web"},
        "ports": ports or [{"name": "http", "port": 80, "targetPort": 8080}],
        **spec,
    }
    return obj("v1", "Service", name, body)


def endpoints_ready(n: int, service_name: str = "web") -> Any:
    def check(k: Kube) -> bool:
        slices = k.list("endpointslices", f"kubernetes.io/service-name={service_name}")
        ready = [
            e for s in slices for e in s.get("endpoints") or [] if (e.get("conditions") or {}).get("ready")
        ]
        return len(ready) == n

    return check


def _service(
    replicas: int, ports: list[dict[str, Any]] | None = None, ready: int | None = None, **spec: Any
) -> Any:
    def act(k: Kube) -> None:
        k.create(deployment(replicas))
        k.create(service(ports=ports, **spec))
        k.until(
            f"{replicas if ready is None else ready} endpoints are ready",
            lambda: endpoints_ready(replicas if ready is None else ready)(k),
            90,
        )

    return act


def _not_ready(publish: bool) -> Any:
    def act(k: Kube) -> None:
        k.create(deployment(1, ["sh", "-c", "exit 1"]))
        k.create(service(publishNotReadyAddresses=publish))
        k.until(
            "the pod restarted",
            lambda: any(
                (p.get("status") or {}).get("containerStatuses", [{}])[0].get("restartCount", 0) > 0
                for p in k.list("pods")
            ),
            60,
        )
        k.until(
            "the slice lists the pod",
            lambda: any(
                s.get("endpoints") for s in k.list("endpointslices", "kubernetes.io/service-name=web")
            ),
            60,
        )

    return act


def _scale_to_zero(k: Kube) -> None:
    _service(2)(k)
    k.scale("deployments", "web", 0)
    k.until(
        "no endpoint is left",
        lambda: (
            not any(s.get("endpoints") for s in k.list("endpointslices", "kubernetes.io/service-name=web"))
        ),
        90,
    )


def _pod_deleted(k: Kube) -> None:
    k.create(obj("v1", "Pod", "solo", {"containers": [container("web", "nginx")]}, labels={"app": "web"}))
    k.create(service())
    k.until("1 endpoint is ready", lambda: endpoints_ready(1)(k), 90)
    k.delete("pods", "solo")
    k.wait_gone("pods", "solo")
    k.until(
        "no endpoint is left",
        lambda: (
            not any(s.get("endpoints") for s in k.list("endpointslices", "kubernetes.io/service-name=web"))
        ),
        90,
    )


def _service_deleted(k: Kube) -> None:
    _service(1)(k)
    k.delete("services", "web")
    k.until("its slices are gone", lambda: not k.list("endpointslices", "kubernetes.io/service-name=web"), 90)


def _static(**spec: Any) -> Any:
    def act(k: Kube) -> None:
        k.create(deployment(1))
        k.create(obj("v1", "Service", "web", spec))
        k.wait_count("pods", 1, "app=web", status__phase="Running")

    return act


TWO_PORTS = [
    {"name": "http", "port": 80, "targetPort": "http"},
    {"name": "metrics", "port": 9090, "targetPort": "metrics"},
]

SCENARIOS: list[Scenario] = [
    Scenario("endpointslice/two-ready-pods", "endpointslice", _service(2), RESOURCES),
    Scenario("endpointslice/one-pod", "endpointslice", _service(1), RESOURCES),
    Scenario(
        "endpointslice/named-target-port",
        "endpointslice",
        _service(1, [{"name": "http", "port": 80, "targetPort": "http"}]),
        RESOURCES,
    ),
    Scenario("endpointslice/two-ports", "endpointslice", _service(2, TWO_PORTS), RESOURCES),
    Scenario(
        "endpointslice/unnamed-port",
        "endpointslice",
        _service(1, [{"port": 80, "targetPort": 8080}]),
        RESOURCES,
    ),
    Scenario(
        "endpointslice/udp-port",
        "endpointslice",
        _service(1, [{"name": "dns", "port": 53, "protocol": "UDP"}]),
        RESOURCES,
    ),
    Scenario("endpointslice/headless", "endpointslice", _service(2, clusterIP="None"), RESOURCES),
    Scenario("endpointslice/no-pods", "endpointslice", _service(0), RESOURCES),
    Scenario("endpointslice/not-ready-pod", "endpointslice", _not_ready(False), RESOURCES),
    Scenario("endpointslice/publish-not-ready", "endpointslice", _not_ready(True), RESOURCES),
    Scenario("endpointslice/scale-to-zero", "endpointslice", _scale_to_zero, RESOURCES),
    Scenario("endpointslice/pod-deleted", "endpointslice", _pod_deleted, RESOURCES),
    Scenario("endpointslice/service-deleted", "endpointslice", _service_deleted, RESOURCES),
    Scenario("endpointslice/no-selector", "endpointslice", _static(ports=[{"port": 80}]), RESOURCES),
    Scenario(
        "endpointslice/external-name",
        "endpointslice",
        _static(type="ExternalName", externalName="example.com"),
        RESOURCES,
    ),
]
