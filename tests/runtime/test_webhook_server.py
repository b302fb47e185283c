"""The runtime's webhook server over real HTTPS: admission reviews (defaulting patches, validation
denials and warnings), conversion reviews, certificates, readiness and metrics."""

from __future__ import annotations

import base64
import json
import os
import ssl
from pathlib import Path
from typing import Any

import httpx2 as httpx
import jsonpatch
import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime.webhook import (
    WebhookServer,
    mutate_path,
    validate_path,
    webhook_managed_by,
    write_local_certs,
)
from pyscaffold_op.runtime.webhook.admission import defaulting_patch
from tests.runtime.conftest import make_manager
from tests.runtime.webhook_kinds import Shape, ShapeV2, WidgetDefaulter, WidgetValidator
from tests.runtime.widgets import Widget

WIDGET_RESOURCE = {"group": "test.pyop.io", "version": "v1", "resource": "widgets"}


def review(op: str, obj: dict[str, Any] | None, old: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u-1",
            "kind": {"group": "test.pyop.io", "version": "v1", "kind": "Widget"},
            "resource": WIDGET_RESOURCE,
            "operation": op,
            "name": "w",
            "namespace": "default",
            "object": obj,
            "oldObject": old,
        },
    }


def widget(size: int = 1, color: str | None = None, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"size": size}
    if color is not None:
        spec["color"] = color
    return {
        "apiVersion": "test.pyop.io/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": spec,
        **extra,
    }


async def post(server: WebhookServer, path: str, body: Any, **kw: Any) -> httpx.Response:
    assert server.ca_bundle is not None
    ctx = ssl.create_default_context(cadata=server.ca_bundle.decode())
    async with httpx.AsyncClient(verify=ctx) as c:
        return await c.post(server.url + path, json=body, **kw)


@pytest.fixture
async def server() -> Any:
    s = WebhookServer(host="127.0.0.1", port=0)
    webhook_managed_by(s).for_(Widget).with_defaulter(WidgetDefaulter()).with_validator(
        WidgetValidator()
    ).complete()
    webhook_managed_by(s).for_(ShapeV2).complete()
    async with s:
        yield s


def test_paths_follow_kubebuilder() -> None:
    assert mutate_path(Widget) == "/mutate-test-pyop-io-v1-widget"
    assert validate_path(Widget) == "/validate-test-pyop-io-v1-widget"


async def test_defaulter_answers_with_a_json_patch(server: WebhookServer) -> None:
    raw = widget(color="", unknownTopLevel={"kept": 1})
    resp = await post(server, mutate_path(Widget), review("CREATE", raw))
    assert resp.status_code == 200
    out = resp.json()
    assert out["apiVersion"] == "admission.k8s.io/v1" and out["kind"] == "AdmissionReview"
    r = out["response"]
    assert r["uid"] == "u-1" and r["allowed"] is True and r["patchType"] == "JSONPatch"
    ops = json.loads(base64.b64decode(r["patch"]))
    patched = jsonpatch.apply_patch(raw, ops)
    assert patched["spec"]["color"] == "green"
    assert patched["metadata"]["labels"] == {"defaulted": "true"}
    # fields the model does not know are not removed by the round trip
    assert patched["unknownTopLevel"] == {"kept": 1}
    assert not any(op["op"] == "remove" for op in ops)


def test_defaulting_patch_adds_what_raw_lacks() -> None:
    raw = {"spec": {"size": 1}, "x": 1}
    before = {"spec": {"size": 1, "color": "blue"}}  # a model default raw never had
    after = {"spec": {"size": 1, "color": "red"}}
    ops = defaulting_patch(raw, before, after)
    assert jsonpatch.apply_patch(raw, ops) == {"spec": {"size": 1, "color": "red"}, "x": 1}
    assert defaulting_patch(raw, before, before) == []


def test_the_runtime_s_json_patches_agree_with_the_jsonpatch_library() -> None:
    """runtime/webhook/jsonpatch.py (the runtime has no jsonpatch dependency) against the library the
    emulator applies webhook patches with: random documents, diffed both ways, applied by both."""
    import random

    from pyscaffold_op.runtime.webhook import jsonpatch as own

    rng = random.Random(7)

    def doc(depth: int = 0) -> object:
        r = rng.random()
        if depth < 3 and r < 0.3:
            return {rng.choice(["a", "b", "c/d", "e~f"]): doc(depth + 1) for _ in range(rng.randint(0, 3))}
        if depth < 3 and r < 0.5:
            return [doc(depth + 1) for _ in range(rng.randint(0, 3))]
        return rng.choice([0, 1, 1.5, True, False, None, "x"])

    for _ in range(2000):
        src, dst = doc(), doc()
        ops = own.diff(src, dst)
        assert jsonpatch.apply_patch(src, ops) == dst
        assert own.apply(src, ops) == dst
    with pytest.raises(own.PatchConflict):
        own.apply({"a": 1}, [{"op": "replace", "path": "/b", "value": 2}])


async def test_validator_denies_with_field_causes(server: WebhookServer) -> None:
    resp = await post(server, validate_path(Widget), review("CREATE", widget(size=11, color="pink")))
    r = resp.json()["response"]
    assert r["allowed"] is False
    st = r["status"]
    assert st["code"] == 422 and st["reason"] == "Invalid"
    assert st["message"] == (
        'Widget.test.pyop.io "w" is invalid: [spec.size: Invalid value: 11: must be at most 10, '
        'spec.color: Unsupported value: "pink": supported values: "blue", "green", "red"]'
    )
    assert st["details"]["causes"][0] == {
        "reason": "FieldValueInvalid",
        "message": "Invalid value: 11: must be at most 10",
        "field": "spec.size",
    }
    assert st["details"]["causes"][1]["reason"] == "FieldValueNotSupported"


async def test_validator_warnings_and_plain_denials(server: WebhookServer) -> None:
    ok = (await post(server, validate_path(Widget), review("CREATE", widget(size=0)))).json()["response"]
    assert ok["allowed"] is True and ok["warnings"] == ["size 0 widgets are invisible"]
    shrink = review("UPDATE", widget(size=1), widget(size=5))
    r = (await post(server, validate_path(Widget), shrink)).json()["response"]
    assert r["allowed"] is False and r["status"] == {
        "code": 403,
        "reason": "Forbidden",
        "message": "widgets may not shrink",
    }
    protected = widget()
    protected["metadata"]["labels"] = {"protected": "true"}
    r = (await post(server, validate_path(Widget), review("DELETE", None, protected))).json()["response"]
    assert r["allowed"] is False and r["status"]["message"] == "widget w is protected"


async def test_bad_requests(server: WebhookServer) -> None:
    assert (await post(server, "/nowhere", {})).status_code == 404
    resp = await post(server, validate_path(Widget), None, headers={"Content-Type": "text/plain"})
    assert resp.status_code == 400
    not_a_widget = widget()
    not_a_widget["spec"]["size"] = "big"
    r = (await post(server, validate_path(Widget), review("CREATE", not_a_widget))).json()["response"]
    assert r["allowed"] is False and r["status"]["code"] == 400
    r = (await post(server, validate_path(Widget), {"kind": "Nope"})).json()["response"]
    assert r["allowed"] is False and r["status"]["code"] == 400


async def test_conversion_through_the_hub(server: WebhookServer) -> None:
    v1 = {"apiVersion": "shapes.pyop.io/v1", "kind": "Shape", "metadata": {"name": "s"}, "spec": {"size": 3}}
    body = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "c-1", "desiredAPIVersion": "shapes.pyop.io/v2", "objects": [v1]},
    }
    r = (await post(server, "/convert", body)).json()
    assert r["kind"] == "ConversionReview"
    resp = r["response"]
    assert resp["uid"] == "c-1" and resp["result"] == {"status": "Success"}
    [v2] = resp["convertedObjects"]
    assert v2["apiVersion"] == "shapes.pyop.io/v2" and v2["spec"] == {"dimensions": {"width": 3}}
    assert v2["metadata"]["name"] == "s"
    body["request"] = {"uid": "c-2", "desiredAPIVersion": "shapes.pyop.io/v1", "objects": [v2]}
    back = (await post(server, "/convert", body)).json()["response"]["convertedObjects"]
    assert back[0]["spec"] == {"size": 3} and Shape.model_validate(back[0]).spec.size == 3
    body["request"] = {"uid": "c-3", "desiredAPIVersion": "shapes.pyop.io/v9", "objects": [v1]}
    failed = (await post(server, "/convert", body)).json()["response"]
    assert failed["result"]["status"] == "Failure" and "v9" in failed["result"]["message"]
    assert ShapeV2.gvk.version == "v2"


async def test_cert_dir_is_served_and_reloaded(tmp_path: Path) -> None:
    ca1 = write_local_certs(tmp_path)
    s = WebhookServer(host="127.0.0.1", port=0, cert_dir=tmp_path)
    webhook_managed_by(s).for_(Widget).with_validator(WidgetValidator()).complete()
    async with s:
        assert s.ca_bundle is None and s.write_ca_bundle(tmp_path / "out.crt").read_bytes() == ca1

        async def call(ca: bytes) -> int:
            ctx = ssl.create_default_context(cadata=ca.decode())
            async with httpx.AsyncClient(verify=ctx) as c:
                resp = await c.post(s.url + validate_path(Widget), json=review("CREATE", widget()))
                return resp.status_code

        assert await call(ca1) == 200
        ca2 = write_local_certs(tmp_path)
        for f in ("tls.crt", "tls.key"):
            os.utime(tmp_path / f, (1e9, 1e9))
        assert s.cert_watcher.check() is True
        assert await call(ca2) == 200
        with pytest.raises(httpx.ConnectError):
            await call(ca1)


async def test_registration_errors() -> None:
    s = WebhookServer()
    with pytest.raises(ValueError, match="start with"):
        s.register("convert", lambda body: body)
    with pytest.raises(ValueError, match="nothing to register"):
        webhook_managed_by(s).for_(Widget).complete()
    with pytest.raises(TypeError, match="validate_update"):
        webhook_managed_by(s).for_(Widget).with_validator(object())  # type: ignore[arg-type]
    webhook_managed_by(s).for_(Widget).with_defaulter(WidgetDefaulter()).complete()
    with pytest.raises(ValueError, match="already registered"):
        webhook_managed_by(s).for_(Widget).with_defaulter(WidgetDefaulter()).complete()


async def test_manager_serves_webhooks_with_readiness_and_metrics(env: Environment) -> None:
    mgr = make_manager(env, health_probe_bind_address="127.0.0.1:0")
    mgr.webhook_server = WebhookServer(host="127.0.0.1", port=0)
    webhook_managed_by(mgr).for_(Widget).with_validator(WidgetValidator()).complete()
    async with mgr.running():
        assert mgr.health_address is not None
        async with httpx.AsyncClient() as c:
            h, p = mgr.health_address
            ready = await c.get(f"http://{h}:{p}/readyz?verbose")
        assert ready.status_code == 200 and "[+]webhook ok" in ready.text
        path = validate_path(Widget)
        assert (await post(mgr.webhook_server, path, review("CREATE", widget()))).status_code == 200
        assert (await post(mgr.webhook_server, path, None, content=b"{")).status_code == 400
        m = mgr.metrics
        assert m.value("controller_runtime_webhook_requests_total", {"webhook": path, "code": "200"}) == 1
        assert m.value("controller_runtime_webhook_requests_total", {"webhook": path, "code": "400"}) == 1
        assert m.value("controller_runtime_webhook_latency_seconds_count", {"webhook": path}) == 2
        assert m.value("controller_runtime_webhook_requests_in_flight", {"webhook": path}) == 0
        assert b"controller_runtime_webhook_requests_total" in m.exposition()
    # stopped with the manager
    with pytest.raises(httpx.ConnectError):
        await post(mgr.webhook_server, path, review("CREATE", widget()))


async def test_readiness_fails_before_start() -> None:
    with pytest.raises(RuntimeError, match="not been started"):
        await WebhookServer().started_check()
