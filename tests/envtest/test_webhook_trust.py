"""How the emulator reaches an admission webhook over TLS, judged by kube-apiserver: a leaf certificate
in `caBundle` is trusted as Go trusts it (envtest puts the webhook's serving certificate there), and a
webhook that cannot be reached fails with Go's words (`dial tcp ...: connect: connection refused`,
`x509: ...`), not aiohttp's. Each case runs against the emulator and, with the oracle binaries,
against the real kube-apiserver, whose answer must be the same."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import ssl
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from aiohttp import web

from pyscaffold_op.envtest import Environment
from pyscaffold_op.envtest.server.pki import Authority, CertKey
from tests.conformance.conftest import assets, have_oracle

Send = Callable[[str, str, Any], "asyncio.Future[tuple[int, Any]]"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Hook:
    """An HTTPS server that allows every AdmissionReview, presenting `serving`."""

    def __init__(self, serving: CertKey) -> None:
        self.serving = serving
        self.port = _free_port()
        self.calls = 0
        self._runner: web.AppRunner | None = None

    async def _review(self, request: web.Request) -> web.Response:
        self.calls += 1
        review = await request.json()
        uid = review["request"]["uid"]
        answer = {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {"uid": uid, "allowed": True},
        }
        return web.json_response(answer)

    async def start(self) -> None:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        with tempfile.TemporaryDirectory() as tmp:
            cert, key = Path(tmp) / "tls.crt", Path(tmp) / "tls.key"
            cert.write_bytes(self.serving.cert_pem)
            key.write_bytes(self.serving.key_pem)
            ctx.load_cert_chain(cert, key)
        app = web.Application()
        app.router.add_post("/validate", self._review)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port, ssl_context=ctx).start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


def _configuration(name: str, url: str, ca_bundle: bytes) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [
            {
                "name": "trust.pyop.io",
                "clientConfig": {"url": url, "caBundle": base64.b64encode(ca_bundle).decode()},
                "rules": [
                    {
                        "operations": ["CREATE"],
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "resources": ["configmaps"],
                    }
                ],
                "objectSelector": {"matchLabels": {"trust-test": name}},
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "failurePolicy": "Fail",
            }
        ],
    }


@pytest.fixture(scope="module")
def real() -> Iterator[Any]:
    if not have_oracle():
        yield None
        return
    from pyscaffold_op.envtest.controlplane import ControlPlane

    cp = ControlPlane(assets=assets()).start()
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture
async def servers(real: Any) -> AsyncIterator[dict[str, Send]]:
    """`name -> send(method, path, body)`: the emulator, and the real kube-apiserver when installed."""
    async with Environment(kubelet=None) as env, httpx2.AsyncClient(base_url=env.url, timeout=30) as http:

        async def emulator(method: str, path: str, body: Any) -> tuple[int, Any]:
            r = await http.request(method, path, json=body)
            return r.status_code, r.json()

        sends: dict[str, Any] = {"emulator": emulator}
        if real is not None:

            async def kube_apiserver(method: str, path: str, body: Any) -> tuple[int, Any]:
                return await asyncio.to_thread(real.request, method, path, body)

            sends["kube-apiserver"] = kube_apiserver
        yield sends


async def _create_through(
    send: Send, name: str, url: str, ca_bundle: bytes, done: Callable[[int], bool]
) -> tuple[int, Any]:
    """Install a webhook for labelled ConfigMaps and create ConfigMaps until `done(status)` (the
    real server's webhook informer sees a new configuration a moment after it is stored), then
    remove the webhook."""
    configs = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
    status, body = await send("POST", configs, _configuration(name, url, ca_bundle))
    assert status == 201, body
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"generateName": "t-", "labels": {"trust-test": name}},
    }
    try:
        for _ in range(100):
            status, body = await send("POST", "/api/v1/namespaces/default/configmaps", cm)
            if done(status):
                break
            await asyncio.sleep(0.1)
        return status, body
    finally:
        await send("DELETE", f"{configs}/{name}", None)


async def test_leaf_certificate_in_ca_bundle_is_trusted(servers: dict[str, Send]) -> None:
    authority = Authority.new("trust-ca")
    leaf = authority.serving()
    hook = Hook(leaf)
    await hook.start()
    try:
        for server, send in servers.items():
            before = hook.calls
            url = f"https://127.0.0.1:{hook.port}/validate"
            status, body = await _create_through(
                send,
                f"leaf-{server}",
                url,
                leaf.cert_pem,
                lambda s, before=before: s != 201 or hook.calls > before,
            )
            assert status == 201 and hook.calls > before, (server, body)
    finally:
        await hook.stop()


def _failure(server: str, status: int, body: Any) -> str:
    assert status == 500, (server, json.dumps(body))
    return str(body["message"]).replace('failed calling webhook "trust.pyop.io"', "<webhook>")


async def _same_failure(servers: dict[str, Send], name: str, url: str, ca_bundle: bytes) -> str:
    messages = {}
    for server, send in servers.items():
        status, body = await _create_through(send, f"{name}-{server}", url, ca_bundle, lambda s: s != 201)
        messages[server] = _failure(server, status, body)
    assert len(set(messages.values())) == 1, messages
    return next(iter(messages.values()))


async def test_connection_refused_in_go_words(servers: dict[str, Send]) -> None:
    port = _free_port()
    message = await _same_failure(
        servers, "refused", f"https://127.0.0.1:{port}/validate", Authority.new().cert_pem
    )
    assert message == (
        f'Internal error occurred: <webhook>: failed to call webhook: Post "https://127.0.0.1:{port}/validate'
        f'?timeout=10s": dial tcp 127.0.0.1:{port}: connect: connection refused'
    )


async def test_unknown_authority_in_go_words(servers: dict[str, Send]) -> None:
    hook = Hook(Authority.new("one").serving())
    await hook.start()
    try:
        message = await _same_failure(
            servers, "unknown", f"https://127.0.0.1:{hook.port}/validate", Authority.new("two").cert_pem
        )
    finally:
        await hook.stop()
    assert message.endswith(
        ": tls: failed to verify certificate: x509: certificate signed by unknown authority"
    )


async def test_wrong_host_in_go_words(servers: dict[str, Send]) -> None:
    authority = Authority.new("hosts")
    hook = Hook(authority.serving(hosts=("example.com",), ips=()))
    await hook.start()
    try:
        message = await _same_failure(
            servers, "host", f"https://127.0.0.1:{hook.port}/validate", authority.cert_pem
        )
    finally:
        await hook.stop()
    assert message.endswith(
        ": tls: failed to verify certificate: x509: cannot validate certificate for 127.0.0.1 "
        "because it doesn't contain any IP SANs"
    )
