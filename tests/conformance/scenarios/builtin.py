"""Families over built-in kinds: CRUD, errors, dry run, field validation, YAML bodies, Table output."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tests.conformance.harness import Scenario
from tests.conformance.scenarios.steps import delete, get, meta, names, patch, post, put, setup

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
CONTAINER = {"name": "c", "image": "nginx"}
TEMPLATE = {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [CONTAINER]}}


@dataclass
class Kind:
    kind: str
    api: str  # /api/v1 or /apis/<group>/<version>
    plural: str
    fields: dict[str, Any]  # beside apiVersion/kind/metadata
    namespaced: bool = True
    nested_unknown: dict[str, Any] | None = None  # a body fragment with an unknown nested field
    wrong_type: dict[str, Any] | None = None  # a body fragment with a wrongly typed field
    update: dict[str, Any] = field(default_factory=lambda: {"metadata": {"labels": {"updated": "yes"}}})

    @property
    def api_version(self) -> str:
        return "v1" if self.api == "/api/v1" else self.api.removeprefix("/apis/")

    def collection(self, ns: str = "{ns}") -> str:
        return f"{self.api}/namespaces/{ns}/{self.plural}" if self.namespaced else f"{self.api}/{self.plural}"

    def item(self, name: str) -> str:
        return f"{self.collection()}/{name}"

    def name(self, base: str) -> str:
        # cluster-scoped objects are shared by every scenario: their names carry the namespace
        return base if self.namespaced else f"{base}-{{ns}}"

    def body(self, name: str, **extra: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"apiVersion": self.api_version, "kind": self.kind, "metadata": {"name": name}}
        out.update(self.fields)
        for k, v in extra.items():
            out[k] = {**out.get(k, {}), **v} if isinstance(v, dict) and isinstance(out.get(k), dict) else v
        return out


RULES = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]
SUBJECTS = [{"kind": "ServiceAccount", "name": "default", "namespace": "default"}]

KINDS = [
    Kind("ConfigMap", "/api/v1", "configmaps", {"data": {"a": "1"}}, wrong_type={"data": ["a", "b"]}),
    Kind("Secret", "/api/v1", "secrets", {"stringData": {"a": "b"}}, wrong_type={"data": "x"}),
    Kind(
        "Pod",
        "/api/v1",
        "pods",
        {"spec": {"containers": [CONTAINER]}},
        nested_unknown={"spec": {"containers": [CONTAINER], "junk": 1}},
        wrong_type={"spec": {"containers": [CONTAINER], "activeDeadlineSeconds": "soon"}},
    ),
    Kind(
        "Service",
        "/api/v1",
        "services",
        {"spec": {"ports": [{"port": 80}]}},
        nested_unknown={"spec": {"ports": [{"port": 80, "junk": 1}]}},
        wrong_type={"spec": {"ports": [{"port": "eighty"}]}},
    ),
    Kind(
        "ServiceAccount", "/api/v1", "serviceaccounts", {}, wrong_type={"automountServiceAccountToken": "x"}
    ),
    Kind("Namespace", "/api/v1", "namespaces", {}, namespaced=False),
    Kind(
        "Deployment",
        "/apis/apps/v1",
        "deployments",
        {"spec": {"selector": {"matchLabels": {"app": "x"}}, "template": TEMPLATE}},
        nested_unknown={"spec": {"selector": {"matchLabels": {"app": "x"}}, "template": TEMPLATE, "junk": 1}},
        wrong_type={
            "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": TEMPLATE, "replicas": "three"}
        },
    ),
    Kind(
        "StatefulSet",
        "/apis/apps/v1",
        "statefulsets",
        {"spec": {"selector": {"matchLabels": {"app": "x"}}, "template": TEMPLATE, "serviceName": "s"}},
        nested_unknown={
            "spec": {
                "selector": {"matchLabels": {"app": "x"}},
                "serviceName": "s",
                "template": {
                    "metadata": {"labels": {"app": "x"}, "junk": 1},
                    "spec": {"containers": [{**CONTAINER, "junk": 1}]},
                },
            }
        },
    ),
    Kind(
        "DaemonSet",
        "/apis/apps/v1",
        "daemonsets",
        {"spec": {"selector": {"matchLabels": {"app": "x"}}, "template": TEMPLATE}},
    ),
    Kind(
        "ReplicaSet",
        "/apis/apps/v1",
        "replicasets",
        {"spec": {"selector": {"matchLabels": {"app": "x"}}, "template": TEMPLATE}},
    ),
    Kind(
        "Job",
        "/apis/batch/v1",
        "jobs",
        {"spec": {"template": {"spec": {"containers": [CONTAINER], "restartPolicy": "Never"}}}},
        nested_unknown={
            "spec": {"template": {"spec": {"containers": [CONTAINER], "restartPolicy": "Never"}}, "junk": 1}
        },
    ),
    Kind(
        "CronJob",
        "/apis/batch/v1",
        "cronjobs",
        {
            "spec": {
                "schedule": "*/5 * * * *",
                "jobTemplate": {
                    "spec": {"template": {"spec": {"containers": [CONTAINER], "restartPolicy": "Never"}}}
                },
            }
        },
        nested_unknown={
            "spec": {
                "schedule": "*/5 * * * *",
                "jobTemplate": {
                    "spec": {
                        "junk": 1,
                        "template": {"spec": {"containers": [CONTAINER], "restartPolicy": "Never"}},
                    }
                },
            }
        },
    ),
    Kind(
        "Role",
        "/apis/rbac.authorization.k8s.io/v1",
        "roles",
        {"rules": RULES},
        nested_unknown={"rules": [{**RULES[0], "junk": 1}]},
    ),
    Kind(
        "RoleBinding",
        "/apis/rbac.authorization.k8s.io/v1",
        "rolebindings",
        {
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
            "subjects": SUBJECTS,
        },
    ),
    Kind(
        "ClusterRole",
        "/apis/rbac.authorization.k8s.io/v1",
        "clusterroles",
        {"rules": RULES},
        namespaced=False,
    ),
    Kind(
        "PersistentVolumeClaim",
        "/api/v1",
        "persistentvolumeclaims",
        {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
    ),
    Kind("LimitRange", "/api/v1", "limitranges", {"spec": {"limits": [{"type": "Container"}]}}),
    Kind("ResourceQuota", "/api/v1", "resourcequotas", {"spec": {"hard": {"pods": "10"}}}),
    Kind(
        "Endpoints",
        "/api/v1",
        "endpoints",
        {"subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 80}]}]},
        nested_unknown={"subsets": [{"addresses": [{"ip": "10.1.2.3", "junk": 1}], "ports": [{"port": 80}]}]},
    ),
    Kind(
        "Lease",
        "/apis/coordination.k8s.io/v1",
        "leases",
        {"spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}},
        wrong_type={"spec": {"leaseDurationSeconds": "long"}},
    ),
    Kind(
        "NetworkPolicy",
        "/apis/networking.k8s.io/v1",
        "networkpolicies",
        {"spec": {"podSelector": {}}},
    ),
    Kind(
        "Ingress",
        "/apis/networking.k8s.io/v1",
        "ingresses",
        {"spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}},
        nested_unknown={
            "spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80, "junk": 1}}}}
        },
    ),
    Kind(
        "PodDisruptionBudget",
        "/apis/policy/v1",
        "poddisruptionbudgets",
        {"spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}}},
        nested_unknown={"spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}, "junk": 1}}},
    ),
    Kind(
        "HorizontalPodAutoscaler",
        "/apis/autoscaling/v2",
        "horizontalpodautoscalers",
        {
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                "maxReplicas": 3,
            }
        },
    ),
    Kind(
        "HorizontalPodAutoscaler",
        "/apis/autoscaling/v1",
        "horizontalpodautoscalers",
        {
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                "maxReplicas": 3,
            }
        },
    ),
    Kind("PriorityClass", "/apis/scheduling.k8s.io/v1", "priorityclasses", {"value": 1000}, namespaced=False),
    Kind(
        "StorageClass",
        "/apis/storage.k8s.io/v1",
        "storageclasses",
        {"provisioner": "example.com/p"},
        namespaced=False,
    ),
    Kind("IngressClass", "/apis/networking.k8s.io/v1", "ingressclasses", {"spec": {}}, namespaced=False),
    Kind("RuntimeClass", "/apis/node.k8s.io/v1", "runtimeclasses", {"handler": "runc"}, namespaced=False),
    Kind("CSIDriver", "/apis/storage.k8s.io/v1", "csidrivers", {"spec": {}}, namespaced=False),
]


def _id(k: Kind) -> str:
    version = k.api_version.replace("/", "-").replace(".", "-")
    return f"{k.kind.lower()}@{version}"


def crud(k: Kind) -> list[Scenario]:
    n = k.name("obj")
    item = k.item(n)
    sid = _id(k)
    out = [
        Scenario(f"crud/{sid}/create-get", "crud", [post(k.collection(), k.body(n)), get(item)]),
        Scenario(
            f"crud/{sid}/create-twice",
            "crud",
            [setup(post(k.collection(), k.body(n))), post(k.collection(), k.body(n))],
        ),
        Scenario(
            f"crud/{sid}/update",
            "crud",
            [
                setup(post(k.collection(), k.body(n))),
                put(item, lambda ctx: {**ctx[0], "metadata": {**ctx[0]["metadata"], "labels": {"u": "1"}}}),
            ],
        ),
        Scenario(
            f"crud/{sid}/update-stale",
            "crud",
            [
                setup(post(k.collection(), k.body(n))),
                setup(patch(item, {"metadata": {"labels": {"a": "b"}}})),
                put(item, lambda ctx: {**ctx[0], "metadata": {**ctx[0]["metadata"], "labels": {"u": "1"}}}),
            ],
        ),
        Scenario(
            f"crud/{sid}/update-missing",
            "crud",
            [put(item, k.body(n))],
        ),
        Scenario(
            f"crud/{sid}/merge-patch",
            "crud",
            [setup(post(k.collection(), k.body(n))), patch(item, k.update)],
        ),
        Scenario(
            f"crud/{sid}/delete",
            "crud",
            [setup(post(k.collection(), k.body(n))), delete(item), get(item, view=meta), delete(item)],
        ),
        Scenario(
            f"crud/{sid}/generate-name",
            "crud",
            [post(k.collection(), {**k.body(n), "metadata": {"generateName": k.name("gen") + "-"}})],
        ),
        Scenario(
            f"crud/{sid}/invalid-name",
            "crud",
            [post(k.collection(), k.body("Bad_Name"))],
        ),
        Scenario(
            f"crud/{sid}/no-name",
            "crud",
            [post(k.collection(), {**k.body(n), "metadata": {}})],
        ),
        Scenario(
            f"crud/{sid}/dry-run",
            "crud",
            [post(k.collection() + "?dryRun=All", k.body(n)), get(item)],
        ),
        Scenario(
            f"crud/{sid}/put-name-mismatch",
            "crud",
            [setup(post(k.collection(), k.body(n))), put(k.item(k.name("other")), k.body(n))],
        ),
        Scenario(
            f"crud/{sid}/table",
            "table",
            [
                setup(post(k.collection(), k.body(n))),
                # a cluster-scoped list holds other scenarios' objects and the bootstrap ones: just ours
                get(
                    k.collection() + ("" if n == "obj" else f"?fieldSelector=metadata.name%3D{n}"),
                    headers={"Accept": TABLE},
                    view=_table_view,
                ),
                get(item, headers={"Accept": TABLE}, view=_table_view),
            ],
        ),
        Scenario(
            f"crud/{sid}/yaml-body",
            "yaml",
            [post(k.collection(), _yaml(k.body(n)), content_type="application/yaml")],
        ),
        Scenario(
            f"fieldvalidation/{sid}/strict-top-level",
            "fieldvalidation",
            [post(k.collection() + "?fieldValidation=Strict", {**k.body(n), "junk": 1})],
        ),
        Scenario(
            f"fieldvalidation/{sid}/warn-top-level",
            "fieldvalidation",
            [
                post(
                    k.collection() + "?fieldValidation=Warn",
                    {**k.body(n), "junk": 1},
                    compare_headers=("Warning",),
                )
            ],
        ),
        Scenario(
            f"fieldvalidation/{sid}/strict-metadata",
            "fieldvalidation",
            [
                post(
                    k.collection() + "?fieldValidation=Strict",
                    {**k.body(n), "metadata": {"name": n, "junk": 1}},
                )
            ],
        ),
    ]
    if k.namespaced:
        out.append(
            Scenario(
                f"crud/{sid}/list",
                "list",
                [
                    setup(post(k.collection(), k.body("b"))),
                    setup(post(k.collection(), k.body("a"))),
                    get(k.collection(), view=names),
                ],
            )
        )
        out.append(
            Scenario(
                f"crud/{sid}/namespace-missing",
                "errors",
                [post(k.collection("nosuchns-{ns}"), k.body(n))],
            )
        )
    if k.nested_unknown is not None:
        for mode in ("Strict", "Ignore", "Warn"):
            out.append(
                Scenario(
                    f"fieldvalidation/{sid}/nested-{mode.lower()}",
                    "fieldvalidation",
                    [
                        post(
                            k.collection() + f"?fieldValidation={mode}",
                            k.body(n, **k.nested_unknown),
                            compare_headers=("Warning",),
                        )
                    ],
                )
            )
    if k.wrong_type is not None:
        out.append(
            Scenario(
                f"fieldvalidation/{sid}/wrong-type",
                "fieldvalidation",
                [post(k.collection(), k.body(n, **k.wrong_type), view=meta), get(item, view=meta)],
            )
        )
    return out


def _table_view(body: Any) -> Any:
    """The column definitions whole; the cells of the scenario's own object (a cluster-scoped list
    also holds the server's bootstrap objects), and the object each row carries."""
    rows = body.get("rows", [])
    return {
        "kind": body.get("kind"),
        "columns": body.get("columnDefinitions"),
        "cells": [[_cell_view(c) for c in r.get("cells", [])] for r in rows],
        "objects": [
            ((r.get("object") or {}).get("kind"), (r.get("object") or {}).get("apiVersion")) for r in rows
        ],
        "conditions": [r.get("conditions") for r in rows],
    }


_UID_IN = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_IP = re.compile(r"^\d+\.\d+\.\d+\.\d+$")


def _cell_view(cell: Any) -> Any:
    """A generated uid inside a cell (a Job's selector) and an allocated ClusterIP differ legitimately."""
    if isinstance(cell, str):
        return "<ip>" if _IP.match(cell) else _UID_IN.sub("<uid>", cell)
    return cell


def _yaml(body: dict[str, Any]) -> str:
    import yaml

    return yaml.safe_dump(body)


SCENARIOS: list[Scenario] = [s for k in KINDS for s in crud(k)]
