"""Issue 38: a webhook certificate rotated to a new CA. cert-manager issues a certificate from a new CA,
the kubelet swaps the Secret volume (`..data` renamed), the CA injector writes the new `caBundle` into
the webhook configuration. The old watcher polled every 10 s: for up to 10 s after the rotation the
server still presented the old certificate, which the API server no longer trusted (91 of 129
admissions failed, `x509: certificate signed by unknown authority`).

Here admissions flow from 4 concurrent clients through the API server (the emulator; the real
kube-apiserver + etcd in the `oracle` variant) to the runtime's webhook server, whose poll interval is
an hour: only the file event can reload it. The rotation is the kubelet's swap, then, once the server
presents the new certificate, the `caBundle` update. An admission can fail only while it is in flight
between the two: every admission that starts once the API server has admitted one through the new
certificate succeeds, and on the emulator (which reads `caBundle` at each call) every admission that
starts after the update returned."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pyscaffold_op.apimachinery import ObjectMeta
from pyscaffold_op.dev.oracles import missing_reason, oracle_bin
from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.admissionregistration_v1 import (
    RuleWithOperations,
    ValidatingWebhook,
    ValidatingWebhookConfiguration,
    WebhookClientConfig,
)
from pyscaffold_op.runtime import Client, new_client
from pyscaffold_op.runtime.webhook import WebhookServer, validate_path, webhook_managed_by
from pyscaffold_op.testing import eventually
from tests.runtime.test_metrics_tls import write_secret_volume
from tests.runtime.widgets import Widget, widget

from .conftest import RUNTIME_CRDS
from .test_cert_reload import HOUR, ITEMS, issue

CLIENTS = 4
APISERVER, ETCD = oracle_bin("kube-apiserver"), oracle_bin("etcd")
REAL_MISSING = None if APISERVER and ETCD else missing_reason("kube-apiserver" if not APISERVER else "etcd")


class AllowAll:
    def validate_create(self, obj: Widget) -> None:
        return None

    def validate_update(self, old: Widget, new: Widget) -> None:
        return None

    def validate_delete(self, obj: Widget) -> None:
        return None


@dataclass
class Admission:
    start: float
    end: float
    error: str | None


@pytest.fixture(
    params=[
        "emulator",
        pytest.param(
            "real",
            marks=[
                pytest.mark.oracle,
                pytest.mark.skipif(REAL_MISSING is not None, reason=str(REAL_MISSING)),
            ],
        ),
    ]
)
async def server(request: pytest.FixtureRequest) -> AsyncIterator[Environment]:
    real = request.param == "real"
    assets = APISERVER.parent if real and APISERVER is not None else None
    async with Environment(crd_paths=[RUNTIME_CRDS], kubelet=None, real=real, assets=assets) as env:
        yield env


def configuration(url: str, ca: bytes) -> ValidatingWebhookConfiguration:
    rule = RuleWithOperations(
        operations=["CREATE"], api_groups=["test.pyop.io"], api_versions=["v1"], resources=["widgets"]
    )
    hook = ValidatingWebhook(
        name="vwidget.test.pyop.io",
        client_config=WebhookClientConfig(url=url, ca_bundle=base64.b64encode(ca).decode()),
        rules=[rule],
        failure_policy="Fail",
        side_effects="None",
        admission_review_versions=["v1"],
        timeout_seconds=10,
    )
    return ValidatingWebhookConfiguration(metadata=ObjectMeta(name="widgets-ca-rotation"), webhooks=[hook])


class Clients:
    """CLIENTS tasks creating Widgets (dry run: admitted, not stored) one after another, each recorded."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.done: list[Admission] = []
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._run(i)) for i in range(CLIENTS)]

    async def _run(self, i: int) -> None:
        n = 0
        while True:
            n += 1
            start = time.monotonic()
            error = None
            try:
                await self.client.create(widget(f"w{i}-{n}"), dry_run=True)
            except Exception as err:  # the API server's 500: failed calling webhook ... x509 ...
                error = str(err)
            self.done.append(Admission(start, time.monotonic(), error))

    def succeeded_since(self, t: float) -> int:
        return sum(1 for a in self.done if a.start >= t and a.error is None)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


async def test_a_rotation_to_a_new_ca_fails_only_admissions_in_flight(
    server: Environment, tmp_path: Path
) -> None:
    volume = tmp_path / "serving-certs"  # /tmp/k8s-webhook-server/serving-certs in the Deployment
    first, second = issue("webhook-ca-1"), issue("webhook-ca-2")
    write_secret_volume(volume, first, ITEMS, generation=1)
    hooks = WebhookServer(host="127.0.0.1", port=0, cert_dir=volume, cert_watch_interval=HOUR)
    webhook_managed_by(hooks).for_(Widget).with_validator(AllowAll()).complete()
    client = new_client(server.config)
    clients = Clients(client)
    try:
        async with hooks:
            await client.create(configuration(hooks.url + validate_path(Widget), first.ca_crt))

            async def admitted() -> bool:  # the real server takes the configuration in from a watch
                await client.create(widget("probe"), dry_run=True)
                return True

            await eventually(admitted, timeout=30)
            clients.start()
            await eventually(lambda: clients.succeeded_since(0) >= 30, timeout=60)

            rotation = time.monotonic()
            write_secret_volume(volume, second, ITEMS, generation=2)  # the kubelet's swap
            await eventually(lambda: hooks.cert_watcher.reloads == 1, timeout=30)
            reloaded = time.monotonic()
            vwc = await client.get(ValidatingWebhookConfiguration, "widgets-ca-rotation")
            vwc.webhooks[0].client_config.ca_bundle = base64.b64encode(second.ca_crt).decode()  # type: ignore[index]
            await client.update(vwc)  # the CA injector
            updated = time.monotonic()
            await eventually(lambda: clients.succeeded_since(updated) >= 60, timeout=60)
            await clients.stop()
    finally:
        await clients.stop()
        await client.close()

    done = clients.done
    failed = [a for a in done if a.error is not None]
    # the first admission through the new certificate and CA: the API server has the new caBundle
    has_bundle = min(a.start for a in done if a.start >= updated and a.error is None)
    late = [a for a in failed if a.start >= has_bundle]
    assert late == [], late[0].error
    assert all(a.end >= rotation for a in failed)  # nothing failed before the rotation began
    assert all("certificate" in (a.error or "") or "x509" in (a.error or "") for a in failed), failed[:1]
    if server.real is None:  # the emulator reads caBundle at each call: nothing fails once updated
        assert [a for a in failed if a.start >= updated] == []
    in_flight = [a for a in done if a.end >= rotation and a.start <= has_bundle]
    print(
        f"\n{len(done)} admissions, {len(failed)} failed, all in flight during the rotation "
        f"({len(in_flight)} were); reload {1000 * (reloaded - rotation):.1f} ms after the swap, "
        f"caBundle update {1000 * (updated - reloaded):.1f} ms, first admission through the new CA "
        f"{1000 * (has_bundle - updated):.1f} ms after it"
    )
