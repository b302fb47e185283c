"""Protobuf request bodies (`application/vnd.kubernetes.protobuf`, what kubectl's typed generators
send): every built-in kind of the corpus created from protobuf then read back as JSON, fuller objects
(a Deployment, a Job, a CronJob, a Service with every kind of special field: Quantity, IntOrString,
Time, inlined volume sources, maps of bytes), and malformed bodies (the 400 texts compared word for
word). The bodies are encoded by envtest.server.protoencode; the real kube-apiserver judges them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyscaffold_op.envtest.server.protoencode import encode
from pyscaffold_op.envtest.server.protowire import length_delimited, tag, varint
from tests.conformance.harness import Ctx, Scenario, Step
from tests.conformance.scenarios.builtin import KINDS, Kind
from tests.conformance.scenarios.steps import delete, get, post, setup

PROTOBUF = "application/vnd.kubernetes.protobuf"
CM = "/api/v1/namespaces/{ns}/configmaps"


def _with_ns(value: Any, ns: str) -> Any:
    if isinstance(value, str):
        return value.replace("{ns}", ns)
    if isinstance(value, dict):
        return {_with_ns(k, ns): _with_ns(v, ns) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_ns(v, ns) for v in value]
    return value


def _pb(obj: dict[str, Any]) -> Callable[[Ctx], bytes]:
    return lambda ctx: encode(_with_ns(obj, ctx.ns))


def _post_pb(path: str, body: Any, **kw: Any) -> Step:
    return post(path, body if callable(body) else (lambda _ctx: body), content_type=PROTOBUF, **kw)


def _id(k: Kind) -> str:
    return f"{k.kind.lower()}@{k.api_version.replace('/', '-').replace('.', '-')}"


def create_get(k: Kind) -> Scenario:
    name = k.name("pb")
    steps = [_post_pb(k.collection(), _pb(k.body(name))), get(k.item(name))]
    if not k.namespaced:
        steps.append(setup(delete(k.item(name))))
    return Scenario(f"protobuf/{_id(k)}/create-get", "protobuf", steps)


CONTAINER = {
    "name": "c",
    "image": "nginx",
    "ports": [{"containerPort": 80, "protocol": "TCP"}],
    "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "0.25"}},
    "env": [
        {"name": "A", "value": ""},
        {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    ],
    "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 5},
    "livenessProbe": {"tcpSocket": {"port": 80}},
}
POD_SPEC = {
    "containers": [CONTAINER],
    "volumes": [
        {"name": "cfg", "configMap": {"name": "cm", "defaultMode": 420}},
        {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}},
    ],
    "terminationGracePeriodSeconds": 0,
}
FULL: list[dict[str, Any]] = [
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "full", "labels": {"app": "full"}, "annotations": {"a": "b"}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "full"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%", "maxUnavailable": 0}},
            "template": {"metadata": {"labels": {"app": "full"}}, "spec": POD_SPEC},
        },
    },
    {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "full"},
        "spec": {
            "backoffLimit": 2,
            "template": {"spec": {**POD_SPEC, "restartPolicy": "Never"}},
        },
    },
    {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "full"},
        "spec": {
            "schedule": "*/5 * * * *",
            "suspend": False,
            "jobTemplate": {"spec": {"template": {"spec": {**POD_SPEC, "restartPolicy": "OnFailure"}}}},
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "full"},
        "spec": {
            "selector": {"app": "full"},
            "ports": [
                {"name": "http", "port": 80, "targetPort": "http"},
                {"name": "b", "port": 81, "targetPort": 8081},
            ],
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "full"},
        "type": "Opaque",
        "data": {"k": "AAEC/w==", "empty": ""},
        "immutable": True,
    },
    {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "full", "finalizers": ["example.com/f"], "deletionGracePeriodSeconds": 0},
        "data": {"k": "v", "unicode": "é✓"},
        "binaryData": {"b": "AQID"},
    },
    {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "full"},
        "spec": {"hard": {"pods": "10", "requests.cpu": "1500m", "requests.memory": "1.5Gi"}},
    },
]


def _full(obj: dict[str, Any]) -> Scenario:
    k = next(k for k in KINDS if k.kind == obj["kind"] and k.api_version == obj["apiVersion"])
    name = obj["metadata"]["name"]
    steps = [_post_pb(k.collection(), _pb(obj)), get(k.item(name))]
    if obj["metadata"].get("finalizers"):
        steps.append(setup(Step("PATCH", k.item(name), {"metadata": {"finalizers": None}}, patch="merge")))
    return Scenario(f"protobuf/{_id(k)}/full", "protobuf", steps)


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = length_delimited(1, api_version.encode()) + length_delimited(2, kind.encode())
    return b"k8s\x00" + length_delimited(1, type_meta) + length_delimited(2, raw)


def _name(name: str) -> bytes:
    return length_delimited(1, length_delimited(1, name.encode()))


_GOOD = encode({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "pb"}, "data": {"a": "b"}})
MALFORMED: dict[str, bytes] = {
    "no-magic": b"\x0a\x02hi",
    "empty": b"",
    "magic-only": b"k8s\x00",
    "truncated": _GOOD[:-9],
    "wrong-wire-type": _envelope("v1", "ConfigMap", tag(1, 0) + varint(5)),
    "wrong-wire-type-nested": _envelope("v1", "ConfigMap", length_delimited(1, tag(1, 0) + varint(5))),
    "end-group": _envelope("v1", "ConfigMap", tag(7, 4)),
    "illegal-wire-type": _envelope("v1", "ConfigMap", tag(7, 6)),
    "integer-overflow": _envelope("v1", "ConfigMap", tag(1, 2) + b"\xff" * 11),
    "other-kind": _envelope("v1", "Secret", _name("pbsecret")),
    "unregistered-kind": _envelope("v1", "Foo", b""),
    "unregistered-group": _envelope("foo/v1", "ConfigMap", b""),
}
ACCEPTED: dict[str, bytes] = {
    "unknown-field": _envelope("v1", "ConfigMap", _name("pbunknown") + length_delimited(99, b"zz")),
    "no-type-meta": _envelope("", "", _name("pbnokind")),
    "invalid-utf8": _envelope(
        "v1",
        "ConfigMap",
        _name("pbutf8") + length_delimited(2, length_delimited(1, b"k") + length_delimited(2, b"\xff\xfe")),
    ),
}


def _malformed(case: str, body: bytes) -> Scenario:
    return Scenario(
        f"protobuf/malformed/{case}", "protobuf", [_post_pb(CM + "?dryRun=All", body, messages=True)]
    )


def _accepted(case: str, body: bytes) -> Scenario:
    return Scenario(f"protobuf/accepted/{case}", "protobuf", [_post_pb(CM, body)])


BAD_QUANTITY = Scenario(
    "protobuf/malformed/quantity",
    "protobuf",
    [
        _post_pb(
            "/api/v1/namespaces/{ns}/resourcequotas",
            encode(
                {
                    "apiVersion": "v1",
                    "kind": "ResourceQuota",
                    "metadata": {"name": "q"},
                    "spec": {"hard": {"pods": "x1"}},
                }
            ),
            messages=True,
        )
    ],
)


def _delete_options(**options: Any) -> bytes:
    return encode({"apiVersion": "v1", "kind": "DeleteOptions", **options})


_CM_BODY = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gone"}}
DELETES = [
    Scenario(
        "protobuf/delete-options/dry-run",
        "protobuf",
        [
            setup(post(CM, _CM_BODY)),
            Step("DELETE", CM + "/gone", _delete_options(dryRun=["All"]), content_type=PROTOBUF),
            get(CM + "/gone"),
        ],
    ),
    Scenario(
        "protobuf/delete-options/preconditions",
        "protobuf",
        [
            setup(post(CM, _CM_BODY)),
            Step(
                "DELETE",
                CM + "/gone",
                _delete_options(preconditions={"uid": "not-the-uid"}),
                content_type=PROTOBUF,
                status_only=True,
            ),
            Step("DELETE", CM + "/gone", _delete_options(gracePeriodSeconds=0), content_type=PROTOBUF),
            get(CM + "/gone"),
        ],
    ),
]

_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c", "image": "x"}]},
}
PODS = "/api/v1/namespaces/{ns}/pods"
SUBRESOURCES = [
    Scenario(
        "protobuf/subresource/eviction",
        "protobuf",
        [
            setup(post(PODS, _POD)),
            _post_pb(
                PODS + "/p/eviction",
                _pb(
                    {
                        "apiVersion": "policy/v1",
                        "kind": "Eviction",
                        "metadata": {"name": "p", "namespace": "{ns}"},
                    }
                ),
                status_only=True,
            ),
        ],
    ),
    Scenario(
        "protobuf/subresource/binding",
        "protobuf",
        [
            setup(post(PODS, _POD)),
            _post_pb(
                PODS + "/p/binding",
                _pb(
                    {
                        "apiVersion": "v1",
                        "kind": "Binding",
                        "metadata": {"name": "p"},
                        "target": {"kind": "Node", "name": "n1"},
                    }
                ),
            ),
            get(PODS + "/p", view=lambda body: body.get("spec", {}).get("nodeName")),
        ],
    ),
    Scenario(
        "protobuf/review/selfsubjectaccessreview",
        "protobuf",
        [
            _post_pb(
                "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                _pb(
                    {
                        "apiVersion": "authorization.k8s.io/v1",
                        "kind": "SelfSubjectAccessReview",
                        "spec": {
                            "resourceAttributes": {"namespace": "{ns}", "verb": "get", "resource": "pods"}
                        },
                    }
                ),
                view=lambda body: {
                    "spec": body.get("spec"),
                    "allowed": body.get("status", {}).get("allowed"),
                },
            )
        ],
    ),
]

SCENARIOS: list[Scenario] = [
    *(create_get(k) for k in KINDS),
    *(_full(obj) for obj in FULL),
    *(_malformed(case, body) for case, body in MALFORMED.items()),
    *(_accepted(case, body) for case, body in ACCEPTED.items()),
    BAD_QUANTITY,
    *DELETES,
    *SUBRESOURCES,
]
