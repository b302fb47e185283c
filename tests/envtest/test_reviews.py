"""TokenReview, SubjectAccessReview and SelfSubjectAccessReview: answered from the Environment's
policy, never stored."""

from __future__ import annotations

import shutil
from typing import Any

import httpx2
import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.envtest.environment import TOKEN
from pyscaffold_op.envtest.server.auth import Attributes

TR = "/apis/authentication.k8s.io/v1/tokenreviews"
SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


def sar(user: str = "", groups: list[str] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview"}
    body["spec"] = {"user": user, "groups": groups or [], **spec}
    return body


def metrics(verb: str = "get", path: str = "/metrics") -> dict[str, Any]:
    return {"nonResourceAttributes": {"path": path, "verb": verb}}


async def test_discovery_lists_create_only_reviews(http: httpx2.AsyncClient) -> None:
    groups = {g["name"] for g in (await http.get("/apis")).json()["groups"]}
    assert {"authentication.k8s.io", "authorization.k8s.io"} <= groups
    authn = (await http.get("/apis/authentication.k8s.io/v1")).json()["resources"]
    assert authn == [
        {
            "name": "selfsubjectreviews",
            "singularName": "selfsubjectreview",
            "namespaced": False,
            "kind": "SelfSubjectReview",
            "verbs": ["create"],
        },
        {
            "name": "tokenreviews",
            "singularName": "tokenreview",
            "namespaced": False,
            "kind": "TokenReview",
            "verbs": ["create"],
        },
    ]
    authz = {r["name"] for r in (await http.get("/apis/authorization.k8s.io/v1")).json()["resources"]}
    assert authz == {
        "subjectaccessreviews",
        "selfsubjectaccessreviews",
        "localsubjectaccessreviews",
        "selfsubjectrulesreviews",
    }


async def test_token_review(env: Environment, http: httpx2.AsyncClient) -> None:
    admin = await http.post(
        TR, json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": TOKEN}}
    )
    assert admin.status_code == 201
    body = admin.json()
    assert body["kind"] == "TokenReview" and body["apiVersion"] == "authentication.k8s.io/v1"
    assert body["status"] == {
        "authenticated": True,
        # a static token's uid is its user name, as kube-apiserver's token file gives it
        "user": {
            "username": "envtest-admin",
            "uid": "envtest-admin",
            "groups": ["system:masters", "system:authenticated"],
        },
    }
    env.policy.add_token("t-alice", "alice", groups=["devs"], uid="u1")
    alice = (await http.post(TR, json={"spec": {"token": "t-alice", "audiences": ["api"]}})).json()
    assert alice["status"] == {
        "authenticated": True,
        "user": {"username": "alice", "uid": "u1", "groups": ["devs", "system:authenticated"]},
        "audiences": ["api"],
    }
    unknown = await http.post(TR, json={"spec": {"token": "nope"}})
    assert unknown.status_code == 201 and not unknown.json()["status"].get("authenticated")
    assert env.policy.counts["TokenReview"] == 3
    # never stored: the resource cannot be read back
    assert (await http.get(TR)).status_code == 405
    assert (await http.get(f"{TR}/x")).status_code == 405


async def test_token_review_bad_bodies(http: httpx2.AsyncClient) -> None:
    for body, code in (
        (b"{", 400),
        (b"[]", 400),
        (b'{"spec": {}}', 400),
        (b'{"spec": {"token": 5}}', 400),
        (b'{"spec": "x"}', 400),
        (b'{"kind": "ConfigMap", "spec": {"token": "x"}}', 400),
        (b'{"metadata": {"labels": 3}, "spec": {"token": "x"}}', 400),
    ):
        r = await http.post(TR, content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == code, (body, r.text)
        assert r.json()["kind"] == "Status" and r.json()["code"] == code
    empty = (await http.post(TR, json={"spec": {"token": ""}})).json()
    assert empty["message"] == "token is required for TokenReview in authentication"


async def test_subject_access_review(env: Environment, http: httpx2.AsyncClient) -> None:
    async def allowed(body: dict[str, Any]) -> dict[str, Any]:
        r = await http.post(SAR, json=body)
        assert r.status_code == 201, r.text
        return r.json()["status"]

    assert (await allowed(sar("root", ["system:masters"], **metrics())))["allowed"] is True
    assert await allowed(sar("alice", ["devs"], **metrics())) == {"allowed": False}
    env.policy.allow("devs", "get", paths="/metrics")
    env.policy.allow("bob", ["list", "watch"], resources=["pods", "deployments.apps"])
    env.policy.allow("carol", paths="/debug/*")
    assert (await allowed(sar("alice", ["devs"], **metrics())))["allowed"] is True
    assert (await allowed(sar("alice", ["devs"], **metrics("post"))))["allowed"] is False
    assert (await allowed(sar("alice", ["devs"], **metrics(path="/healthz"))))["allowed"] is False
    assert (await allowed(sar("carol", **metrics("put", "/debug/pprof"))))["allowed"] is True
    pods = {"resourceAttributes": {"verb": "list", "resource": "pods", "namespace": "default"}}
    deploys = {"resourceAttributes": {"verb": "watch", "group": "apps", "resource": "deployments"}}
    secrets = {"resourceAttributes": {"verb": "list", "resource": "secrets"}}
    assert (await allowed(sar("bob", **pods)))["allowed"] is True
    assert (await allowed(sar("bob", **deploys)))["allowed"] is True
    assert (await allowed(sar("bob", **secrets)))["allowed"] is False
    assert (await allowed(sar("bob", **metrics())))["allowed"] is False

    seen: list[Attributes] = []

    def hook(a: Attributes) -> bool | None:
        seen.append(a)
        return False if a.user == "bob" and a.resource == "pods" else None

    env.policy.add_authorizer(hook)
    assert await allowed(sar("bob", **pods)) == {
        "allowed": False,
        "denied": True,
        "reason": "envtest: denied by an authorizer",
    }
    assert seen[-1].namespace == "default" and seen[-1].verb == "list"
    assert env.policy.counts["SubjectAccessReview"] == 11


async def test_subject_access_review_invalid(http: httpx2.AsyncClient) -> None:
    r = await http.post(SAR, json=sar(**metrics()))
    assert r.status_code == 422 and r.json()["reason"] == "Invalid"
    assert [c["field"] for c in r.json()["details"]["causes"]] == ["spec.user"]
    r = await http.post(SAR, json=sar("a"))
    assert [c["field"] for c in r.json()["details"]["causes"]] == ["spec"]  # as kube-apiserver names it
    r = await http.post(SAR, json=sar("a", resourceAttributes={"verb": "get"}, **metrics()))
    assert [c["field"] for c in r.json()["details"]["causes"]] == ["spec"]
    for spec in ({"user": 3}, {"user": "a", "groups": "g"}, {"user": "a", "nonResourceAttributes": []}):
        r = await http.post(SAR, json={"spec": spec})
        assert r.status_code == 400 and r.json()["kind"] == "Status", spec


async def test_self_subject_access_review(env: Environment, http: httpx2.AsyncClient) -> None:
    body = {"spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}}
    admin = await http.post(SSAR, json=body, headers={"Authorization": f"Bearer {TOKEN}"})
    assert admin.status_code == 201 and admin.json()["status"]["allowed"] is True
    env.policy.add_token("t-dave", "dave")
    dave = await http.post(SSAR, json=body, headers={"Authorization": "Bearer t-dave"})
    assert dave.json()["status"]["allowed"] is False
    env.policy.allow("system:authenticated", "delete", resources="nodes")
    dave = await http.post(SSAR, json=body, headers={"Authorization": "Bearer t-dave"})
    assert dave.json()["status"]["allowed"] is True
    anon = await http.post(SSAR, json=body, headers={"Authorization": "Bearer unknown"})
    assert anon.json()["status"]["allowed"] is False
    # no token at all (client-go sends none over plain HTTP): the kubeconfig's user
    tokenless = await http.post(SSAR, json=body)
    assert tokenless.json()["status"]["allowed"] is True


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_auth_can_i(thread_env: Environment) -> None:
    """kubectl sends SelfSubjectAccessReviews as protobuf (and no token over plain HTTP)."""
    from .test_kubectl import kubectl

    assert kubectl(thread_env, "auth", "can-i", "delete", "nodes").stdout.strip() == "yes"
    assert kubectl(thread_env, "auth", "can-i", "get", "/metrics").stdout.strip() == "yes"
