"""The emulator calls admission webhooks served over HTTPS by the runtime's WebhookServer, in the API
server's order and with its rules, selectors, failure policies, timeouts and messages."""

from __future__ import annotations

import asyncio
import base64
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Invalid, new_client
from pyscaffold_op.runtime.webhook import (
    Admission,
    AdmissionRequest,
    AdmissionResponse,
    WebhookServer,
    mutate_path,
    validate_path,
    webhook_managed_by,
)
from tests.runtime.webhook_kinds import WidgetDefaulter, WidgetValidator
from tests.runtime.widgets import Widget

CRDS = Path(__file__).parents[1] / "runtime" / "crds"
WIDGETS = "/apis/test.pyop.io/v1/namespaces/default/widgets"
RULE = {
    "operations": ["CREATE", "UPDATE"],
    "apiGroups": ["test.pyop.io"],
    "apiVersions": ["v1"],
    "resources": ["widgets"],
}


def wid(name: str = "w", size: int = 1, color: str = "", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "test.pyop.io/v1",
        "kind": "Widget",
        "metadata": {"name": name, "labels": labels},
        "spec": {"size": size, "color": color},
    }


class Hooks:
    """A webhook server with the Widget webhooks plus raw endpoints a test can script."""

    def __init__(self, server: WebhookServer, env: Environment) -> None:
        self.server, self.env = server, env
        self.calls: dict[str, list[AdmissionRequest]] = {}
        self.scripts: dict[str, Any] = {}
        self.release = asyncio.Event()

    def raw(self, path: str, script: Any) -> None:
        self.scripts[path] = script

        async def handle(req: AdmissionRequest) -> AdmissionResponse:
            self.calls.setdefault(path, []).append(req)
            out = self.scripts[path](req)
            if asyncio.iscoroutine(out):
                out = await out
            return out

        self.server.register(path, Admission(handle))

    def hook(
        self, name: str, path: str, rules: list[dict[str, Any]] | None = None, **extra: Any
    ) -> dict[str, Any]:
        assert self.server.ca_bundle is not None
        return {
            "name": name,
            "clientConfig": {
                "url": self.server.url + path,
                "caBundle": base64.b64encode(self.server.ca_bundle).decode(),
            },
            "rules": rules if rules is not None else [RULE],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            **extra,
        }

    async def configure(self, kind: str, name: str, *hooks: dict[str, Any]) -> None:
        doc = {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": name},
            "webhooks": list(hooks),
        }
        plural = kind.lower() + "s"
        async with httpx2.AsyncClient(base_url=self.env.url) as c:
            r = await c.post(f"/apis/admissionregistration.k8s.io/v1/{plural}", json=doc)
            assert r.status_code == 201, r.text


def patch_labels(**lbls: str) -> AdmissionResponse:
    return AdmissionResponse(
        True, patch=[{"op": "add", "path": f"/metadata/labels/{k}", "value": v} for k, v in lbls.items()]
    )


@pytest.fixture
async def env() -> AsyncIterator[Environment]:
    async with Environment(crd_paths=[CRDS], kubelet=None) as e:
        yield e


@pytest.fixture
async def http(env: Environment) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(base_url=env.url, timeout=30) as c:
        yield c


@pytest.fixture
async def hooks(env: Environment) -> AsyncIterator[Hooks]:
    server = WebhookServer(host="127.0.0.1", port=0)
    webhook_managed_by(server).for_(Widget).with_defaulter(WidgetDefaulter()).with_validator(
        WidgetValidator()
    ).complete()
    h = Hooks(server, env)
    h.raw("/label-a", lambda req: patch_labels(a="1"))
    h.raw("/mark-if-b", lambda req: patch_labels(saw_b=str("b" in req.object["metadata"]["labels"]).lower()))
    h.raw("/label-b", lambda req: patch_labels(b="1"))
    h.raw(
        "/fix-size",
        lambda req: AdmissionResponse(True, patch=[{"op": "replace", "path": "/spec/size", "value": 3}]),
    )
    h.raw(
        "/deny", lambda req: AdmissionResponse(False, {"code": 403, "reason": "Forbidden", "message": "no"})
    )
    h.raw("/allow", lambda req: AdmissionResponse.allow(["looked at it"]))
    h.raw("/wrong-uid", lambda req: AdmissionResponse.allow())

    async def hang(req: AdmissionRequest) -> AdmissionResponse:
        await h.release.wait()
        return AdmissionResponse.allow()

    h.raw("/hang", hang)
    async with server:
        yield h
        h.release.set()


async def test_defaulting_and_validation_webhooks_through_a_real_client(
    env: Environment, hooks: Hooks
) -> None:
    await hooks.configure(
        "MutatingWebhookConfiguration", "mwidget", hooks.hook("mwidget.test.pyop.io", mutate_path(Widget))
    )
    await hooks.configure(
        "ValidatingWebhookConfiguration",
        "vwidget",
        hooks.hook("vwidget.test.pyop.io", validate_path(Widget), failurePolicy="Fail"),
    )
    client = new_client(env.config)
    try:
        created = await client.create(Widget.model_validate(wid("ok", size=2)))
        assert created.spec.color == "green" and created.metadata.labels == {"defaulted": "true"}
        with pytest.raises(Invalid) as err:
            await client.create(Widget.model_validate(wid("big", size=11)))
        assert err.value.message == (
            'admission webhook "vwidget.test.pyop.io" denied the request: '
            'Widget.test.pyop.io "big" is invalid: spec.size: Invalid value: 11: must be at most 10'
        )
        assert err.value.details["causes"][0]["field"] == "spec.size"
        # updates are validated against the old object
        created.spec.size = 1
        with pytest.raises(Exception, match="widgets may not shrink"):
            await client.update(created)
    finally:
        await client.close()


async def test_denials_warnings_and_the_status_shape(hooks: Hooks, http: httpx2.AsyncClient) -> None:
    await hooks.configure(
        "ValidatingWebhookConfiguration",
        "v",
        hooks.hook("deny.pyop.io", "/deny", objectSelector={"matchLabels": {"deny": "yes"}}),
        hooks.hook("warn.pyop.io", "/allow"),
    )
    r = await http.post(WIDGETS, json=wid("fine"))
    assert r.status_code == 201 and r.headers["warning"] == '299 - "looked at it"'
    r = await http.post(WIDGETS, json=wid("nope", deny="yes"))
    assert r.status_code == 403
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'admission webhook "deny.pyop.io" denied the request: no',
        "reason": "Forbidden",
        "code": 403,
    }
    assert (await http.get(f"{WIDGETS}/nope")).status_code == 404


async def test_mutation_comes_before_schema_validation_and_validation_sees_the_result(
    env: Environment, hooks: Hooks, http: httpx2.AsyncClient
) -> None:
    await hooks.configure("MutatingWebhookConfiguration", "m", hooks.hook("fix.pyop.io", "/fix-size"))
    await hooks.configure("ValidatingWebhookConfiguration", "v", hooks.hook("see.pyop.io", "/allow"))
    # "size": "huge" fails the schema (integer) unless the mutating webhook fixes it first
    bad = wid("fixed")
    bad["spec"]["size"] = "huge"
    r = await http.post(WIDGETS, json=bad)
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["size"] == 3
    seen = hooks.calls["/allow"][-1]
    assert seen.object is not None and seen.object["spec"]["size"] == 3
    # validating webhooks see the object as storage would get it: uid and creationTimestamp set
    assert seen.object["metadata"]["uid"] and seen.object["metadata"]["creationTimestamp"]
    assert seen.operation == "CREATE" and seen.namespace == "default" and seen.name == "fixed"
    assert seen.user_info["username"] == "envtest-admin"


async def test_reinvocation_if_needed(hooks: Hooks, http: httpx2.AsyncClient) -> None:
    await hooks.configure(
        "MutatingWebhookConfiguration",
        "a-first",
        hooks.hook("mark.pyop.io", "/mark-if-b", reinvocationPolicy="IfNeeded"),
    )
    await hooks.configure("MutatingWebhookConfiguration", "b-second", hooks.hook("b.pyop.io", "/label-b"))
    r = await http.post(WIDGETS, json=wid("again"))
    assert r.json()["metadata"]["labels"] == {"saw_b": "true", "b": "1"}
    assert len(hooks.calls["/mark-if-b"]) == 2


async def test_no_reinvocation_by_default(hooks: Hooks, http: httpx2.AsyncClient) -> None:
    await hooks.configure("MutatingWebhookConfiguration", "a-first", hooks.hook("mark.pyop.io", "/mark-if-b"))
    await hooks.configure("MutatingWebhookConfiguration", "b-second", hooks.hook("b.pyop.io", "/label-b"))
    r = await http.post(WIDGETS, json=wid("once"))
    assert r.json()["metadata"]["labels"] == {"saw_b": "false", "b": "1"}
    assert len(hooks.calls["/mark-if-b"]) == 1


@pytest.mark.parametrize(
    ("rule", "called"),
    [
        ({**RULE, "operations": ["UPDATE"]}, False),
        ({**RULE, "operations": ["*"]}, True),
        ({**RULE, "apiGroups": ["other.io"]}, False),
        ({**RULE, "apiVersions": ["*"]}, True),
        ({**RULE, "resources": ["*"]}, True),
        ({**RULE, "resources": ["widgets/status"]}, False),
        ({**RULE, "resources": ["*/*"]}, True),
        ({**RULE, "scope": "Cluster"}, False),
        ({**RULE, "scope": "Namespaced"}, True),
    ],
)
async def test_rules(hooks: Hooks, http: httpx2.AsyncClient, rule: dict[str, Any], called: bool) -> None:
    await hooks.configure("MutatingWebhookConfiguration", "m", hooks.hook("a.pyop.io", "/label-a", [rule]))
    r = await http.post(WIDGETS, json=wid("r"))
    assert r.status_code == 201
    assert ("a" in r.json()["metadata"]["labels"]) is called


async def test_status_subresource_rules(hooks: Hooks, http: httpx2.AsyncClient) -> None:
    status_rule = {**RULE, "operations": ["UPDATE"], "resources": ["widgets/status"]}
    await hooks.configure(
        "ValidatingWebhookConfiguration", "v", hooks.hook("status.pyop.io", "/deny", [status_rule])
    )
    created = (await http.post(WIDGETS, json=wid("s"))).json()
    created["spec"]["size"] = 2
    updated = await http.put(f"{WIDGETS}/s", json=created)
    assert updated.status_code == 200  # the main resource is not matched
    r = await http.put(f"{WIDGETS}/s/status", json={**updated.json(), "status": {"reconciles": 1}})
    assert r.status_code == 403 and "denied the request: no" in r.json()["message"]
    assert hooks.calls["/deny"][-1].sub_resource == "status"


async def test_namespace_selector(env: Environment, hooks: Hooks, http: httpx2.AsyncClient) -> None:
    await hooks.configure(
        "ValidatingWebhookConfiguration",
        "v",
        hooks.hook(
            "ns.pyop.io",
            "/deny",
            namespaceSelector={"matchExpressions": [{"key": "webhooks", "operator": "In", "values": ["on"]}]},
        ),
    )
    r = await http.post(
        "/api/v1/namespaces", json={"metadata": {"name": "guarded", "labels": {"webhooks": "on"}}}
    )
    assert r.status_code == 201
    assert (await http.post(WIDGETS, json=wid("free"))).status_code == 201
    guarded = "/apis/test.pyop.io/v1/namespaces/guarded/widgets"
    assert (await http.post(guarded, json=wid("caught"))).status_code == 403


async def test_delete_is_validated_with_the_old_object(hooks: Hooks, http: httpx2.AsyncClient) -> None:
    await hooks.configure(
        "MutatingWebhookConfiguration", "m", hooks.hook("mwidget.test.pyop.io", mutate_path(Widget))
    )
    rule = {**RULE, "operations": ["DELETE"]}
    await hooks.configure(
        "ValidatingWebhookConfiguration",
        "v",
        hooks.hook("vwidget.test.pyop.io", validate_path(Widget), [rule]),
    )
    assert (await http.post(WIDGETS, json=wid("keep", protected="true"))).status_code == 201
    r = await http.delete(f"{WIDGETS}/keep")
    assert r.status_code == 403
    assert (
        r.json()["message"]
        == 'admission webhook "vwidget.test.pyop.io" denied the request: widget keep is protected'
    )
    assert (await http.get(f"{WIDGETS}/keep")).status_code == 200
    assert (await http.post(WIDGETS, json=wid("go"))).status_code == 201
    assert (await http.delete(f"{WIDGETS}/go")).status_code == 200


async def test_failure_policy(hooks: Hooks, http: httpx2.AsyncClient) -> None:
    dead = hooks.hook("dead.pyop.io", "/x")
    dead["clientConfig"]["url"] = "https://127.0.0.1:1/x"  # nothing listens on port 1
    await hooks.configure("ValidatingWebhookConfiguration", "ignored", {**dead, "failurePolicy": "Ignore"})
    assert (await http.post(WIDGETS, json=wid("ignored"))).status_code == 201
    await hooks.configure("ValidatingWebhookConfiguration", "failing", {**dead, "name": "fail.pyop.io"})
    r = await http.post(WIDGETS, json=wid("failed"))
    assert r.status_code == 500 and r.json()["reason"] == "InternalError"
    assert r.json()["message"].startswith(
        'Internal error occurred: failed calling webhook "fail.pyop.io": failed to call webhook: '
        'Post "https://127.0.0.1:1/x?timeout=10s": '
    )


async def test_untrusted_certificate_is_a_call_failure(hooks: Hooks, http: httpx2.AsyncClient) -> None:
    hook = hooks.hook("untrusted.pyop.io", "/allow")
    del hook["clientConfig"]["caBundle"]
    await hooks.configure("ValidatingWebhookConfiguration", "v", hook)
    r = await http.post(WIDGETS, json=wid("t"))
    assert r.status_code == 500 and r.json()["message"].endswith(
        "x509: certificate signed by unknown authority"
    )


async def test_timeout(hooks: Hooks, http: httpx2.AsyncClient) -> None:
    await hooks.configure(
        "ValidatingWebhookConfiguration", "v", hooks.hook("slow.pyop.io", "/hang", timeoutSeconds=1)
    )
    r = await http.post(WIDGETS, json=wid("slow"))
    assert r.status_code == 500
    assert r.json()["message"].endswith('?timeout=1s": context deadline exceeded')


async def test_dry_run_and_side_effects(hooks: Hooks, http: httpx2.AsyncClient) -> None:
    await hooks.configure("ValidatingWebhookConfiguration", "v", hooks.hook("pure.pyop.io", "/allow"))
    r = await http.post(WIDGETS, params={"dryRun": "All"}, json=wid("dry"))
    assert r.status_code == 201 and hooks.calls["/allow"][-1].dry_run is True
    assert (await http.get(f"{WIDGETS}/dry")).status_code == 404
    await hooks.configure(
        "ValidatingWebhookConfiguration",
        "w",
        {**hooks.hook("effects.pyop.io", "/allow"), "sideEffects": "Some"},
    )
    r = await http.post(WIDGETS, params={"dryRun": "All"}, json=wid("dry"))
    assert r.status_code == 400
    assert r.json()["message"] == 'admission webhook "effects.pyop.io" does not support dry run'


async def test_service_reference_resolves_to_a_registered_url(
    env: Environment, hooks: Hooks, http: httpx2.AsyncClient
) -> None:
    hook = hooks.hook("svc.pyop.io", "/x")
    hook["clientConfig"] = {"service": {"namespace": "system", "name": "webhook-service", "path": "/deny"}}
    await hooks.configure("ValidatingWebhookConfiguration", "v", hook)
    r = await http.post(WIDGETS, json=wid("unresolved"))
    assert r.status_code == 500
    assert 'Post "https://webhook-service.system.svc:443/deny?timeout=10s"' in r.json()["message"]
    assert hooks.server.ca_bundle is not None
    env.webhook_service_url("system", "webhook-service", hooks.server.url, ca=hooks.server.ca_bundle)
    r = await http.post(WIDGETS, json=wid("resolved"))
    assert r.status_code == 403 and r.json()["message"].endswith("denied the request: no")


async def test_install_webhooks_from_manifests(
    env: Environment, hooks: Hooks, http: httpx2.AsyncClient, tmp_path: Path
) -> None:
    manifest = tmp_path / "manifests.yaml"
    manifest.write_text(
        "apiVersion: admissionregistration.k8s.io/v1\n"
        "kind: MutatingWebhookConfiguration\n"
        "metadata:\n  name: mutating-webhook-configuration\n"
        "webhooks:\n"
        "- name: mwidget.test.pyop.io\n"
        "  admissionReviewVersions: [v1]\n"
        "  clientConfig:\n    service:\n      name: webhook-service\n      namespace: system\n"
        f"      path: {mutate_path(Widget)}\n"
        "  failurePolicy: Fail\n  sideEffects: None\n"
        "  rules:\n  - apiGroups: [test.pyop.io]\n    apiVersions: [v1]\n"
        "    operations: [CREATE, UPDATE]\n    resources: [widgets]\n"
    )
    assert hooks.server.ca_bundle is not None
    await env.install_webhooks([manifest], ca_bundle=hooks.server.ca_bundle)
    env.webhook_service_url("system", "webhook-service", hooks.server.url)
    r = await http.post(WIDGETS, json=wid("m"))
    assert r.status_code == 201 and r.json()["spec"]["color"] == "green"


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_kubectl_create_of_an_invalid_object_is_denied(env: Environment, hooks: Hooks) -> None:
    await hooks.configure(
        "MutatingWebhookConfiguration", "m", hooks.hook("mwidget.test.pyop.io", mutate_path(Widget))
    )
    await hooks.configure(
        "ValidatingWebhookConfiguration", "v", hooks.hook("vwidget.test.pyop.io", validate_path(Widget))
    )

    async def kubectl(*args: str, stdin: str = "") -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            "kubectl",
            "--kubeconfig",
            str(env.kubeconfig_path),
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await proc.communicate(stdin.encode())
        return proc.returncode or 0, out.decode(), err.decode()

    manifest = "apiVersion: test.pyop.io/v1\nkind: Widget\nmetadata:\n  name: {name}\nspec:\n  size: {size}\n"
    code, out, err = await kubectl("create", "-f", "-", stdin=manifest.format(name="good", size=2))
    assert code == 0, err
    code, out, err = await kubectl("get", "widget", "good", "-o", "jsonpath={.metadata.labels.defaulted}")
    assert out == "true"
    code, out, err = await kubectl("create", "-f", "-", stdin=manifest.format(name="bad", size=12))
    assert code == 1
    # kubectl prints a 422 with causes in its own words (the Status message is checked above)
    assert 'The Widget "bad" is invalid: spec.size: Invalid value: 12: must be at most 10' in err
    code, out, err = await kubectl("create", "-f", "-", stdin=manifest.format(name="zero", size=0))
    assert code == 0 and "Warning: size 0 widgets are invisible" in err
