"""Emulator bugs found outside the corpus (issue 25): pod volumes and mounts, admission webhook
configurations' defaults, and Go's `null` for the unset time fields of conditions and states."""

from __future__ import annotations

import json
from typing import Any

from tests.conformance.harness import Scenario, Step
from tests.conformance.scenarios.steps import at, delete, patch, post, setup

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
                        # a resource nothing serves: the configuration must not touch other scenarios
                        "apiGroups": ["example.com"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["nothings"],
                    }
                ],
            }
        ],
    }


def webhooks() -> list[Scenario]:
    out = []
    for kind, path, mutating in (("mutating", MUTATING, True), ("validating", VALIDATING, False)):
        body = _webhook(mutating)
        steps = [post(path, body, view=at("webhooks")), setup(delete(f"{path}/{body['metadata']['name']}"))]
        out.append(Scenario(f"fidelity/webhooks/{kind}-defaults", "fidelity", steps))
    return out


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


CM = "/api/v1/namespaces/{ns}/configmaps"


def _body(text: str) -> Step:
    return Step("POST", CM + "?fieldValidation=Strict", text, messages=True)


def messages() -> list[Scenario]:
    """Errors whose words the emulator writes itself, compared word for word."""
    cm = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"%s}%s}'
    seqs: dict[str, list[Step]] = {
        # the strict decoder's problems in document order, duplicates and unknown fields mixed
        "strict-order": [_body(cm % (',"name":"d"', ',"junk":1,"data":{"a":"1","a":"2"}'))],
        "strict-nested-order": [
            Step(
                "POST",
                "/apis/apps/v1/namespaces/{ns}/deployments?fieldValidation=Strict",
                '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"junk":1,'
                '"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"},"junk":2},'
                '"spec":{"containers":[{"name":"c","image":"nginx","junk":3}]}}},"junk":4}',
                messages=True,
            )
        ],
        **{
            f"base64-{i}": [_body(cm % ("", f',"binaryData":{{"a":"{value}"}}'))]
            for i, value in enumerate(["abc", "a", "ab=", "a===", "ab!c", "ab==x", "eHh4eHh"])
        },
        "finalizers": [
            _body(
                cm % (',"finalizers":["nodomain","a/b/c","example.com/ok","orphan","foregroundDeletion"]', "")
            )
        ],
        "annotations": [_body(cm % (',"annotations":{"a":"' + "x" * (256 * 1024) + '","Bad Key":"v"}', ""))],
        "finalizer-added-while-deleting": [
            setup(post(CM, {**json.loads(cm % (',"finalizers":["example.com/hold"]', ""))})),
            setup(delete(CM + "/c")),
            Step(
                "PATCH",
                CM + "/c",
                {"metadata": {"finalizers": ["example.com/hold", "example.com/more", "example.com/a"]}},
                patch="merge",
                messages=True,
            ),
            setup(patch(CM + "/c", {"metadata": {"finalizers": None}})),
        ],
        "not-acceptable": [Step("GET", CM, headers={"Accept": "text/plain"}, messages=True)],
        "ingressclass-name-and-spec": [
            Step(
                "POST",
                "/apis/networking.k8s.io/v1/ingressclasses",
                {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {}, "spec": {}},
                messages=True,
            )
        ],
        "rbac-path-segment": [
            Step(
                "POST",
                "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
                '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"a/b%c"}}',
                messages=True,
            )
        ],
    }
    return [Scenario(f"fidelity/messages/{name}", "fidelity", steps) for name, steps in seqs.items()]


def registries() -> list[Scenario]:
    """kindrules' facts for kinds the crud family does not cover: PUT of a missing object, the DELETE
    answer, name rules."""
    crb = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "crb-{ns}"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
    }
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "{ns}"},
        "reason": "R",
        "type": "Normal",
    }
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "q"},
        "spec": {"hard": {"pods": "1"}},
    }
    template = {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": "t"},
        "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}},
    }
    seqs: dict[str, list[Step]] = {
        "put-creates-clusterrolebinding": [
            Step("PUT", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/crb-{ns}", crb),
            setup(delete("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/crb-{ns}")),
        ],
        "put-creates-event": [Step("PUT", "/api/v1/namespaces/{ns}/events/e", event)],
        "put-missing-resourcequota": [Step("PUT", "/api/v1/namespaces/{ns}/resourcequotas/q", quota)],
        "delete-answers-resourcequota": [
            setup(post("/api/v1/namespaces/{ns}/resourcequotas", quota)),
            delete("/api/v1/namespaces/{ns}/resourcequotas/q"),
        ],
        "delete-answers-podtemplate": [
            setup(post("/api/v1/namespaces/{ns}/podtemplates", template)),
            delete("/api/v1/namespaces/{ns}/podtemplates/t"),
        ],
        "clusterrolebinding-path-segment-name": [
            post(
                "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                {**crb, "metadata": {"name": "Bad_Name-{ns}"}},
            ),
            setup(delete("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/Bad_Name-{ns}")),
        ],
        "statefulset-label-name": [
            post(
                "/apis/apps/v1/namespaces/{ns}/statefulsets",
                {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "metadata": {"name": "a.b"},
                    "spec": {
                        "selector": {"matchLabels": {"app": "x"}},
                        "serviceName": "s",
                        "template": {
                            "metadata": {"labels": {"app": "x"}},
                            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                        },
                    },
                },
                messages=True,
            )
        ],
    }
    return [Scenario(f"fidelity/registry/{name}", "fidelity", steps) for name, steps in seqs.items()]


SCENARIOS: list[Scenario] = [*volumes(), *webhooks(), *null_times(), *messages(), *registries()]
