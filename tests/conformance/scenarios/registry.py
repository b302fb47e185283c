"""The registry's rules Go's own envtest suites found missing (issue 40): the namespace `/finalize`
subresource and `spec.finalizers`, pod templates validated for every workload, dry run where a
DeleteOptions body asks for it and on a create naming a resourceVersion, the status strategies'
metadata, and the immutable fields of built-ins."""

from __future__ import annotations

from typing import Any

from tests.conformance.harness import Scenario, Step
from tests.conformance.scenarios.steps import delete, get, meta, names, patch, post, put, setup

NS = "/api/v1/namespaces"
CM = "/api/v1/namespaces/{ns}/configmaps"
CONTAINER = {"name": "c", "image": "nginx"}
LABELS = {"app": "x"}
SELECTOR = {"matchLabels": LABELS}


def _ns(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, **extra}


def _ns_view(body: Any) -> Any:
    m = body.get("metadata", {})
    return {
        "labels": m.get("labels"),
        "finalizers": m.get("finalizers"),
        "deleting": bool(m.get("deletionTimestamp")),
        "spec": body.get("spec"),
        "status": body.get("status"),
    }


def namespaces() -> list[Scenario]:
    n = "{ns}-n"
    item, fin, status = f"{NS}/{n}", f"{NS}/{n}/finalize", f"{NS}/{n}/status"
    seqs: dict[str, list[Step]] = {
        "finalize-active": [
            post(NS, _ns(n, spec={"finalizers": ["example.com/x"]}), view=_ns_view),
            put(
                fin,
                _ns(n, spec={"finalizers": ["example.com/y"]}, status={"phase": "Terminating"})
                | {"metadata": {"name": n, "labels": {"l": "1"}}},
                view=_ns_view,
            ),
            put(item, _ns(n, spec={"finalizers": []}), view=_ns_view),  # a plain update keeps them
            get(item, view=_ns_view),
        ],
        "finalize-invalid": [
            setup(post(NS, _ns(n))),
            put(fin, _ns(n, spec={"finalizers": ["bad name!", "nodomain", "kubernetes"]}), messages=True),
        ],
        "finalize-methods": [
            setup(post(NS, _ns(n))),
            get(fin),
            patch(fin, {"spec": {"finalizers": []}}),
            put(f"{NS}/missing-{n}/finalize", _ns(f"missing-{n}", spec={"finalizers": []})),
        ],
        "finalize-deletes": [
            setup(post(NS, _ns(n))),
            delete(item, view=_ns_view),
            delete(item, view=_ns_view),  # spec.finalizers still hold it: nothing changes
            put(fin, _ns(n, spec={"finalizers": []}), view=_ns_view),
            get(item, status_only=True),
        ],
        "finalize-then-metadata-finalizer": [
            setup(post(NS, _ns(n) | {"metadata": {"name": n, "finalizers": ["example.com/f"]}})),
            delete(item, view=_ns_view),
            put(
                fin,
                _ns(n, spec={"finalizers": []}) | {"metadata": {"name": n, "finalizers": ["example.com/f"]}},
                view=_ns_view,  # managedFields: the create entry's set holds the strategy's spec.finalizers
            ),
            get(item, view=_ns_view),
            patch(item, {"metadata": {"finalizers": None}}, view=_ns_view),
            get(item, status_only=True),
        ],
        "finalize-before-delete": [
            setup(post(NS, _ns(n))),
            put(fin, _ns(n, spec={"finalizers": []}), view=_ns_view),
            delete(item, view=_ns_view),  # the first delete only marks it
            get(item, view=_ns_view),
            delete(item, status_only=True),  # the second removes it: nothing holds it
            get(item, status_only=True),
        ],
        "status-phase": [
            setup(post(NS, _ns(n))),
            put(status, _ns(n, status={"phase": "Terminating"})),
            patch(status, {"metadata": {"labels": {"s": "1"}}, "status": {"phase": "Active"}}, view=_ns_view),
            put(status, _ns(n, spec={"finalizers": []}, status={"phase": "Active"}), view=_ns_view),
        ],
    }
    return [Scenario(f"registry/namespace/{k}", "registry", v, namespace=False) for k, v in seqs.items()]


def _template(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": LABELS}, "spec": {"containers": [CONTAINER], **spec}}


# kind -> (collection, body with the pod template's spec given)
def _workload(
    kind: str, pod_spec: dict[str, Any], labels: dict[str, str] = LABELS
) -> tuple[str, dict[str, Any]]:
    template = {"metadata": {"labels": labels}, "spec": pod_spec}
    apps = "/apis/apps/v1/namespaces/{ns}/"
    bodies: dict[str, tuple[str, str, dict[str, Any]]] = {
        "Deployment": (
            apps + "deployments",
            "apps/v1",
            {"spec": {"selector": SELECTOR, "template": template}},
        ),
        "ReplicaSet": (
            apps + "replicasets",
            "apps/v1",
            {"spec": {"selector": SELECTOR, "template": template}},
        ),
        "StatefulSet": (
            apps + "statefulsets",
            "apps/v1",
            {"spec": {"selector": SELECTOR, "serviceName": "s", "template": template}},
        ),
        "DaemonSet": (apps + "daemonsets", "apps/v1", {"spec": {"selector": SELECTOR, "template": template}}),
        "ReplicationController": (
            "/api/v1/namespaces/{ns}/replicationcontrollers",
            "v1",
            {"spec": {"selector": LABELS, "template": template}},
        ),
        "Job": ("/apis/batch/v1/namespaces/{ns}/jobs", "batch/v1", {"spec": {"template": template}}),
        "CronJob": (
            "/apis/batch/v1/namespaces/{ns}/cronjobs",
            "batch/v1",
            {"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}},
        ),
        "PodTemplate": ("/api/v1/namespaces/{ns}/podtemplates", "v1", {"template": template}),
    }
    path, api_version, rest = bodies[kind]
    return path, {"apiVersion": api_version, "kind": kind, "metadata": {"name": "w"}, **rest}


WORKLOADS = (
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "DaemonSet",
    "ReplicationController",
    "Job",
    "CronJob",
    "PodTemplate",
)
_BATCH = {"restartPolicy": "Never"}


def templates() -> list[Scenario]:
    out = []
    bad_containers = [
        {"name": "Bad_Name", "image": ""},
        {
            "name": "Bad_Name",
            "image": "x",
            "ports": [{"containerPort": 0}, {"containerPort": 70000, "protocol": "ICMP"}],
        },
        {
            "name": "p",
            "image": "x",
            "ports": [{"name": "web", "containerPort": 80}, {"name": "web", "containerPort": 81}],
        },
    ]
    for kind in WORKLOADS:
        batch = kind in ("Job", "CronJob")
        extra = _BATCH if batch else {}
        for case, pod_spec in (
            ("containers-empty", {"containers": [], **extra}),
            ("containers-null", {"containers": None, **extra}),
            ("containers-invalid", {"containers": bad_containers, "dnsPolicy": "Bad", **extra}),
            ("init-container-duplicate", {"containers": [CONTAINER], "initContainers": [CONTAINER], **extra}),
        ):
            path, body = _workload(kind, pod_spec)
            out.append(Scenario(f"registry/template/{kind.lower()}/{case}", "registry", [post(path, body)]))
        restart = "Always" if batch else "Never"
        path, body = _workload(kind, {"containers": [CONTAINER], "restartPolicy": restart})
        out.append(
            Scenario(
                f"registry/template/{kind.lower()}/restart-{restart.lower()}", "registry", [post(path, body)]
            )
        )
        if not batch and kind != "PodTemplate":
            path, body = _workload(kind, {"containers": [CONTAINER], "activeDeadlineSeconds": 5})
            out.append(
                Scenario(f"registry/template/{kind.lower()}/active-deadline", "registry", [post(path, body)])
            )
            path, body = _workload(kind, {"containers": [CONTAINER]}, labels={"app": "other"})
            out.append(
                Scenario(
                    f"registry/template/{kind.lower()}/selector-mismatch", "registry", [post(path, body)]
                )
            )
    path, body = _workload("Job", {"containers": [CONTAINER]})  # restartPolicy defaulted to Always
    out.append(Scenario("registry/template/job/restart-unset", "registry", [post(path, body)]))
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    pods = "/api/v1/namespaces/{ns}/pods"
    for case, spec in (
        ("containers-empty", {"containers": []}),
        ("containers-invalid", {"containers": bad_containers, "restartPolicy": "Sometimes"}),
        ("hostname", {"containers": [CONTAINER], "hostname": "Not_A_Label", "activeDeadlineSeconds": 0}),
    ):
        out.append(Scenario(f"registry/template/pod/{case}", "registry", [post(pods, {**pod, "spec": spec})]))
    return out


def _cm(name: str = "c", **meta_fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, **meta_fields},
        "data": {"a": "1"},
    }


def dry_run() -> list[Scenario]:
    seqs: dict[str, list[Step]] = {
        "create-rv-valid": [
            post(CM + "?dryRun=All", _cm(resourceVersion="5"), view=meta),
            post(CM, _cm(resourceVersion="5")),
            get(CM + "/c", status_only=True),
        ],
        "create-rv-invalid": [
            post(CM + "?dryRun=All", _cm(resourceVersion="5", labels={"bad key!": "v"})),
            post(CM, _cm(resourceVersion="5", labels={"bad key!": "v"})),
        ],
        "deletecollection-body": [
            setup(post(CM, _cm("a"))),
            setup(post(CM, _cm("b"))),
            delete(CM, {"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]}, view=names),
            get(CM, view=names),
        ],
        "deletecollection-body-invalid": [
            setup(post(CM, _cm("a"))),
            delete(CM, {"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["Some"]}),
            get(CM, view=names),
        ],
        "delete-body": [
            setup(post(CM, _cm("a"))),
            delete(CM + "/a", {"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]}, view=meta),
            get(CM + "/a", view=meta),
        ],
    }
    return [Scenario(f"registry/dryrun/{k}", "registry", v) for k, v in seqs.items()]


def _meta_view(body: Any) -> Any:
    m = body.get("metadata", {})
    return {k: m.get(k) for k in ("labels", "annotations", "finalizers", "generation")}


_CHANGE = {
    "metadata": {
        "labels": {"changed": "1"},
        "annotations": {"note": "kept?"},
        "finalizers": ["example.com/f"],
    }
}


def status_strategies() -> list[Scenario]:
    """A status PATCH changing labels, annotations and finalizers: which of them each kind keeps."""
    cases: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {}
    for kind in (
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
        "DaemonSet",
        "ReplicationController",
        "Job",
        "CronJob",
    ):
        extra = _BATCH if kind in ("Job", "CronJob") else {}
        path, body = _workload(kind, {"containers": [CONTAINER], **extra})
        cases[kind.lower()] = (path, body, {})
    cases["service"] = (
        "/api/v1/namespaces/{ns}/services",
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "w"}, "spec": {"ports": [{"port": 80}]}},
        {},
    )
    cases["pvc"] = (
        "/api/v1/namespaces/{ns}/persistentvolumeclaims",
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "w"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        },
        {},
    )
    cases["pdb"] = (
        "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "w"},
            "spec": {"minAvailable": 1},
        },
        {},
    )
    cases["resourcequota"] = (
        "/api/v1/namespaces/{ns}/resourcequotas",
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "w"},
            "spec": {"hard": {"pods": "1"}},
        },
        {},
    )
    out = []
    for name, (path, body, _extra) in cases.items():
        item = f"{path}/w"
        steps = [
            setup(post(path, body)),
            patch(f"{item}/status", _CHANGE, view=_meta_view),
            get(item, view=_meta_view),
            setup(patch(item, {"metadata": {"finalizers": None}})),
        ]
        out.append(Scenario(f"registry/status/{name}", "registry", steps))
    # a status PUT without the metadata the stored object has
    dep_path, dep = _workload("Deployment", {"containers": [CONTAINER]})
    dep["metadata"]["labels"] = {"keep": "1"}
    dep["metadata"]["annotations"] = {"a": "1"}
    out.append(
        Scenario(
            "registry/status/deployment-put-drops-annotations",
            "registry",
            [
                setup(post(dep_path, dep)),
                put(
                    f"{dep_path}/w/status",
                    {**dep, "metadata": {"name": "w"}, "status": {"replicas": 0}},
                    view=_meta_view,
                ),
            ],
        )
    )
    return out


def immutables() -> list[Scenario]:
    secrets = "/api/v1/namespaces/{ns}/secrets"
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "type": "Opaque",
        "stringData": {"a": "b"},
    }
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "b"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        "subjects": [{"kind": "User", "name": "u", "apiGroup": "rbac.authorization.k8s.io"}],
    }
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "sc-{ns}"},
        "provisioner": "a.example.com",
    }
    pc = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "pc-{ns}"},
        "value": 10,
    }
    ic = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "IngressClass",
        "metadata": {"name": "ic-{ns}"},
        "spec": {"controller": "a.example.com/c"},
    }
    rc = {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": "rc-{ns}"},
        "handler": "runc",
    }
    es = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "e"},
        "addressType": "IPv4",
        "endpoints": [],
    }
    sts_path, sts = _workload("StatefulSet", {"containers": [CONTAINER]})
    job_path, job = _workload("Job", {"containers": [CONTAINER], **_BATCH})
    seqs: dict[str, list[Step]] = {
        "secret-type": [
            setup(post(secrets, secret)),
            patch(f"{secrets}/s", {"type": "kubernetes.io/tls"}, messages=True),
        ],
        "secret-immutable-unset": [
            setup(post(secrets, {**secret, "immutable": True})),
            patch(f"{secrets}/s", {"immutable": False}, messages=True),
        ],
        "configmap-immutable-unset": [
            setup(post(CM, {**_cm(), "immutable": True})),
            patch(f"{CM}/c", {"immutable": None}, messages=True),
        ],
        "rolebinding-roleref": [
            setup(post(f"{rbac}/namespaces/{{ns}}/rolebindings", binding)),
            patch(f"{rbac}/namespaces/{{ns}}/rolebindings/b", {"roleRef": {"name": "other"}}),
        ],
        "storageclass-provisioner": [
            setup(post("/apis/storage.k8s.io/v1/storageclasses", sc)),
            patch(
                "/apis/storage.k8s.io/v1/storageclasses/sc-{ns}",
                {"provisioner": "b.example.com"},
                messages=True,
            ),
            patch(
                "/apis/storage.k8s.io/v1/storageclasses/sc-{ns}", {"reclaimPolicy": "Retain"}, messages=True
            ),
            setup(delete("/apis/storage.k8s.io/v1/storageclasses/sc-{ns}")),
        ],
        "priorityclass-value": [
            setup(post("/apis/scheduling.k8s.io/v1/priorityclasses", pc)),
            patch("/apis/scheduling.k8s.io/v1/priorityclasses/pc-{ns}", {"value": 11}, messages=True),
            patch(
                "/apis/scheduling.k8s.io/v1/priorityclasses/pc-{ns}",
                {"preemptionPolicy": "Never"},
                messages=True,
            ),
            setup(delete("/apis/scheduling.k8s.io/v1/priorityclasses/pc-{ns}")),
        ],
        "ingressclass-controller": [
            setup(post("/apis/networking.k8s.io/v1/ingressclasses", ic)),
            patch(
                "/apis/networking.k8s.io/v1/ingressclasses/ic-{ns}",
                {"spec": {"controller": "b.example.com/c"}},
                messages=True,
            ),
            setup(delete("/apis/networking.k8s.io/v1/ingressclasses/ic-{ns}")),
        ],
        "runtimeclass-handler": [
            setup(post("/apis/node.k8s.io/v1/runtimeclasses", rc)),
            patch("/apis/node.k8s.io/v1/runtimeclasses/rc-{ns}", {"handler": "crun"}, messages=True),
            setup(delete("/apis/node.k8s.io/v1/runtimeclasses/rc-{ns}")),
        ],
        "endpointslice-addresstype": [
            setup(post("/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices", es)),
            patch(
                "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices/e",
                {"addressType": "IPv6"},
                messages=True,
            ),
        ],
        "statefulset-servicename": [
            setup(post(sts_path, sts)),
            patch(
                f"{sts_path}/w",
                {"spec": {"serviceName": "other", "podManagementPolicy": "Parallel"}},
                messages=True,
            ),
        ],
        "job-completionmode": [
            setup(post(job_path, job)),
            patch(f"{job_path}/w", {"spec": {"completionMode": "Indexed"}}),
        ],
    }
    return [Scenario(f"registry/immutable/{k}", "registry", v) for k, v in seqs.items()]


def disruption_budgets() -> list[Scenario]:
    path = "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"
    out = []
    for name, spec in (
        ("words", {"minAvailable": "seven"}),
        ("over-100", {"minAvailable": "150%"}),
        ("negative", {"maxUnavailable": -1}),
        ("both", {"minAvailable": 1, "maxUnavailable": 1}),
    ):
        body = {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "b"},
            "spec": spec,
        }
        out.append(Scenario(f"registry/pdb/{name}", "registry", [post(path, body, messages=True)]))
    return out


SCENARIOS: list[Scenario] = [
    *namespaces(),
    *templates(),
    *dry_run(),
    *status_strategies(),
    *immutables(),
    *disruption_budgets(),
]
