"""What kube-apiserver itself computes about workloads, which the emulator's simulated cluster builds
on (issue 36): a Pod's QoS class, the eviction subresource's PodDisruptionBudget checks, the text
of an unsupported field selector."""

from __future__ import annotations

from typing import Any

from tests.conformance.harness import Scenario, Step
from tests.conformance.scenarios.steps import at, get, post, setup

PODS = "/api/v1/namespaces/{ns}/pods"


def _pod(name: str, *resources: dict[str, Any], init: dict[str, Any] | None = None) -> dict[str, Any]:
    containers = [{"name": f"c{i}", "image": "nginx", "resources": r} for i, r in enumerate(resources)]
    spec: dict[str, Any] = {"containers": containers}
    if init is not None:
        spec["initContainers"] = [{"name": "init", "image": "busybox", "resources": init}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def qos_classes() -> list[Scenario]:
    """status.qosClass as the pod strategy computes it on create (qos.ComputePodQOS)."""
    cpu = {"cpu": "100m"}
    both = {"cpu": "1", "memory": "1Gi"}
    cases: dict[str, dict[str, Any]] = {
        "none": _pod("p", {}),
        "limits-only-guaranteed": _pod("p", {"limits": both}),
        "requests-equal-limits": _pod("p", {"requests": both, "limits": both}),
        "same-value-other-spelling": _pod(
            "p", {"requests": {"cpu": "1000m", "memory": "1024Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
        ),
        "requests-below-limits": _pod("p", {"requests": cpu, "limits": both}),
        "cpu-only-limit": _pod("p", {"limits": cpu}),
        "requests-only": _pod("p", {"requests": both}),
        "ephemeral-storage-only": _pod("p", {"requests": {"ephemeral-storage": "1Gi"}}),
        "zero-limits": _pod("p", {"limits": {"cpu": "0", "memory": "0"}}),
        "guaranteed-and-besteffort": _pod("p", {"limits": both}, {}),
        "two-guaranteed": _pod("p", {"limits": both}, {"requests": both, "limits": both}),
        "init-container-burstable": _pod("p", {"limits": both}, init={"requests": cpu}),
        "pod-level-resources": {
            **_pod("p", {}),
            "spec": {**_pod("p", {})["spec"], "resources": {"limits": both}},
        },
    }
    return [
        Scenario(f"workload/qos/{name}", "workload", [post(PODS, body, view=at("status", "qosClass"))])
        for name, body in cases.items()
    ]


def defaulted_resources() -> list[Scenario]:
    """Requests the API server defaults on create: a container's (init containers too) from its
    limits (SetDefaults_Pod), and pod-level requests and limits (DefaultPodLevelResources in the Pod
    strategy's PrepareForCreate, with its aggregation of the containers' requests and limits)."""

    def resources(body: Any) -> Any:
        spec = body.get("spec") or {}
        return {
            "pod": spec.get("resources"),
            "containers": [c.get("resources") for c in spec.get("containers") or []],
            "init": [c.get("resources") for c in spec.get("initContainers") or []],
            "qos": (body.get("status") or {}).get("qosClass"),
        }

    def with_pod_level(pod: dict[str, Any], pod_resources: dict[str, Any]) -> dict[str, Any]:
        return {**pod, "spec": {**pod["spec"], "resources": pod_resources}}

    both = {"cpu": "1", "memory": "1Gi"}
    cases: dict[str, dict[str, Any]] = {
        "init-limits-only": _pod("p", {}, init={"limits": {"cpu": "200m"}}),
        "pod-limits-only": with_pod_level(_pod("p", {}), {"limits": both}),
        "pod-limits-and-container-requests": with_pod_level(
            _pod("p", {"requests": {"memory": "64Mi"}}, {"requests": {"memory": "64Mi", "cpu": "100m"}}),
            {"limits": {"cpu": "1"}},
        ),
        "pod-requests-and-container-limits": with_pod_level(
            _pod("p", {"limits": {"cpu": "300m"}}, {"limits": {"cpu": "200m"}}), {"requests": {"cpu": "100m"}}
        ),
        "pod-request-above-container-limits": with_pod_level(
            _pod("p", {"limits": {"cpu": "300m"}}), {"requests": {"cpu": "2"}}
        ),
        "init-floor-and-sidecar": {
            **_pod("p", {"requests": {"cpu": "100m"}}),
            "spec": {
                **_pod("p", {"requests": {"cpu": "100m"}})["spec"],
                "initContainers": [
                    {
                        "name": "side",
                        "image": "envoy",
                        "restartPolicy": "Always",
                        "resources": {"requests": {"cpu": "50m"}},
                    },
                    {"name": "init", "image": "busybox", "resources": {"requests": {"cpu": "500m"}}},
                ],
                "resources": {"limits": {"cpu": "2", "memory": "1Gi"}},
            },
        },
    }
    inconsistent = {
        "requests-below-containers": with_pod_level(
            _pod("p", {"requests": {"cpu": "300m"}}, {"requests": {"cpu": "200m"}}),
            {"requests": {"cpu": "100m"}},
        ),
        "container-limit-above-pod": with_pod_level(
            _pod("p", {"limits": {"memory": "2Gi"}}),
            {"limits": {"memory": "1Gi"}, "requests": {"memory": "1Gi"}},
        ),
    }
    return [
        *(
            Scenario(f"workload/resources/{name}", "workload", [post(PODS, body, view=resources)])
            for name, body in cases.items()
        ),
        *(
            Scenario(f"workload/resources/invalid/{name}", "workload", [post(PODS, body, view=at("message"))])
            for name, body in inconsistent.items()
        ),
    ]


def empty_metadata_maps() -> list[Scenario]:
    """An empty `annotations` or `labels` map is dropped in storage (an empty Go map is no protobuf
    entry): a create, an update and a status write sending `{}` read back without it. The
    Deployment controller's status writes send a Deployment's annotations, empty ones included."""
    deploys = "/apis/apps/v1/namespaces/{ns}/deployments"
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "annotations": {}, "labels": {}},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }

    def meta(body: Any) -> Any:
        m = body.get("metadata") or {}
        return {k: m.get(k, "<absent>") for k in ("annotations", "labels")}

    def emptied(ctx: list[Any]) -> Any:
        last = ctx[-1]
        return {**last, "metadata": {**last["metadata"], "annotations": {}, "labels": {}}}

    return [
        Scenario(
            "workload/empty-metadata-maps",
            "workload",
            [
                post(deploys, body, view=meta),
                Step("PUT", deploys + "/d", emptied, view=meta),
                Step("PUT", deploys + "/d/status", emptied, view=meta),
                get(deploys + "/d", view=meta),
            ],
        )
    ]


def status_keeps_qos() -> list[Scenario]:
    """The QoS class is immutable: a status write that leaves it out keeps it."""
    return [
        Scenario(
            "workload/qos/status-write-keeps-it",
            "workload",
            [
                post(
                    PODS, _pod("p", {"limits": {"cpu": "1", "memory": "1Gi"}}), view=at("status", "qosClass")
                ),
                Step(
                    "PUT",
                    PODS + "/p/status",
                    lambda ctx: {**ctx[0], "status": {"phase": "Pending"}},
                    view=at("status"),
                ),
            ],
        )
    ]


PDBS = "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"
READY = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
NOT_READY = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]}}


def _guarded_pod(name: str = "p", node: str = "") -> dict[str, Any]:
    pod = _pod(name, {})
    pod["metadata"]["labels"] = {"app": "g"}
    if node:
        pod["spec"]["nodeName"] = node
    return pod


def _budget(name: str = "keep", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "g"}}, **spec},
    }


def _evict(name: str = "p", **body: Any) -> Step:
    return Step(
        "POST",
        PODS + f"/{name}/eviction",
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}, **body},
        messages=True,
        compare_headers=("Retry-After",),
    )


def _pdb_status(**status: Any) -> Step:
    """The budget's status as a disruption controller would have written it."""
    return setup(
        Step(
            "PUT",
            PDBS + "/keep/status",
            lambda ctx: {
                **next(
                    r for r in reversed(ctx.responses) if r.body.get("kind") == "PodDisruptionBudget"
                ).body,
                "status": {"observedGeneration": 1, "expectedPods": 1, **status},
            },
        )
    )


def _compared(step: Step) -> Step:
    step.compare, step.messages = True, True
    return step


def _pod_status(status: dict[str, Any], name: str = "p") -> Step:
    return setup(Step("PATCH", PODS + f"/{name}/status", status, patch="merge"))


def evictions() -> list[Scenario]:
    """The eviction subresource on a server without a disruption controller: it judges by the budget's
    status as it finds it (issue 36's drain)."""
    running = [setup(post(PODS, _guarded_pod())), _pod_status(READY)]
    seqs: dict[str, list[Step]] = {
        "pending-pod-no-budget": [setup(post(PODS, _pod("p", {}))), _evict(), get(PODS + "/p")],
        "pending-pod-ignores-budget": [
            setup(post(PODS, _guarded_pod())),
            setup(post(PDBS, _budget(minAvailable=1))),
            _evict(),
        ],
        "not-observed": [*running, setup(post(PDBS, _budget(minAvailable=1))), _evict()],
        "no-disruption-allowed": [
            *running,
            setup(post(PDBS, _budget(minAvailable=1))),
            _pdb_status(currentHealthy=1, desiredHealthy=1, disruptionsAllowed=0),
            _evict(),
        ],
        "disruption-allowed": [
            setup(post(PODS, _guarded_pod(node="n1"))),
            _pod_status(READY),
            setup(post(PDBS, _budget(minAvailable=0))),
            _pdb_status(currentHealthy=1, desiredHealthy=0, disruptionsAllowed=1),
            _evict(),
            get(
                PDBS + "/keep",
                view=lambda b: {k: v for k, v in b.get("status", {}).items() if k != "disruptedPods"},
            ),
            get(PDBS + "/keep", view=lambda b: sorted(b.get("status", {}).get("disruptedPods") or {})),
            get(
                PODS + "/p",
                view=lambda b: [c for c in b["status"]["conditions"] if c["type"] == "DisruptionTarget"],
            ),
        ],
        "negative-counts-refused": [
            *running,
            setup(post(PDBS, _budget(minAvailable=1))),
            _compared(
                _pdb_status(currentHealthy=-1, desiredHealthy=1, disruptionsAllowed=-1, expectedPods=-2)
            ),
            _evict(),
        ],
        "two-budgets": [
            *running,
            setup(post(PDBS, _budget("one", minAvailable=1))),
            setup(post(PDBS, _budget("two", maxUnavailable=1))),
            _evict(),
        ],
        "unhealthy-always-allow": [
            setup(post(PODS, _guarded_pod())),
            _pod_status(NOT_READY),
            setup(post(PDBS, _budget(minAvailable=1, unhealthyPodEvictionPolicy="AlwaysAllow"))),
            _evict(),
            get(PODS + "/p"),
        ],
        "name-mismatch": [
            *running,
            Step("POST", PODS + "/p/eviction", {"metadata": {"name": "q"}}, messages=True),
        ],
        "ignore-store-read-errors": [
            *running,
            _evict(deleteOptions={"ignoreStoreReadErrorWithClusterBreakingPotential": True}),
        ],
        "dry-run": [
            setup(post(PODS, _guarded_pod(node="n1"))),
            _pod_status(READY),
            setup(post(PDBS, _budget(minAvailable=0))),
            _pdb_status(currentHealthy=1, desiredHealthy=0, disruptionsAllowed=1),
            _evict(deleteOptions={"dryRun": ["All"]}),
            get(PDBS + "/keep", view=at("status", "disruptionsAllowed")),
            get(PODS + "/p", view=lambda b: bool(b["metadata"].get("deletionTimestamp"))),
        ],
    }
    return [Scenario(f"workload/eviction/{name}", "workload", steps) for name, steps in seqs.items()]


def field_selectors() -> list[Scenario]:
    """An unsupported field selector, worded word for word (lists, watches, several kinds)."""
    core, fs = "/api/v1/namespaces/{ns}", "fieldSelector="
    paths = {
        "configmap-data": "/api/v1/namespaces/{ns}/configmaps?fieldSelector=data.color%3Dgreen",
        "configmap-two": f"{core}/configmaps?{fs}metadata.name%3Da,data.color%3Dgreen",
        "configmap-watch": "/api/v1/namespaces/{ns}/configmaps?watch=1&fieldSelector=data.color%3Dgreen",
        "pod-spec-field": "/api/v1/namespaces/{ns}/pods?fieldSelector=spec.hostname%3Dx",
        "all-namespaces": "/api/v1/configmaps?fieldSelector=data.color%3Dgreen",
        "deployment": "/apis/apps/v1/namespaces/{ns}/deployments?fieldSelector=spec.replicas%3D1",
        "custom": "/apis/conf.example.com/v1/namespaces/{ns}/widgets?fieldSelector=spec.color%3Dgreen",
        "cluster-scoped": "/api/v1/nodes?fieldSelector=spec.podCIDR%3Dx",
        "node-namespace": "/api/v1/nodes?fieldSelector=metadata.namespace%3Dx",
        "job": "/apis/batch/v1/namespaces/{ns}/jobs?fieldSelector=spec.parallelism%3D1",
        "replicationcontroller-replicas": f"{core}/replicationcontrollers?{fs}status.replicas%3D1",
        "replicaset-replicas": "/apis/apps/v1/namespaces/{ns}/replicasets?fieldSelector=status.replicas%3D1",
        "service-type": "/api/v1/namespaces/{ns}/services?fieldSelector=spec.type%3DClusterIP",
        "namespace-namespace": "/api/v1/namespaces?fieldSelector=metadata.namespace%3Dx",
        "event-source": "/api/v1/namespaces/{ns}/events?fieldSelector=source%3Dkubelet",
        "new-event-note": "/apis/events.k8s.io/v1/namespaces/{ns}/events?fieldSelector=note%3Dx",
        "csr-namespace": f"/apis/certificates.k8s.io/v1/certificatesigningrequests?{fs}metadata.namespace%3D",
        "resourceslice": "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.devices%3Dx",
        "pod-spec-host": "/api/v1/namespaces/{ns}/pods?fieldSelector=spec.host%3Dn1",
    }
    return [
        Scenario(f"workload/field-selector/{name}", "workload", [get(path, messages=True)])
        for name, path in paths.items()
    ]


DEPLOYMENTS = "/apis/apps/v1/namespaces/{ns}/deployments"


def deployment_generations() -> list[Scenario]:
    """A Deployment's strategy bumps its generation on annotations too; its status strategy takes the
    annotations sent (how the deployment controller writes its revision) but keeps the labels."""
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "labels": {"a": "1"}},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    meta = lambda b: {k: b["metadata"].get(k) for k in ("generation", "labels", "annotations")}  # noqa: E731
    return [
        Scenario(
            "workload/deployment/annotations-bump-generation",
            "workload",
            [
                setup(post(DEPLOYMENTS, body)),
                Step(
                    "PATCH",
                    DEPLOYMENTS + "/d",
                    {"metadata": {"labels": {"b": "2"}}},
                    patch="merge",
                    view=meta,
                ),
                Step(
                    "PATCH",
                    DEPLOYMENTS + "/d",
                    {"metadata": {"annotations": {"n": "x"}}},
                    patch="merge",
                    view=meta,
                ),
            ],
        ),
        Scenario(
            "workload/deployment/status-takes-annotations",
            "workload",
            [
                setup(post(DEPLOYMENTS, body)),
                Step(
                    "PATCH",
                    DEPLOYMENTS + "/d/status",
                    {
                        "metadata": {
                            "labels": {"b": "2"},
                            "annotations": {"deployment.kubernetes.io/revision": "1"},
                        }
                    },
                    patch="merge",
                    view=meta,
                ),
            ],
        ),
    ]


SCENARIOS: list[Scenario] = [
    *qos_classes(),
    *defaulted_resources(),
    *empty_metadata_maps(),
    *status_keeps_qos(),
    *evictions(),
    *field_selectors(),
    *deployment_generations(),
]
