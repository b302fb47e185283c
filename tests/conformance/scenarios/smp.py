"""Strategic merge patch against the real server: each list's strategy and merge key per type (issue 29,
item 6), the directives (`$patch`, `$retainKeys`, `$deleteFromPrimitiveList/`, `$setElementOrder/`),
element order, and the errors of malformed patches."""

from __future__ import annotations

from typing import Any

from tests.conformance.harness import Scenario, Step
from tests.conformance.scenarios.steps import at, patch, post, setup

CM = "/api/v1/namespaces/{ns}/configmaps"
DEP = "/apis/apps/v1/namespaces/{ns}/deployments"
PODS = "/api/v1/namespaces/{ns}/pods"
SVC = "/api/v1/namespaces/{ns}/services"
SECRETS = "/api/v1/namespaces/{ns}/secrets"
SA = "/api/v1/namespaces/{ns}/serviceaccounts"
PDB = "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets"
MWC = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"


def _container(name: str, image: str = "nginx", **kw: Any) -> dict[str, Any]:
    return {"name": name, "image": image, **kw}


MAIN = _container(
    "c",
    env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
    ports=[{"containerPort": 80, "name": "http"}, {"containerPort": 443, "name": "https"}],
    volumeMounts=[{"name": "v", "mountPath": "/v"}],
)


def _dep(**pod_spec: Any) -> dict[str, Any]:
    spec = {"containers": [MAIN, _container("side", "busybox")], **pod_spec}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {"metadata": {"labels": {"app": "x"}}, "spec": spec},
        },
    }


DEP_BASE = _dep(
    volumes=[{"name": "v", "emptyDir": {}}, {"name": "w", "configMap": {"name": "cm"}}],
    tolerations=[{"key": "a", "operator": "Exists"}],
    imagePullSecrets=[{"name": "s1"}],
)


def _pod_spec(body: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"template": {"spec": body}}}


def _containers(*items: Any, **extra: Any) -> dict[str, Any]:
    return _pod_spec({"containers": list(items), **extra})


def _c(**kw: Any) -> dict[str, Any]:
    return _containers({"name": "c", **kw})


STAMPS = {"lastTransitionTime": "2026-01-01T00:00:00Z", "lastUpdateTime": "2026-01-01T00:00:00Z"}


def _dep_scenarios() -> dict[str, list[Step]]:
    d = DEP + "/d"
    base = setup(post(DEP, DEP_BASE))
    spec_view = at("spec", "template", "spec")

    def smp(body: Any, **kw: Any) -> list[Step]:
        return [base, patch(d, body, "strategic", view=kw.pop("view", spec_view), **kw)]

    return {
        "containers-merge-by-name": smp(_containers({"name": "side", "image": "redis"})),
        "containers-add-order": smp(_containers({"name": "new", "image": "redis"})),
        "containers-reorder-by-patch": smp(_containers({"name": "side"}, {"name": "c"})),
        "containers-delete": smp(_containers({"name": "side", "$patch": "delete"})),
        "containers-replace": smp(_containers({"$patch": "replace"}, {"name": "z", "image": "redis"})),
        "containers-merge-directive": smp(_containers({"$patch": "merge"})),
        "containers-unknown-directive": smp(_containers({"name": "c", "$patch": "frob"})),
        "containers-no-merge-key": smp(_containers({"image": "redis"})),
        "containers-delete-no-merge-key": smp(_containers({"$patch": "delete"})),
        "env-by-name": smp(_c(env=[{"name": "B", "value": "9"}, {"name": "C", "value": "3"}])),
        "env-delete": smp(_c(env=[{"name": "A", "$patch": "delete"}])),
        "env-null-value": smp(_c(env=[{"name": "A", "value": None}])),
        "ports-by-container-port": smp(
            _c(ports=[{"containerPort": 443, "name": "tls"}, {"containerPort": 9090}])
        ),
        "volume-mounts-by-mount-path": smp(
            _c(
                volumeMounts=[
                    {"name": "w", "mountPath": "/w"},
                    {"name": "v", "mountPath": "/v", "readOnly": True},
                ]
            )
        ),
        "volumes-merge": smp(_pod_spec({"volumes": [{"name": "x", "secret": {"secretName": "s"}}]})),
        "volumes-retain-keys": smp(
            _pod_spec(
                {"volumes": [{"name": "v", "configMap": {"name": "o"}, "$retainKeys": ["configMap", "name"]}]}
            )
        ),
        "volumes-retain-keys-mismatch": smp(
            _pod_spec({"volumes": [{"name": "v", "configMap": {"name": "o"}, "$retainKeys": ["name"]}]})
        ),
        "volumes-retain-keys-not-list": smp(_pod_spec({"volumes": [{"name": "v", "$retainKeys": "name"}]})),
        "tolerations-replace": smp(_pod_spec({"tolerations": [{"key": "b", "operator": "Exists"}]})),
        "image-pull-secrets-by-name": smp(_pod_spec({"imagePullSecrets": [{"name": "s2"}]})),
        "set-element-order": smp(
            _pod_spec(
                {
                    "$setElementOrder/containers": [{"name": "side"}, {"name": "new"}, {"name": "c"}],
                    "containers": [{"name": "new", "image": "redis"}],
                }
            )
        ),
        "set-element-order-only": smp(
            _pod_spec({"$setElementOrder/containers": [{"name": "side"}, {"name": "c"}]})
        ),
        "set-element-order-mismatch": smp(
            _pod_spec(
                {
                    "$setElementOrder/containers": [{"name": "side"}, {"name": "c"}],
                    "containers": [{"name": "c", "image": "redis"}, {"name": "side", "image": "redis"}],
                }
            )
        ),
        "set-element-order-env": smp(
            _c(
                **{
                    "$setElementOrder/env": [{"name": "B"}, {"name": "A"}],
                    "env": [{"name": "A", "value": "x"}],
                }
            )
        ),
        "set-element-order-bad-prefix": smp(_pod_spec({"$setElementOrderX": []})),
        "delete-from-primitive-list-bad-prefix": smp(_pod_spec({"$deleteFromPrimitiveListX": []})),
        "map-replace": smp(
            {"spec": {"template": {"metadata": {"labels": {"$patch": "replace", "app": "x", "n": "1"}}}}},
            view=at("spec", "template", "metadata"),
        ),
        "map-delete": smp(
            {"spec": {"template": {"spec": {"securityContext": {"$patch": "delete"}}}}},
        ),
        "map-unknown-directive": smp({"spec": {"template": {"$patch": "frob"}}}),
        "strategy-retain-keys": smp(
            {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}, view=at("spec", "strategy")
        ),
        "strategy-retain-keys-mismatch": smp(
            {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 2}}}},
            view=at("spec", "strategy"),
        ),
        "new-container-with-directives": smp(
            _containers(
                {"name": "n", "image": "redis", "env": [{"name": "E", "$patch": "delete"}], "args": None}
            )
        ),
        "mixed-element-types": smp(_c(ports=[{"containerPort": 1}, 2])),
        "status-conditions-by-type": [
            base,
            setup(
                patch(
                    d + "/status",
                    {"status": {"conditions": [{"type": "Available", "status": "True", **STAMPS}]}},
                    "strategic",
                )
            ),
            patch(
                d + "/status",
                {"status": {"conditions": [{"type": "Progressing", "status": "True", **STAMPS}]}},
                "strategic",
                view=at("status", "conditions"),
            ),
        ],
    }


def _meta_scenarios() -> dict[str, list[Step]]:
    c = CM + "/c"
    base = setup(
        post(
            CM,
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "c", "finalizers": ["e.com/a", "e.com/b", "e.com/c"]},
                "data": {"a": "1"},
            },
        )
    )
    meta = at("metadata", "finalizers")
    release = patch(c, {"metadata": {"finalizers": None}}, "strategic", compare=False)

    def smp(body: Any, view: Any = meta) -> list[Step]:
        return [base, patch(c, body, "strategic", view=view), release]

    owner = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "o",
        "uid": "0b5c3e0e-0000-4000-8000-000000000001",
    }
    return {
        "finalizers-add": smp({"metadata": {"finalizers": ["e.com/z"]}}),
        "finalizers-reorder": smp({"metadata": {"finalizers": ["e.com/c", "e.com/z", "e.com/a"]}}),
        "finalizers-delete-from-primitive-list": smp(
            {"metadata": {"$deleteFromPrimitiveList/finalizers": ["e.com/b", "e.com/q"]}}
        ),
        "finalizers-delete-and-add": smp(
            {"metadata": {"$deleteFromPrimitiveList/finalizers": ["e.com/a"], "finalizers": ["e.com/z"]}}
        ),
        "finalizers-set-element-order": smp(
            {
                "metadata": {
                    "$setElementOrder/finalizers": ["e.com/c", "e.com/b", "e.com/z", "e.com/a"],
                    "finalizers": ["e.com/z"],
                }
            }
        ),
        "finalizers-replace": smp({"metadata": {"finalizers": [{"$patch": "replace"}]}}),
        "owner-references-by-uid": [
            base,
            patch(c, {"metadata": {"ownerReferences": [owner]}}, "strategic", compare=False),
            patch(
                c,
                {"metadata": {"ownerReferences": [{"uid": owner["uid"], "controller": True}]}},
                "strategic",
                view=at("metadata", "ownerReferences"),
            ),
            release,
        ],
        "list-in-primitive-list": smp({"metadata": {"finalizers": [["e.com/x"]]}}),
        "mixed-primitive-types": smp({"metadata": {"finalizers": [1]}}),
        "data-merge-and-null": smp({"data": {"a": None, "b": "2"}}, view=at("data")),
        "not-an-object": [base, patch(c, ["x"], "strategic"), release],
        "string-body": [base, patch(c, '"x"', "strategic"), release],
    }


def _kind_scenarios() -> dict[str, list[Step]]:
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {
            "selector": {"app": "x"},
            "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}],
        },
    }
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "stringData": {"a": "1", "b": "2"},
    }
    sa = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "sa"},
        "secrets": [{"name": "t1"}],
        "imagePullSecrets": [{"name": "p1"}],
    }
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "p"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"a": "1"}}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "containers": [
                {k: v for k, v in MAIN.items() if k != "volumeMounts"},
                _container("side", "busybox"),
            ]
        },
    }

    def webhook(name: str, **kw: Any) -> dict[str, Any]:
        return {
            "name": name,
            "clientConfig": {"url": "https://example.com/hook"},
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "timeoutSeconds": 10,
            # never matches: the webhook must not intercept the corpus's other requests
            "objectSelector": {"matchLabels": {"never": "x"}},
            **kw,
        }

    def mwc(ctx: Any) -> dict[str, Any]:
        return {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": ctx.ns},
            "webhooks": [webhook("a.example.com"), webhook("b.example.com")],
        }

    def mwc_path(ctx: Any) -> str:
        return f"{MWC}/{ctx.ns}"

    def webhooks(body: Any) -> Any:
        return [
            {"name": w["name"], "timeoutSeconds": w.get("timeoutSeconds")} for w in body.get("webhooks", [])
        ]

    pod_status = {"status": {"podIPs": [{"ip": "10.0.0.1"}], "podIP": "10.0.0.1"}}
    return {
        "service-ports-by-port": [
            setup(post(SVC, svc)),
            patch(
                SVC + "/s",
                {"spec": {"ports": [{"port": 443, "name": "tls"}, {"port": 8080, "name": "alt"}]}},
                "strategic",
                view=lambda b: [{k: p.get(k) for k in ("name", "port")} for p in b["spec"]["ports"]],
            ),
        ],
        "secret-data": [
            setup(post(SECRETS, secret)),
            patch(SECRETS + "/s", {"data": {"a": None, "c": "Mw=="}}, "strategic", view=at("data")),
        ],
        "serviceaccount-secrets-by-name": [
            setup(post(SA, sa)),
            patch(
                SA + "/sa",
                {"secrets": [{"name": "t2"}], "imagePullSecrets": [{"name": "p2"}]},
                "strategic",
                view=lambda b: {"secrets": b.get("secrets"), "imagePullSecrets": b.get("imagePullSecrets")},
            ),
        ],
        "pdb-selector-replace": [
            setup(post(PDB, pdb)),
            patch(
                PDB + "/p", {"spec": {"selector": {"matchLabels": {"b": "2"}}}}, "strategic", view=at("spec")
            ),
        ],
        "webhooks-by-name": [
            setup(post(MWC, mwc)),
            patch(
                mwc_path,
                {"webhooks": [{"name": "b.example.com", "timeoutSeconds": 5}]},
                "strategic",
                view=webhooks,
            ),
            Step("DELETE", mwc_path, compare=False),
        ],
        "pod-containers-image": [
            setup(post(PODS, pod)),
            patch(
                PODS + "/p",
                {"spec": {"containers": [{"name": "side", "image": "redis"}]}},
                "strategic",
                view=lambda b: [(c["name"], c["image"]) for c in b["spec"]["containers"]],
            ),
        ],
        "pod-status-pod-ips-by-ip": [
            setup(post(PODS, pod)),
            setup(patch(PODS + "/p/status", pod_status, "strategic")),
            patch(
                PODS + "/p/status",
                {"status": {"podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]}},
                "strategic",
                view=at("status", "podIPs"),
            ),
        ],
        "pod-status-conditions-by-type": [
            setup(post(PODS, pod)),
            patch(
                PODS + "/p/status",
                {"status": {"conditions": [{"type": "Example", "status": "True"}]}},
                "strategic",
                view=lambda b: sorted(c["type"] for c in b["status"].get("conditions", [])),
            ),
        ],
    }


def strategic() -> list[Scenario]:
    seqs = {**_dep_scenarios(), **_meta_scenarios(), **_kind_scenarios()}
    for steps in seqs.values():
        for step in steps:
            step.messages = True  # the strategicpatch package's error texts, word for word
    return [Scenario(f"patch/smp-{k}", "patch", v) for k, v in seqs.items()]


SCENARIOS: list[Scenario] = strategic()
