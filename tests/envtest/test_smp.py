"""Strategic merge patch driven by the models' patch metadata (issue 29, item 6): a table of patches on
built-in kinds, each result as kube-apiserver v1.37 gives it (the corpus's `patch/smp-*` scenarios
compare the same cases with the real server), then the errors and the HTTP front."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx2
import pytest

from pyscaffold_op.envtest.registry.patch import strategic_merge_patch
from pyscaffold_op.envtest.status import StatusError

SMP = {"content-type": "application/strategic-merge-patch+json"}


def obj(api_version: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, **fields}


def container(name: str, **kw: Any) -> dict[str, Any]:
    return {"name": name, "image": "nginx", **kw}


POD = obj(
    "v1",
    "Pod",
    spec={
        "containers": [
            container(
                "c",
                env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                ports=[{"containerPort": 80, "name": "http"}, {"containerPort": 443, "name": "https"}],
            ),
            container("side"),
        ],
        "volumes": [{"name": "v", "emptyDir": {}}, {"name": "w", "configMap": {"name": "cm"}}],
        "tolerations": [{"key": "a", "operator": "Exists"}],
        "imagePullSecrets": [{"name": "s1"}],
    },
    status={"podIPs": [{"ip": "10.0.0.1"}], "conditions": [{"type": "Ready", "status": "False"}]},
)
DEPLOYMENT = obj(
    "apps/v1",
    "Deployment",
    spec={
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
        "template": {"metadata": {"labels": {"app": "x", "tier": "web"}}, "spec": POD["spec"]},
    },
)
SERVICE = obj("v1", "Service", spec={"ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]})
SECRET = obj("v1", "Secret", data={"a": "MQ==", "b": "Mg=="})
SERVICE_ACCOUNT = obj("v1", "ServiceAccount", secrets=[{"name": "t1"}], imagePullSecrets=[{"name": "p1"}])
MWC = obj(
    "admissionregistration.k8s.io/v1",
    "MutatingWebhookConfiguration",
    webhooks=[
        {"name": "a.example.com", "timeoutSeconds": 10},
        {"name": "b.example.com", "timeoutSeconds": 10},
    ],
)
PDB = obj(
    "policy/v1", "PodDisruptionBudget", spec={"minAvailable": 1, "selector": {"matchLabels": {"a": "1"}}}
)
NODE = obj("v1", "Node", spec={"taints": [{"key": "a", "effect": "NoSchedule"}]})
CONFIGMAP = obj("v1", "ConfigMap", data={"a": "1"})
CONFIGMAP["metadata"]["finalizers"] = ["e/a", "e/b", "e/c"]
APISERVICE = obj(
    "apiregistration.k8s.io/v1",
    "APIService",
    spec={"caBundle": "", "groupPriorityMinimum": 1},
    status={"conditions": [{"type": "Available", "status": "True"}]},
)
ENDPOINT_SLICE = obj("discovery.k8s.io/v1", "EndpointSlice", endpoints=[{"addresses": ["10.0.0.1"]}])


def pod_spec(body: dict[str, Any]) -> dict[str, Any]:
    return {"spec": body}


def names(items: list[dict[str, Any]], *fields: str) -> list[Any]:
    if not fields:
        return [i["name"] for i in items]
    return [tuple(i.get(f) for f in fields) for i in items]


def get(o: Any, *path: Any) -> Any:
    for p in path:
        o = o[p]
    return o


CASES: list[tuple[str, dict[str, Any], dict[str, Any], tuple[Any, ...], Any]] = [
    # (id, object, patch, path of the result, expected value at that path)
    (
        "pod-containers-by-name",
        POD,
        pod_spec({"containers": [{"name": "side", "image": "redis"}]}),
        ("spec", "containers"),
        [POD["spec"]["containers"][0], container("side", image="redis")],
    ),
    (
        "pod-new-container-first",
        POD,
        pod_spec({"containers": [container("new")]}),
        ("spec", "containers", slice(None), "name"),
        ["new", "c", "side"],
    ),
    (
        "pod-containers-in-patch-order",
        POD,
        pod_spec({"containers": [{"name": "side"}, {"name": "c"}]}),
        ("spec", "containers", slice(None), "name"),
        ["side", "c"],
    ),
    (
        "env-by-name",
        POD,
        pod_spec(
            {"containers": [{"name": "c", "env": [{"name": "B", "value": "9"}, {"name": "C", "value": "3"}]}]}
        ),
        ("spec", "containers", 0, "env"),
        [{"name": "A", "value": "1"}, {"name": "B", "value": "9"}, {"name": "C", "value": "3"}],
    ),
    (
        "env-delete",
        POD,
        pod_spec({"containers": [{"name": "c", "env": [{"name": "A", "$patch": "delete"}]}]}),
        ("spec", "containers", 0, "env"),
        [{"name": "B", "value": "2"}],
    ),
    (
        "env-null-drops-field",
        POD,
        pod_spec({"containers": [{"name": "c", "env": [{"name": "A", "value": None}]}]}),
        ("spec", "containers", 0, "env"),
        [{"name": "A"}, {"name": "B", "value": "2"}],
    ),
    (
        "container-ports-by-container-port",
        POD,
        pod_spec(
            {
                "containers": [
                    {"name": "c", "ports": [{"containerPort": 443, "name": "tls"}, {"containerPort": 9}]}
                ]
            }
        ),
        ("spec", "containers", 0, "ports"),
        [{"containerPort": 80, "name": "http"}, {"containerPort": 443, "name": "tls"}, {"containerPort": 9}],
    ),
    (
        "service-ports-by-port",
        SERVICE,
        {"spec": {"ports": [{"port": 443, "name": "tls"}, {"port": 8080, "name": "alt"}]}},
        ("spec", "ports"),
        [{"name": "http", "port": 80}, {"name": "tls", "port": 443}, {"name": "alt", "port": 8080}],
    ),
    (
        "volumes-by-name",
        POD,
        pod_spec({"volumes": [{"name": "x", "secret": {"secretName": "s"}}]}),
        ("spec", "volumes", slice(None), "name"),
        ["x", "v", "w"],
    ),
    (
        "volumes-retain-keys",
        POD,
        pod_spec(
            {"volumes": [{"name": "v", "configMap": {"name": "o"}, "$retainKeys": ["configMap", "name"]}]}
        ),
        ("spec", "volumes", 0),
        {"name": "v", "configMap": {"name": "o"}},
    ),
    (
        "tolerations-replaced",
        POD,
        pod_spec({"tolerations": [{"key": "b", "operator": "Exists"}]}),
        ("spec", "tolerations"),
        [{"key": "b", "operator": "Exists"}],
    ),
    (
        "pod-image-pull-secrets-by-name",
        POD,
        pod_spec({"imagePullSecrets": [{"name": "s2"}]}),
        ("spec", "imagePullSecrets"),
        [{"name": "s2"}, {"name": "s1"}],
    ),
    (
        "serviceaccount-secrets-by-name-image-pull-secrets-replaced",
        SERVICE_ACCOUNT,
        {"secrets": [{"name": "t2"}], "imagePullSecrets": [{"name": "p2"}]},
        (),
        {
            **SERVICE_ACCOUNT,
            "secrets": [{"name": "t2"}, {"name": "t1"}],
            "imagePullSecrets": [{"name": "p2"}],
        },
    ),
    (
        "secret-data",
        SECRET,
        {"data": {"a": None, "c": "Mw=="}},
        ("data",),
        {"b": "Mg==", "c": "Mw=="},
    ),
    (
        "webhooks-by-name",
        MWC,
        {"webhooks": [{"name": "b.example.com", "timeoutSeconds": 5}]},
        ("webhooks",),
        [{"name": "a.example.com", "timeoutSeconds": 10}, {"name": "b.example.com", "timeoutSeconds": 5}],
    ),
    (
        "pod-ips-by-ip",
        POD,
        {"status": {"podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]}},
        ("status", "podIPs"),
        [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}],
    ),
    (
        "pod-conditions-by-type",
        POD,
        {"status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "X", "status": "True"}]}},
        ("status", "conditions"),
        [{"type": "Ready", "status": "True"}, {"type": "X", "status": "True"}],
    ),
    (
        "deployment-template-containers",
        DEPLOYMENT,
        {"spec": {"template": {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}}}},
        ("spec", "template", "spec", "containers", slice(None), "name"),
        ["c"],
    ),
    (
        "deployment-list-replace",
        DEPLOYMENT,
        {"spec": {"template": {"spec": {"containers": [{"$patch": "replace"}, container("z")]}}}},
        ("spec", "template", "spec", "containers"),
        [container("z")],
    ),
    (
        "deployment-map-replace",
        DEPLOYMENT,
        {"spec": {"template": {"metadata": {"labels": {"$patch": "replace", "app": "y"}}}}},
        ("spec", "template", "metadata", "labels"),
        {"app": "y"},
    ),
    (
        "deployment-map-delete",
        DEPLOYMENT,
        {"spec": {"template": {"metadata": {"$patch": "delete"}}}},
        ("spec", "template", "metadata"),
        {},
    ),
    (
        "deployment-strategy-retain-keys",
        DEPLOYMENT,
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
        ("spec", "strategy"),
        {"type": "Recreate"},
    ),
    (
        "set-element-order",
        DEPLOYMENT,
        {
            "spec": {
                "template": {
                    "spec": {
                        "$setElementOrder/containers": [{"name": "side"}, {"name": "new"}, {"name": "c"}],
                        "containers": [container("new")],
                    }
                }
            }
        },
        ("spec", "template", "spec", "containers", slice(None), "name"),
        ["side", "new", "c"],
    ),
    (
        "set-element-order-only",
        DEPLOYMENT,
        {"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "side"}, {"name": "c"}]}}}},
        ("spec", "template", "spec", "containers", slice(None), "name"),
        ["side", "c"],
    ),
    (
        "pdb-selector-replaced",
        PDB,
        {"spec": {"selector": {"matchLabels": {"b": "2"}}}},
        ("spec", "selector"),
        {"matchLabels": {"b": "2"}},
    ),
    (
        "node-taints-replaced",
        NODE,
        {"spec": {"taints": [{"key": "b", "effect": "NoExecute"}]}},
        ("spec", "taints"),
        [{"key": "b", "effect": "NoExecute"}],
    ),
    (
        "finalizers-new-first",
        CONFIGMAP,
        {"metadata": {"finalizers": ["e/z"]}},
        ("metadata", "finalizers"),
        ["e/z", "e/a", "e/b", "e/c"],
    ),
    (
        "finalizers-patch-order",
        CONFIGMAP,
        {"metadata": {"finalizers": ["e/c", "e/z", "e/a"]}},
        ("metadata", "finalizers"),
        ["e/b", "e/c", "e/z", "e/a"],
    ),
    (
        "finalizers-delete-from-primitive-list",
        CONFIGMAP,
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["e/b", "e/q"]}},
        ("metadata", "finalizers"),
        ["e/a", "e/c"],
    ),
    (
        "finalizers-set-element-order",
        CONFIGMAP,
        {"metadata": {"$setElementOrder/finalizers": ["e/c", "e/b", "e/z", "e/a"], "finalizers": ["e/z"]}},
        ("metadata", "finalizers"),
        ["e/c", "e/b", "e/z", "e/a"],
    ),
    (
        "unmodelled-kind-conditions-by-type",
        APISERVICE,
        {"status": {"conditions": [{"type": "Other", "status": "False"}]}},
        ("status", "conditions"),
        [{"type": "Other", "status": "False"}, {"type": "Available", "status": "True"}],
    ),
    (
        "unmodelled-kind-lists-replaced",
        ENDPOINT_SLICE,
        {"endpoints": [{"addresses": ["10.0.0.2"]}]},
        ("endpoints",),
        [{"addresses": ["10.0.0.2"]}],
    ),
    (
        "new-value-loses-nulls-and-directives",
        DEPLOYMENT,
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [container("n", args=None, env=[{"name": "E", "$patch": "delete"}])]
                    }
                }
            }
        },
        ("spec", "template", "spec", "containers", 0),
        container("n", env=[{"name": "E"}]),
    ),
]


def _at(o: Any, path: tuple[Any, ...]) -> Any:
    for i, p in enumerate(path):
        if isinstance(p, slice):
            return [_at(x, path[i + 1 :]) for x in o[p]]
        o = o[p]
    return o


@pytest.mark.parametrize(
    ("target", "patch", "path", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_strategic_merge_patch(
    target: dict[str, Any], patch: dict[str, Any], path: tuple[Any, ...], expected: Any
) -> None:
    before, patch_before = json.dumps(target), json.dumps(patch)
    assert _at(strategic_merge_patch(target, patch), path) == expected
    assert json.dumps(target) == before and json.dumps(patch) == patch_before  # neither is modified


ERRORS: list[tuple[str, dict[str, Any], dict[str, Any], int, str]] = [
    (
        "merge-directive-in-list",
        POD,
        pod_spec({"containers": [{"$patch": "merge"}]}),
        500,
        "merging lists cannot yet be specified in the patch",
    ),
    (
        "unknown-directive",
        POD,
        pod_spec({"containers": [{"name": "c", "$patch": "frob"}]}),
        500,
        "unknown patch type: frob in map: map[$patch:frob name:c]",
    ),
    (
        "no-merge-key",
        POD,
        pod_spec({"containers": [{"image": "redis"}]}),
        500,
        "map: map[image:redis] does not contain declared merge key: name",
    ),
    (
        "retain-keys-mismatch",
        DEPLOYMENT,
        {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 2}}}},
        400,
        "invalid patch format of retainKeys",
    ),
    (
        "set-element-order-mismatch",
        POD,
        pod_spec(
            {
                "$setElementOrder/containers": [{"name": "side"}, {"name": "c"}],
                "containers": [{"name": "c"}, {"name": "side"}],
            }
        ),
        500,
        "The order in patch list:\n[map[name:c] map[name:side]]\n doesn't match $setElementOrder list:\n"
        "[map[name:side] map[name:c]]\n",
    ),
    (
        "bad-prefix",
        POD,
        pod_spec({"$setElementOrderX": []}),
        400,
        "invalid patch format of setElementOrder list",
    ),
    (
        "mixed-types",
        CONFIGMAP,
        {"metadata": {"finalizers": [1]}},
        500,
        "list element types are not identical: [[e/a e/b e/c] [1]]",
    ),
]


@pytest.mark.parametrize(
    ("target", "patch", "code", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS]
)
def test_strategic_merge_patch_errors(
    target: dict[str, Any], patch: dict[str, Any], code: int, message: str
) -> None:
    with pytest.raises(StatusError) as err:
        strategic_merge_patch(target, patch)
    assert (err.value.code, err.value.message) == (code, message)
    assert err.value.reason == ("BadRequest" if code == 400 else "")


def test_not_an_object() -> None:
    with pytest.raises(StatusError) as err:
        strategic_merge_patch(POD, ["x"])
    assert err.value.code == 400
    assert err.value.message == "json: cannot unmarshal array into Go value of type map[string]interface {}"


def test_fast_enough() -> None:
    """Cached per-type lookups: a typical image bump of a Deployment costs well under a millisecond."""
    body = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "redis"}]}}}}
    strategic_merge_patch(DEPLOYMENT, body)
    n = 2000
    start = time.perf_counter()
    for _ in range(n):
        strategic_merge_patch(DEPLOYMENT, body)
    assert (time.perf_counter() - start) / n < 0.001


async def test_http_webhooks_by_name_and_custom_resources_refused(http: httpx2.AsyncClient) -> None:
    mwc = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "smp"},
        "webhooks": [
            {
                "name": f"{n}.example.com",
                "clientConfig": {"url": "https://example.com/hook"},
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "objectSelector": {"matchLabels": {"never": "x"}},
            }
            for n in ("a", "b")
        ],
    }
    path = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
    assert (await http.post(path, json=mwc)).status_code == 201
    r = await http.patch(
        f"{path}/smp", json={"webhooks": [{"name": "b.example.com", "timeoutSeconds": 5}]}, headers=SMP
    )
    assert r.status_code == 200, r.text
    assert [(w["name"], w.get("timeoutSeconds")) for w in r.json()["webhooks"]][1] == ("b.example.com", 5)
    assert len(r.json()["webhooks"]) == 2
    r = await http.patch(f"{path}/smp", json={"webhooks": [{"$patch": "merge"}]}, headers=SMP)
    assert (
        r.status_code == 500 and r.json()["message"] == "merging lists cannot yet be specified in the patch"
    )
    assert "reason" not in r.json()
