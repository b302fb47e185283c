"""ServiceAccounts: each namespace's `default` one and root CA, the ServiceAccount admission plugin
(serviceAccountName, the `kube-api-access-*` projected token volume and its mounts, automount
switches, a missing account), TokenRequests, a deleted `default` made again."""

from __future__ import annotations

from typing import Any

from tests.workloads.harness import Scenario
from tests.workloads.kube import SLEEP, Kube, container, obj, pod_template

RESOURCES = ("serviceaccounts", "pods")
TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"


def pod(name: str = "p", **spec: Any) -> dict[str, Any]:
    return obj("v1", "Pod", name, {"containers": [container("c", "busybox", SLEEP)], **spec})


def running(k: Kube, name: str = "p") -> None:
    k.wait("pods", name, lambda p: p["status"].get("phase") == "Running", "runs")


def _pod(**spec: Any) -> Any:
    def act(k: Kube) -> None:
        k.create(pod(**spec))
        running(k)

    return act


def _with_account(automount: bool | None, pod_automount: bool | None = None) -> Any:
    def act(k: Kube) -> None:
        sa = obj("v1", "ServiceAccount", "robot")
        if automount is not None:
            sa["automountServiceAccountToken"] = automount
        k.create(sa)
        spec: dict[str, Any] = {"serviceAccountName": "robot"}
        if pod_automount is not None:
            spec["automountServiceAccountToken"] = pod_automount
        k.create(pod(**spec))
        running(k)

    return act


def _missing(k: Kube) -> None:
    k.create(pod(serviceAccountName="nope"))
    k.record("pod exists", k.get("pods", "p") is not None)


def _own_mount(k: Kube) -> None:
    p = pod(volumes=[{"name": "mine", "emptyDir": {}}])
    p["spec"]["containers"][0]["volumeMounts"] = [{"name": "mine", "mountPath": TOKEN_PATH}]
    k.create(p)
    running(k)


def _init_containers(k: Kube) -> None:
    p = pod()
    p["spec"]["initContainers"] = [container("init", "busybox", ["sh", "-c", "echo init"])]
    k.create(p)
    running(k)


def _deployment(k: Kube) -> None:
    labels = {"app": "web"}
    k.create(
        obj(
            "apps/v1",
            "Deployment",
            "web",
            {"replicas": 1, "selector": {"matchLabels": labels}, "template": pod_template(labels)},
        )
    )
    k.wait_count("pods", 1, "app=web", status__phase="Running")


def _token_request(audience: bool) -> Any:
    def act(k: Kube) -> None:
        spec: dict[str, Any] = {"expirationSeconds": 3600}
        if audience:
            spec["audiences"] = ["vault"]
        review = k.request(
            "POST",
            k.path("serviceaccounts", "default", "token"),
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec},
        )
        if review is not None:
            review["status"]["token"] = bool(review["status"].get("token"))
            k.record(
                "token request",
                {k2: review.get(k2) for k2 in ("apiVersion", "kind", "spec")}
                | {
                    "status": {
                        "token": review["status"]["token"],
                        "expires": "expirationTimestamp" in review["status"],
                    }
                },
            )

    return act


def _recreated(k: Kube) -> None:
    uid = k.get("serviceaccounts", "default")["metadata"]["uid"]
    k.delete("serviceaccounts", "default")
    k.until(
        "default is made again",
        lambda: (k.get("serviceaccounts", "default") or {}).get("metadata", {}).get("uid") not in (None, uid),
        60,
    )


def _root_ca(k: Kube) -> None:
    k.until("the root CA is published", lambda: k.get("configmaps", "kube-root-ca.crt") is not None, 60)
    cm = k.get("configmaps", "kube-root-ca.crt")
    k.record("keys", sorted((cm.get("data") or {}).keys()))
    k.record("annotations", cm["metadata"].get("annotations"))
    k.record("begins", (cm.get("data") or {}).get("ca.crt", "")[:27])


def _root_ca_restored(k: Kube) -> None:
    k.until("the root CA is published", lambda: k.get("configmaps", "kube-root-ca.crt") is not None, 60)
    k.patch("configmaps", "kube-root-ca.crt", {"data": {"ca.crt": "tampered"}})
    k.until(
        "the root CA is restored",
        lambda: (
            (k.get("configmaps", "kube-root-ca.crt") or {})
            .get("data", {})
            .get("ca.crt", "")
            .startswith("-----BEGIN")
        ),
        60,
    )
    k.record("restored", True)


SCENARIOS: list[Scenario] = [
    Scenario("serviceaccount/default", "serviceaccount", lambda k: None, ("serviceaccounts",)),
    Scenario("serviceaccount/pod-token-volume", "serviceaccount", _pod(), RESOURCES),
    Scenario(
        "serviceaccount/pod-automount-false",
        "serviceaccount",
        _pod(automountServiceAccountToken=False),
        RESOURCES,
    ),
    Scenario(
        "serviceaccount/pod-named-default", "serviceaccount", _pod(serviceAccountName="default"), RESOURCES
    ),
    Scenario(
        "serviceaccount/pod-deprecated-account-field",
        "serviceaccount",
        _pod(serviceAccount="default"),
        RESOURCES,
    ),
    Scenario("serviceaccount/custom-account", "serviceaccount", _with_account(None), RESOURCES),
    Scenario("serviceaccount/account-automount-false", "serviceaccount", _with_account(False), RESOURCES),
    Scenario(
        "serviceaccount/pod-overrides-account-automount",
        "serviceaccount",
        _with_account(False, True),
        RESOURCES,
    ),
    Scenario("serviceaccount/missing-account", "serviceaccount", _missing, RESOURCES),
    Scenario("serviceaccount/own-mount-at-token-path", "serviceaccount", _own_mount, RESOURCES),
    Scenario("serviceaccount/init-containers", "serviceaccount", _init_containers, RESOURCES),
    Scenario("serviceaccount/deployment-pods", "serviceaccount", _deployment, RESOURCES),
    Scenario("serviceaccount/token-request", "serviceaccount", _token_request(False), ()),
    Scenario("serviceaccount/token-request-audience", "serviceaccount", _token_request(True), ()),
    Scenario("serviceaccount/default-made-again", "serviceaccount", _recreated, ("serviceaccounts",)),
    Scenario("serviceaccount/root-ca", "serviceaccount", _root_ca, ()),
    Scenario("serviceaccount/root-ca-restored", "serviceaccount", _root_ca_restored, ()),
]
