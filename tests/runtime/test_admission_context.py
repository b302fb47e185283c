"""Defaulters and validators read the request they answer (controller-runtime's
admission.RequestFromContext, kopf's on.validate kwargs): operation, old object, dry run, user,
subresource and HTTP headers, through `admission_request()`, with their typed signatures unchanged.
The emulator calls them over HTTPS, as kube-apiserver would."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Client, Forbidden
from pyscaffold_op.runtime.webhook import (
    AdmissionRequest,
    Denied,
    WebhookServer,
    admission_request,
    mutate_path,
    validate_path,
    webhook_managed_by,
)

from .widgets import Widget, WidgetStatus, widget


def configurations(server: WebhookServer) -> list[dict[str, Any]]:
    assert server.ca_bundle is not None
    import base64

    ca = base64.b64encode(server.ca_bundle).decode()
    rule = {
        "apiGroups": ["test.pyop.io"],
        "apiVersions": ["v1"],
        "operations": ["CREATE", "UPDATE"],
        "resources": ["widgets", "widgets/status"],
    }

    def hook(name: str, path: str) -> dict[str, Any]:
        return {
            "name": name,
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "clientConfig": {"url": server.url + path, "caBundle": ca},
            "rules": [rule],
        }

    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "widgets-context"},
            "webhooks": [hook("mwidget.test.pyop.io", mutate_path(Widget))],
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "widgets-context"},
            "webhooks": [hook("vwidget.test.pyop.io", validate_path(Widget))],
        },
    ]


class Seen:
    def __init__(self) -> None:
        self.requests: list[tuple[str, AdmissionRequest]] = []

    def of(self, who: str) -> list[AdmissionRequest]:
        return [r for w, r in self.requests if w == who]


class Defaulter:
    def __init__(self, seen: Seen) -> None:
        self.seen = seen

    def default(self, obj: Widget) -> None:  # a plain def: runs on a thread, still sees the request
        req = admission_request()
        self.seen.requests.append(("default", req))
        if req.dry_run:
            obj.metadata.labels = {**(obj.metadata.labels or {}), "dry-run": "seen"}


class Validator:
    def __init__(self, seen: Seen) -> None:
        self.seen = seen

    async def validate_create(self, obj: Widget) -> list[str]:
        req = admission_request()
        self.seen.requests.append(("create", req))
        return [f"created by {req.user_info.get('username')}"]

    async def validate_update(self, old: Widget, new: Widget) -> None:
        req = admission_request()
        self.seen.requests.append(("update", req))
        if (
            req.sub_resource == "status"
            and new.status is not None
            and new.status.observed_size != new.spec.size
        ):
            raise Denied("status.observedSize must equal spec.size")

    async def validate_delete(self, obj: Widget) -> None: ...


async def test_handlers_read_the_request_they_answer(tmp_path: Any) -> None:
    seen = Seen()
    server = WebhookServer(host="127.0.0.1", port=0)
    webhook_managed_by(server).for_(Widget).with_defaulter(Defaulter(seen)).with_validator(
        Validator(seen)
    ).complete()
    from pathlib import Path

    import yaml

    crds = Path(__file__).parent / "crds"
    async with Environment(crd_paths=[crds], kubelet=None) as env, server:
        manifests = tmp_path / "hooks.yaml"
        manifests.write_text(yaml.safe_dump_all(configurations(server)))
        await env.install_webhooks([manifests])
        from pyscaffold_op.runtime import new_client

        api: Client = new_client(env.config)
        try:
            dry = await api.create(widget("w", size=2), dry_run=True)
            assert dry.metadata.labels == {"dry-run": "seen"}  # the defaulter saw dryRun
            created = await api.create(widget("w", size=2))
            assert created.metadata.labels in ({}, None)
            [dry_default, real_default] = seen.of("default")[:2]
            assert dry_default.dry_run and not real_default.dry_run
            assert dry_default.operation == "CREATE" and dry_default.old_object is None
            create = seen.of("create")[-1]
            assert create.user_info.get("username")  # who asked (the emulator's admin user)
            assert create.headers.get("content-type") == "application/json"  # case-insensitive
            created.spec.size = 3
            updated = await api.update(created)
            update = seen.of("update")[-1]
            assert update.operation == "UPDATE" and update.sub_resource == ""
            assert update.old_object is not None and update.old_object["spec"]["size"] == 2
            updated.status = WidgetStatus(observed_size=1)
            with pytest.raises(Forbidden, match=r"status\.observedSize must equal spec\.size"):
                await api.status().update(updated)
            assert seen.of("update")[-1].sub_resource == "status"
        finally:
            await api.close()


def test_outside_a_webhook_call_there_is_no_request() -> None:
    with pytest.raises(LookupError, match="only available while a webhook answers"):
        admission_request()

    async def concurrently() -> None:  # a task started elsewhere does not see another call's request
        with pytest.raises(LookupError):
            admission_request()

    asyncio.run(concurrently())
