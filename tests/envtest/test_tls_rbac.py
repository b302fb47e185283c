"""`Environment(tls=True)` and `Environment(authorization="RBAC")` (issue 25): HTTPS with a CA made at
start, client certificates and tokens authenticated, every request authorized against the stored
RBAC objects with the real server's 403 wording. kubectl and the runtime's Client are the clients."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from pyscaffold_op.envtest import Environment
from pyscaffold_op.envtest.server.pki import Authority
from pyscaffold_op.models.core_v1 import ConfigMap, Namespace
from pyscaffold_op.runtime import load_config, new_client
from pyscaffold_op.runtime.client.errors import Forbidden

RBAC = "rbac.authorization.k8s.io/v1"
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")


@pytest.fixture
async def env() -> AsyncIterator[Environment]:
    async with Environment(authorization="RBAC") as e:
        yield e


def _ssl(
    env: Environment, cert: tuple[bytes, bytes] | None = None, tmp: Path | None = None
) -> ssl.SSLContext:
    assert env.ca_pem is not None
    ctx = ssl.create_default_context(cadata=env.ca_pem.decode())
    if cert is not None and tmp is not None:
        (tmp / "c.crt").write_bytes(cert[0])
        (tmp / "c.key").write_bytes(cert[1])
        ctx.load_cert_chain(tmp / "c.crt", tmp / "c.key")
    return ctx


async def _call(
    env: Environment,
    method: str,
    path: str,
    token: str | None = None,
    body: Any = None,
    headers: dict[str, str] | None = None,
    ctx: ssl.SSLContext | None = None,
) -> tuple[int, Any]:
    hdrs = dict(headers or {})
    if token:
        hdrs["Authorization"] = f"Bearer {token}"
    async with (
        aiohttp.ClientSession() as s,
        s.request(method, env.url + path, json=body, headers=hdrs, ssl=ctx or _ssl(env)) as r,
    ):
        text = await r.text()
        return r.status, json.loads(text) if text.startswith("{") else text


async def _admin(env: Environment, method: str, path: str, body: Any) -> Any:
    status, out = await _call(env, method, path, env.token, body)
    assert status in (200, 201), out
    return out


async def _role(env: Environment, ns: str, role: str, rules: list[dict[str, Any]], **subject: str) -> None:
    """A Role `role` with `rules` in `ns`, bound to `subject` (kind/name[/namespace])."""
    name = role
    await _admin(
        env, "POST", f"/apis/{RBAC}/namespaces/{ns}/roles", {"metadata": {"name": name}, "rules": rules}
    )
    await _admin(
        env,
        "POST",
        f"/apis/{RBAC}/namespaces/{ns}/rolebindings",
        {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [subject],
        },
    )


# -- HTTPS ------------------------------------------------------------------------------------------


async def test_tls_kubeconfig_carries_ca_and_admin_cert_and_runtime_client_uses_it() -> None:
    async with Environment(tls=True) as env:
        assert env.url.startswith("https://")
        config = yaml.safe_load(env.kubeconfig_path.read_text())
        assert config["clusters"][0]["cluster"]["certificate-authority-data"]
        user = config["users"][0]["user"]
        # a cluster's admin kubeconfig: the client certificate alone, no token
        assert set(user) == {"client-certificate-data", "client-key-data"}
        async with new_client(env.config) as client:
            names = [ns.metadata.name for ns in await client.list(Namespace)]
        assert "default" in names


async def test_kubeconfig_read_by_the_runtime_and_by_an_aiohttp_client(tmp_path: Path) -> None:
    """What a kubeconfig reader does (kopf's, the runtime's `load_config`): CA and client certificate
    from the `-data` fields, the certificate alone authenticating the admin."""
    import base64

    async with Environment(authorization="RBAC") as env:
        async with new_client(load_config(env.kubeconfig_path)) as client:
            assert "default" in [ns.metadata.name for ns in await client.list(Namespace)]
        config = yaml.safe_load(env.kubeconfig_path.read_text())
        cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
        ctx = ssl.create_default_context(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
        )
        (tmp_path / "c.crt").write_bytes(base64.b64decode(user["client-certificate-data"]))
        (tmp_path / "c.key").write_bytes(base64.b64decode(user["client-key-data"]))
        ctx.load_cert_chain(tmp_path / "c.crt", tmp_path / "c.key")
        async with (
            aiohttp.ClientSession() as s,
            s.get(cluster["server"] + "/api/v1/namespaces", ssl=ctx) as r,
        ):
            assert r.status == 200  # no token sent: the certificate is system:masters


async def test_admin_client_certificate_alone_is_system_masters(tmp_path: Path) -> None:
    async with Environment(authorization="RBAC") as env:
        assert env.client_cert_pem is not None and env.client_key_pem is not None
        ctx = _ssl(env, (env.client_cert_pem, env.client_key_pem), tmp_path)
        status, body = await _call(
            env,
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
            ctx=ctx,
        )
        assert status == 201
        assert body["status"]["userInfo"]["username"] == "kubernetes-admin"  # kubeadm's and kind's name
        assert "system:masters" in body["status"]["userInfo"]["groups"]


async def test_client_without_the_ca_is_refused() -> None:
    async with Environment(tls=True) as env:
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await _call(env, "GET", "/api", ctx=ssl.create_default_context())


async def test_client_certificate_of_an_unknown_ca_gets_401(tmp_path: Path) -> None:
    async with Environment(tls=True) as env:
        stranger = Authority.new("someone-else").client("admin", ("system:masters",))
        status, body = await _call(
            env, "GET", "/api/v1/namespaces", ctx=_ssl(env, (stranger.cert_pem, stranger.key_pem), tmp_path)
        )
        assert (status, body["reason"]) == (401, "Unauthorized")


async def test_unknown_token_gets_401_and_no_credential_is_anonymous(env: Environment) -> None:
    status, body = await _call(env, "GET", "/api/v1/namespaces/default/pods", token="nobody-has-this")
    assert (status, body["message"]) == (401, "Unauthorized")
    status, body = await _call(env, "GET", "/api/v1/namespaces/default/pods")
    assert status == 403 and 'User "system:anonymous"' in body["message"]
    status, _ = await _call(env, "GET", "/healthz")  # system:public-info-viewer
    assert status == 200


def test_rbac_without_tls_is_refused() -> None:
    with pytest.raises(ValueError, match="needs tls"):
        Environment(authorization="RBAC", tls=False)
    with pytest.raises(ValueError, match="authorization='Webhook'"):
        Environment(authorization="Webhook")


# -- RBAC -------------------------------------------------------------------------------------------


async def test_forbidden_body_is_the_real_servers(env: Environment) -> None:
    alice = env.add_user("alice")
    status, body = await _call(env, "GET", "/api/v1/namespaces/default/pods", alice)
    assert status == 403
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" '
        'in the namespace "default"',
        "reason": "Forbidden",
        "details": {"kind": "pods"},
        "code": 403,
    }
    status, body = await _call(env, "GET", "/apis/apps/v1/namespaces/default/deployments/web", alice)
    assert body["message"] == (
        'deployments.apps "web" is forbidden: User "alice" cannot get resource "deployments" in API group '
        '"apps" in the namespace "default"'
    )
    assert body["details"] == {"name": "web", "group": "apps", "kind": "deployments"}
    status, body = await _call(env, "GET", "/api/v1/nodes", alice)
    assert body["message"].endswith('cannot list resource "nodes" in API group "" at the cluster scope')
    status, body = await _call(env, "GET", "/logs", alice)
    assert (status, body["message"]) == (403, 'forbidden: User "alice" cannot get path "/logs"')


async def test_discovery_and_self_reviews_work_for_every_user(env: Environment) -> None:
    alice = env.add_user("alice")
    for path in ("/api", "/apis", "/api/v1", "/version", "/openapi/v2"):
        status, _ = await _call(env, "GET", path, alice)
        assert status == 200, path


async def test_role_grants_verbs_resources_and_names(env: Environment) -> None:
    alice = env.add_user("alice")
    await _role(
        env,
        "default",
        "reader",
        [
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"], "resourceNames": ["mine"]},
            {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]},
            {"apiGroups": ["*"], "resources": ["*/status"], "verbs": ["patch"]},
        ],
        kind="User",
        name="alice",
    )
    ns = "/api/v1/namespaces/default"
    allowed = [
        ("GET", f"{ns}/configmaps"),
        ("GET", f"{ns}/secrets/mine"),
    ]
    for method, path in allowed:
        status, body = await _call(env, method, path, alice)
        assert status != 403, (path, body)
    async with (
        aiohttp.ClientSession() as s,
        s.get(
            f"{env.url}{ns}/configmaps?watch=true",
            headers={"Authorization": f"Bearer {alice}"},
            ssl=_ssl(env),
        ) as r,
    ):
        assert r.status == 200  # the watch is open (its events are not read)
    refused = {
        ("DELETE", f"{ns}/configmaps"): ("deletecollection", "configmaps"),
        ("GET", f"{ns}/secrets/theirs"): ("get", "secrets"),
        ("GET", f"{ns}/secrets"): ("list", "secrets"),
        ("GET", f"{ns}/pods/p"): ("get", "pods"),
        ("GET", "/api/v1/namespaces/other/configmaps"): ("list", "configmaps"),
    }
    for (method, path), (verb, resource) in refused.items():
        status, body = await _call(env, method, path, alice)
        assert status == 403 and f'cannot {verb} resource "{resource}"' in body["message"], path
    # a subresource rule covers the subresource, not its parent (the pod does not exist: 404, not 403)
    status, _ = await _call(env, "GET", f"{ns}/pods/p/log", alice)
    assert status == 404
    status, _ = await _call(
        env,
        "PATCH",
        "/apis/apps/v1/namespaces/default/deployments/d/status",
        alice,
        body={},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert status == 404  # `*/status` in every group


async def test_cluster_roles_bound_in_a_namespace_or_cluster_wide(env: Environment) -> None:
    bob = env.add_user("bob", groups=["devs"])
    await _admin(
        env,
        "POST",
        f"/apis/{RBAC}/clusterroles",
        {
            "metadata": {"name": "cm-reader"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}],
        },
    )
    await _admin(
        env,
        "POST",
        f"/apis/{RBAC}/namespaces/default/rolebindings",
        {
            "metadata": {"name": "devs-read"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cm-reader"},
            "subjects": [{"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"}],
        },
    )
    assert (await _call(env, "GET", "/api/v1/namespaces/default/configmaps", bob))[0] == 200
    assert (await _call(env, "GET", "/api/v1/namespaces/kube-system/configmaps", bob))[0] == 403
    assert (await _call(env, "GET", "/api/v1/configmaps", bob))[0] == 403  # all namespaces: cluster scope
    await _admin(
        env,
        "POST",
        f"/apis/{RBAC}/clusterrolebindings",
        {
            "metadata": {"name": "devs-read-all"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cm-reader"},
            "subjects": [{"kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io"}],
        },
    )
    assert (await _call(env, "GET", "/api/v1/configmaps", bob))[0] == 200
    assert (await _call(env, "GET", "/api/v1/namespaces/kube-system/configmaps", bob))[0] == 200


async def test_aggregated_cluster_role_and_missing_role_reason(env: Environment) -> None:
    carol = env.add_user("carol")
    await _admin(
        env,
        "POST",
        f"/apis/{RBAC}/clusterroles",
        {
            "metadata": {"name": "agg"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "yes"}}]},
        },
    )
    await _admin(
        env,
        "POST",
        f"/apis/{RBAC}/clusterrolebindings",
        {
            "metadata": {"name": "carol-agg"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "agg"},
            "subjects": [{"kind": "User", "name": "carol", "apiGroup": "rbac.authorization.k8s.io"}],
        },
    )
    assert (await _call(env, "GET", "/api/v1/nodes", carol))[0] == 403
    await _admin(
        env,
        "POST",
        f"/apis/{RBAC}/clusterroles",
        {
            "metadata": {"name": "nodes-part", "labels": {"agg": "yes"}},
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}],
        },
    )
    assert (await _call(env, "GET", "/api/v1/nodes", carol))[0] == 200
    await _admin(
        env,
        "POST",
        f"/apis/{RBAC}/namespaces/default/rolebindings",
        {
            "metadata": {"name": "dangling"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "gone"},
            "subjects": [{"kind": "User", "name": "carol", "apiGroup": "rbac.authorization.k8s.io"}],
        },
    )
    status, body = await _call(env, "GET", "/api/v1/namespaces/default/pods", carol)
    assert status == 403
    assert body["message"].endswith(': rbac: RBAC: role.rbac.authorization.k8s.io "gone" not found')


async def test_non_resource_urls(env: Environment) -> None:
    dave = env.add_user("dave")
    await _admin(
        env,
        "POST",
        f"/apis/{RBAC}/clusterroles",
        {
            "metadata": {"name": "metrics"},
            "rules": [{"nonResourceURLs": ["/metrics", "/debug/*"], "verbs": ["get"]}],
        },
    )
    await _admin(
        env,
        "POST",
        f"/apis/{RBAC}/clusterrolebindings",
        {
            "metadata": {"name": "dave-metrics"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "metrics"},
            "subjects": [{"kind": "User", "name": "dave", "apiGroup": "rbac.authorization.k8s.io"}],
        },
    )
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview"}
    for path, allowed in (("/metrics", True), ("/debug/pprof", True), ("/logs", False)):
        spec = {"nonResourceAttributes": {"path": path, "verb": "get"}}
        _, body = await _call(
            env,
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            dave,
            body={**review, "spec": spec},
        )
        assert body["status"]["allowed"] is allowed, path


async def test_impersonation_needs_the_impersonate_verb(env: Environment) -> None:
    erin = env.add_user("erin")
    await _role(
        env,
        "default",
        "cm",
        [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}],
        kind="User",
        name="frank",
    )
    as_frank = {"Impersonate-User": "frank"}
    status, body = await _call(env, "GET", "/api/v1/namespaces/default/configmaps", erin, headers=as_frank)
    assert status == 403
    assert body["message"] == (
        'users "frank" is forbidden: User "erin" cannot impersonate resource "users" in API group "" '
        "at the cluster scope"
    )
    await _admin(
        env,
        "POST",
        f"/apis/{RBAC}/clusterroles",
        {
            "metadata": {"name": "impersonator"},
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": ["users"],
                    "verbs": ["impersonate"],
                    "resourceNames": ["frank"],
                }
            ],
        },
    )
    await _admin(
        env,
        "POST",
        f"/apis/{RBAC}/clusterrolebindings",
        {
            "metadata": {"name": "erin-impersonates"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "impersonator",
            },
            "subjects": [{"kind": "User", "name": "erin", "apiGroup": "rbac.authorization.k8s.io"}],
        },
    )
    status, _ = await _call(env, "GET", "/api/v1/namespaces/default/configmaps", erin, headers=as_frank)
    assert status == 200
    # frank may list configmaps, not secrets: the impersonated user is the one authorized
    status, body = await _call(env, "GET", "/api/v1/namespaces/default/secrets", erin, headers=as_frank)
    assert status == 403 and 'User "frank"' in body["message"]


async def test_service_account_token_from_token_request(env: Environment) -> None:
    await _admin(env, "POST", "/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": "bot"}})
    tr = await _admin(
        env,
        "POST",
        "/api/v1/namespaces/default/serviceaccounts/bot/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    token = tr["status"]["token"]
    await _role(
        env,
        "default",
        "bot",
        [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}],
        kind="ServiceAccount",
        name="bot",
    )  # no namespace: the binding's
    cm = {"metadata": {"name": "made-by-bot"}}
    status, _ = await _call(env, "POST", "/api/v1/namespaces/default/configmaps", token, body=cm)
    assert status == 201
    status, body = await _call(env, "GET", "/api/v1/namespaces/default/configmaps/made-by-bot", token)
    assert status == 403
    assert 'User "system:serviceaccount:default:bot"' in body["message"]


async def test_access_reviews_and_requests_share_one_evaluator(env: Environment) -> None:
    """What a SubjectAccessReview answers is what the request gets, reason included."""
    gina = env.add_user("gina")
    await _role(
        env,
        "default",
        "cm",
        [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
        kind="User",
        name="gina",
    )
    sar = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": "gina",
            "resourceAttributes": {"namespace": "default", "verb": "get", "resource": "configmaps"},
        },
    }
    out = await _admin(env, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar)
    assert out["status"] == {
        "allowed": True,
        "reason": 'RBAC: allowed by RoleBinding "cm/default" of Role "cm" to User "gina"',
    }
    _, body = await _call(
        env,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
        gina,
        body={
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectRulesReview",
            "spec": {"namespace": "default"},
        },
    )
    assert {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]} in body["status"][
        "resourceRules"
    ]


async def test_runtime_client_as_a_user_gets_forbidden(env: Environment) -> None:
    token = env.add_user("hank")
    async with new_client(env.config_for(token)) as client:
        with pytest.raises(Forbidden) as err:
            await client.list(ConfigMap, namespace="default")
    assert 'User "hank" cannot list resource "configmaps"' in str(err.value)


# -- kubectl ----------------------------------------------------------------------------------------


@needs_kubectl
def test_kubectl_over_tls_as_admin_and_as_a_user(tmp_path: Path) -> None:
    env = Environment(authorization="RBAC").start_in_thread()
    try:
        admin = subprocess.run(
            ["kubectl", "--kubeconfig", str(env.kubeconfig_path), "get", "ns", "-o", "name"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert admin.returncode == 0 and "namespace/default" in admin.stdout, admin.stderr
        kc = tmp_path / "alice"
        kc.write_text(yaml.safe_dump(env.kubeconfig_dict(token=env.add_user("alice"))))
        pods = subprocess.run(
            ["kubectl", "--kubeconfig", str(kc), "get", "pods"], capture_output=True, text=True, timeout=60
        )
        assert pods.returncode == 1
        assert (
            'pods is forbidden: User "alice" cannot list resource "pods" in API group "" '
            'in the namespace "default"' in pods.stderr
        )
        can = subprocess.run(
            [
                "kubectl",
                "--kubeconfig",
                str(kc),
                "auth",
                "can-i",
                "create",
                "selfsubjectaccessreviews.authorization.k8s.io",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert can.stdout.strip() == "yes"
    finally:
        env.stop()


# -- pyop envtest serve -----------------------------------------------------------------------------


def test_serve_rejects_an_unknown_authorization_mode() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pyscaffold_op", "envtest", "serve", "--authorization-mode", "Webhook"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2 and "--authorization-mode Webhook" in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "pyscaffold_op", "envtest", "serve", "--authorization-mode=RBAC", "--no-tls"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2 and "needs TLS" in proc.stderr


@needs_kubectl
@pytest.mark.slow
def test_serve_rbac_mode_with_kubectl(tmp_path: Path) -> None:
    kc = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pyscaffold_op",
            "envtest",
            "serve",
            "--authorization-mode=RBAC",
            "--no-kubelet",
            "--no-workloads",
            "--kubeconfig-out",
            str(kc),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == str(kc)
        config = yaml.safe_load(kc.read_text())
        assert config["clusters"][0]["cluster"]["server"].startswith("https://127.0.0.1:")
        kubectl = ["kubectl", "--kubeconfig", str(kc)]
        run = lambda *args: subprocess.run([*kubectl, *args], capture_output=True, text=True, timeout=60)  # noqa: E731
        assert run("create", "serviceaccount", "bot").returncode == 0
        token = run("create", "token", "bot").stdout.strip()
        assert token
        # a kubeconfig with only the service account's token (the admin's has a client certificate)
        user_kc = tmp_path / "bot"
        config["users"][0]["user"] = {"token": token}
        user_kc.write_text(yaml.safe_dump(config))
        denied = subprocess.run(
            ["kubectl", "--kubeconfig", str(user_kc), "get", "pods"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert 'User "system:serviceaccount:default:bot" cannot list resource "pods"' in denied.stderr
        grant = """
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: pod-reader}
rules: [{apiGroups: [""], resources: [pods], verbs: [list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bot-reads-pods, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: pod-reader}
subjects: [{kind: ServiceAccount, name: bot, namespace: default}]
"""
        applied = subprocess.run(
            [*kubectl, "apply", "-f", "-"], input=grant, capture_output=True, text=True, timeout=60
        )
        assert applied.returncode == 0, applied.stderr
        allowed = subprocess.run(
            ["kubectl", "--kubeconfig", str(user_kc), "get", "pods"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert allowed.returncode == 0, allowed.stderr
    finally:
        proc.terminate()
        proc.wait(10)


async def test_add_user_of_a_service_account_gets_its_groups(env: Environment) -> None:
    token = env.add_user("system:serviceaccount:team:builder")
    await _admin(env, "POST", "/api/v1/namespaces", {"metadata": {"name": "team"}})
    await _role(
        env,
        "team",
        "sa-readers",
        [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}],
        kind="Group",
        name="system:serviceaccounts:team",
    )
    status, _ = await _call(env, "GET", "/api/v1/namespaces/team/configmaps", token)
    assert status == 200
    status, body = await _call(env, "GET", "/api/v1/namespaces/default/configmaps", token)
    assert status == 403 and 'User "system:serviceaccount:team:builder"' in body["message"]
