"""Quantities as the server stores them: every resource.Quantity of a built-in written back canonical,
ResourceList values below a milli rounded up to one, undecodable quantities refused; custom resources'
int-or-string quantities kept as sent."""

from __future__ import annotations

import json
from typing import Any

from pyscaffold_op.envtest.server.protoencode import encode
from tests.conformance.harness import Scenario, Step
from tests.conformance.scenarios.steps import apply, at, patch, post, put, setup

PODS = "/api/v1/namespaces/{ns}/pods"
QUOTAS = "/api/v1/namespaces/{ns}/resourcequotas"
LIMITS = "/api/v1/namespaces/{ns}/limitranges"
CLAIMS = "/api/v1/namespaces/{ns}/persistentvolumeclaims"
DEPLOYMENTS = "/apis/apps/v1/namespaces/{ns}/deployments"

# (cpu, memory) spellings: decimal, binary, exponent, sub-milli, already canonical, padded, signed
SPELLINGS = [
    ("0.25", "1.5Gi"),
    ("1000m", "1024Ki"),
    ("2e3", "1e9"),
    ("5e0", "129e6"),
    ("1n", "1.5M"),
    ("1500u", "0.5Gi"),
    ("100", "1000000"),
    ("1Ki", "1Mi"),
    ("0.5Ki", "1.0Gi"),
    ("+1", "2Ti"),
    ("01", "1536Mi"),
    ("2.5e-3", "0.001"),
    ("1.0", "1E"),
    ("12e-1", "100Ki"),
]


def _pod(name: str, requests: dict[str, Any], size_limit: Any = None) -> dict[str, Any]:
    volumes = [{"name": "v", "emptyDir": {"sizeLimit": size_limit}}] if size_limit is not None else []
    container = {"name": "c", "image": "nginx", "resources": {"requests": requests}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [container], "volumes": volumes},
    }


def _quota(name: str, hard: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name}, "spec": {"hard": hard}}


def _claim(name: str, storage: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}},
    }


def _limit_range(name: str, cpu: str, memory: str) -> dict[str, Any]:
    limits = [
        {"type": "Container", "max": {"cpu": cpu, "memory": memory}, "min": {"cpu": "1n"}},
        {"type": "PersistentVolumeClaim", "max": {"storage": memory}},
    ]
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name}, "spec": {"limits": limits}}


def _resources(body: Any) -> Any:
    containers = (body.get("spec") or {}).get("containers") or [{}]
    return {"resources": containers[0].get("resources"), "volumes": (body.get("spec") or {}).get("volumes")}


def spellings() -> list[Scenario]:
    pods = [
        post(PODS, _pod(f"p{i}", {"cpu": cpu, "memory": mem}, size_limit=mem), view=_resources)
        for i, (cpu, mem) in enumerate(SPELLINGS)
    ]
    quotas = [
        post(
            QUOTAS,
            _quota(f"q{i}", {"cpu": cpu, "limits.memory": mem, "requests.storage": mem}),
            view=at("spec"),
        )
        for i, (cpu, mem) in enumerate(SPELLINGS)
    ]
    quotas.append(
        post(QUOTAS, _quota("counts", {"pods": "1e1", "services": "10", "configmaps": "1k"}), view=at("spec"))
    )
    limit_ranges = [
        post(LIMITS, _limit_range(f"l{i}", cpu, mem), view=at("spec"))
        for i, (cpu, mem) in enumerate(SPELLINGS)
    ]
    claims = [
        post(CLAIMS, _claim(f"c{i}", mem), view=at("spec", "resources"))
        for i, (_, mem) in enumerate(SPELLINGS)
    ]
    return [
        Scenario("quantities/pod-requests", "quantities", pods),
        Scenario("quantities/resourcequota-hard", "quantities", quotas),
        Scenario("quantities/limitrange-limits", "quantities", limit_ranges),
        Scenario("quantities/pvc-requests", "quantities", claims),
    ]


def writes() -> list[Scenario]:
    """Update, every patch type and apply store canonical quantities too."""
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "nginx",
                            "resources": {
                                "limits": {"cpu": "0.5", "memory": "1.5Gi"},
                                "requests": {"cpu": "1n"},
                            },
                        }
                    ]
                },
            },
        },
    }
    container = at("spec", "template", "spec", "containers")
    smp = {
        "spec": {
            "template": {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "2e3"}}}]}}
        }
    }
    seqs: dict[str, list[Step]] = {
        "quota-update-and-patches": [
            post(QUOTAS, _quota("q", {"cpu": "0.25"}), view=at("spec")),
            put(QUOTAS + "/q", _quota("q", {"cpu": "1500u", "memory": "0.5Gi"}), view=at("spec")),
            patch(QUOTAS + "/q", {"spec": {"hard": {"cpu": "1000m"}}}, view=at("spec")),
            patch(
                QUOTAS + "/q",
                [{"op": "add", "path": "/spec/hard/pods", "value": "1e1"}],
                "json",
                view=at("spec"),
            ),
            patch(QUOTAS + "/q", {"spec": {"hard": {"memory": "2048Ki"}}}, "strategic", view=at("spec")),
        ],
        "quota-apply": [
            apply(QUOTAS + "/q", _quota("q", {"cpu": "0.25", "memory": "1.5Gi"}), view=at("spec")),
            apply(QUOTAS + "/q", _quota("q", {"cpu": "0.25", "memory": "1n"}), view=at("spec")),
            apply(QUOTAS + "/q", _quota("q", {"cpu": "250m"}), manager="m2", view=at("spec")),
        ],
        "deployment-template": [
            post(DEPLOYMENTS, deployment, view=container),
            patch(DEPLOYMENTS + "/d", smp, "strategic", view=container),
        ],
        "json-numbers": [
            post(
                QUOTAS,
                json.dumps(_quota("q", {})).replace(
                    '"hard": {}', '"hard": {"cpu": 0.5, "memory": 1e-10, "pods": 3, "services": null}'
                ),
                view=at("spec"),
            )
        ],
    }
    return [Scenario(f"quantities/{name}", "quantities", steps) for name, steps in seqs.items()]


def invalid() -> list[Scenario]:
    """Quantities Go cannot parse: the body cannot be decoded."""
    seqs: dict[str, list[Step]] = {
        **{
            f"create-{i}": [post(QUOTAS, _quota("q", {"cpu": bad}), messages=True)]
            for i, bad in enumerate(["abc", "1.5.5", "", "1Kb", "- 1", "1e", True, {"a": 1}])
        },
        "pod-size-limit": [post(PODS, _pod("p", {}, size_limit="lots"), messages=True)],
        "merge-patch": [
            setup(post(QUOTAS, _quota("q", {"cpu": "1"}))),
            # not word for word: the patched object in the message orders metadata as stored (a gap of
            # every 422 on `patch`, not of quantities)
            patch(QUOTAS + "/q", {"spec": {"hard": {"cpu": "x1"}}}),
        ],
        "apply": [apply(QUOTAS + "/q", _quota("q", {"cpu": "x1"}), messages=True)],
    }
    return [Scenario(f"quantities/invalid/{name}", "quantities", steps) for name, steps in seqs.items()]


def custom() -> list[Scenario]:
    """A custom resource's int-or-string field holds quantities as sent: no Go Quantity decodes it."""
    widgets = "/apis/conf.example.com/v1/namespaces/{ns}/widgets"
    steps = [
        post(
            widgets,
            {
                "apiVersion": "conf.example.com/v1",
                "kind": "Widget",
                "metadata": {"name": f"w{i}"},
                "spec": {"port": mem, "free": {"cpu": cpu}},
            },
            view=at("spec"),
        )
        for i, (cpu, mem) in enumerate(SPELLINGS)
    ]
    return [Scenario("quantities/custom-kept-as-sent", "quantities", steps)]


def protobuf() -> list[Scenario]:
    """Protobuf bodies carry quantities as strings too; the ResourceList rounding is defaulting, the
    same whichever encoding the body came in."""
    steps = [
        post(
            QUOTAS,
            lambda _ctx, i=i, cpu=cpu, mem=mem: encode(_quota(f"q{i}", {"cpu": cpu, "requests.memory": mem})),
            content_type="application/vnd.kubernetes.protobuf",
            view=at("spec"),
        )
        for i, (cpu, mem) in enumerate(SPELLINGS)
    ]
    return [Scenario("quantities/protobuf-resourcequota", "quantities", steps)]


SCENARIOS: list[Scenario] = [*spellings(), *writes(), *invalid(), *custom(), *protobuf()]
