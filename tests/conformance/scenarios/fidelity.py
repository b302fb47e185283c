"""Emulator bugs found outside the corpus (issue 25): pod volumes and mounts, admission webhook
configurations' defaults, and Go's `null` for the unset time fields of conditions and states."""

from __future__ import annotations

from typing import Any

from tests.conformance.harness import Scenario, Step
from tests.conformance.scenarios.steps import at, patch, post, setup

PODS = "/api/v1/namespaces/{ns}/pods"
DEPLOYMENTS = "/apis/apps/v1/namespaces/{ns}/deployments"
MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"


def _pod(name: str, volumes: list[Any], mounts: list[Any]) -> dict[str, Any]:
    container = {"name": "c", "image": "nginx", "volumeMounts": mounts}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [container], "volumes": volumes},
    }


def volumes() -> list[Scenario]:
    two_sources = [{"name": "v", "emptyDir": {}, "configMap": {"name": "cm"}}]
    mounts = [{"name": "nov", "mountPath": "/x"}, {"name": "v", "mountPath": "/y"}]
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {"metadata": {"labels": {"app": "x"}}, "spec": _pod("", two_sources, mounts)["spec"]},
        },
    }
    seqs: dict[str, list[Step]] = {
        "two-sources-and-missing-mount": [post(PODS, _pod("p", two_sources, mounts))],
        "duplicate-name": [
            post(
                PODS,
                _pod("p", [{"name": "v"}, {"name": "v", "emptyDir": {}}], [{"name": "v", "mountPath": "/x"}]),
            )
        ],
        "no-source-is-emptydir": [
            post(
                PODS,
                _pod("p", [{"name": "v"}], [{"name": "v", "mountPath": "/x"}]),
                view=at("spec", "volumes"),
            )
        ],
        "mount-path-twice": [
            post(
                PODS,
                _pod(
                    "p",
                    [{"name": "v", "emptyDir": {}}],
                    [{"name": "v", "mountPath": "/x"}, {"name": "v", "mountPath": "/x"}],
                ),
            )
        ],
        "deployment-template": [post(DEPLOYMENTS, deployment)],
    }
    return [Scenario(f"fidelity/volumes/{name}", "fidelity", steps) for name, steps in seqs.items()]


def _webhook(mutating: bool) -> dict[str, Any]:
    kind = "MutatingWebhookConfiguration" if mutating else "ValidatingWebhookConfiguration"
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": f"wh-{'m' if mutating else 'v'}-{{ns}}"},
        "webhooks": [
            {
                "name": "w.example.com",
                "clientConfig": {"url": "https://example.com/hook"},
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "rules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["configmaps"],
                    }
                ],
            }
        ],
    }


def webhooks() -> list[Scenario]:
    return [
        Scenario(
            "fidelity/webhooks/mutating-defaults",
            "fidelity",
            [post(MUTATING, _webhook(True), view=at("webhooks"))],
        ),
        Scenario(
            "fidelity/webhooks/validating-defaults",
            "fidelity",
            [post(VALIDATING, _webhook(False), view=at("webhooks"))],
        ),
    ]


def null_times() -> list[Scenario]:
    """A status written without a condition's times answers with them `null`: Go's zero Time."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    status = {
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [
                {
                    "name": "c",
                    "image": "nginx",
                    "imageID": "",
                    "ready": True,
                    "restartCount": 0,
                    "state": {"running": {}},
                }
            ],
        }
    }
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    claim_status = {"status": {"conditions": [{"type": "Resizing", "status": "True"}]}}
    return [
        Scenario(
            "fidelity/null-times/pod-status",
            "fidelity",
            [setup(post(PODS, pod)), patch(PODS + "/p/status", status, view=at("status"))],
        ),
        Scenario(
            "fidelity/null-times/pvc-status",
            "fidelity",
            [
                setup(post("/api/v1/namespaces/{ns}/persistentvolumeclaims", claim)),
                patch(
                    "/api/v1/namespaces/{ns}/persistentvolumeclaims/c/status", claim_status, view=at("status")
                ),
            ],
        ),
        Scenario(
            "fidelity/null-times/event",
            "fidelity",
            [
                post(
                    "/api/v1/namespaces/{ns}/events",
                    {
                        "apiVersion": "v1",
                        "kind": "Event",
                        "metadata": {"name": "e"},
                        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "{ns}"},
                        "reason": "Test",
                        "message": "m",
                        "type": "Normal",
                    },
                    view=lambda b: {
                        k: b.get(k) for k in ("firstTimestamp", "lastTimestamp", "eventTime", "count")
                    },
                )
            ],
        ),
    ]


SCENARIOS: list[Scenario] = [*volumes(), *webhooks(), *null_times()]
