"""The HTTP layer against loopback servers: TLS verification (CA, tls-server-name, insecure), client
certificates, tokens (files re-read after a 401), basic auth, exec plugins, proxy-url; credentials are
sent only over TLS, as client-go does."""

from __future__ import annotations

import asyncio
import base64
import datetime
import json
import ssl
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.core_v1 import Pod
from pyscaffold_op.runtime import ConfigError, RestConfig, load_config, new_client
from pyscaffold_op.runtime.certs.certs import self_signed_cert
from pyscaffold_op.runtime.client.errors import Forbidden, NotFound, ServerError, ServerTimeout, Unauthorized
from pyscaffold_op.runtime.client.execplugin import ExecCredentials
from pyscaffold_op.runtime.client.rest import RestTransport
from pyscaffold_op.runtime.client.restconfig import ExecConfig
from pyscaffold_op.runtime.manager.startup import explain
from pyscaffold_op.runtime.objects.kinds import info_for

from .kubeconfig_helpers import issue_client_cert, make_ca, pem, serve, write_kubeconfig

STATUS_401 = {"kind": "Status", "code": 401, "reason": "Unauthorized"}


def tls_server(
    host: str = "localhost", ips: tuple[str, ...] = ("127.0.0.1",)
) -> tuple[ssl.SSLContext, bytes]:
    """A server context with a certificate from the runtime's own generator, and that certificate."""
    cert, key = self_signed_cert(host, ips)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    from pyscaffold_op.runtime.certs.certs import load_pem_chain

    load_pem_chain(ctx, cert, key)
    return ctx, cert


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def test_token_file_rotation_and_error_mapping(tmp_path: Path) -> None:
    accepted = {"Bearer old"}
    seen: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        seen.append(auth)
        if auth not in accepted:
            return web.json_response(STATUS_401, status=401)
        if request.path.endswith("/missing"):
            return web.json_response({"kind": "Status", "code": 404, "reason": "NotFound"}, status=404)
        return web.json_response({"ok": True})

    ctx, cert = tls_server()
    async with serve(handle, ctx) as port:
        token = tmp_path / "token"
        token.write_text("old")
        kc = write_kubeconfig(
            tmp_path / "kc",
            {"server": f"https://127.0.0.1:{port}", "certificate-authority-data": b64(cert)},
            {"tokenFile": "token"},
        )
        transport = RestTransport(load_config(kc))
        try:
            assert await transport.request("GET", "/api/v1/x") == b'{"ok": true}'
            token.write_text("new")  # the kubelet rotated the service account token
            accepted.clear()
            accepted.add("Bearer new")
            assert await transport.request("GET", "/api/v1/x") == b'{"ok": true}'
            assert seen == ["Bearer old", "Bearer old", "Bearer new"]
            with pytest.raises(NotFound):
                await transport.request("GET", "/api/v1/missing")
            accepted.clear()
            with pytest.raises(Unauthorized):
                await transport.request("GET", "/api/v1/x")
        finally:
            await transport.close()


async def test_tls_verification_server_name_and_insecure(tmp_path: Path) -> None:
    async def handle(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    ctx, cert = tls_server("api.internal", ips=())  # no IP in the certificate
    async with serve(handle, ctx) as port:
        server = f"https://127.0.0.1:{port}"
        cases = {
            "named": RestConfig(server=server, ca_data=cert, tls_server_name="api.internal"),
            "insecure": RestConfig(server=server, insecure=True),
        }
        for name, config in cases.items():
            transport = RestTransport(config)
            try:
                assert await transport.request("GET", "/version") == b'{"ok": true}', name
            finally:
                await transport.close()
        for config in (
            RestConfig(server=server, ca_data=cert),  # 127.0.0.1 is not in the certificate
            RestConfig(server=server),  # the system's roots do not know it
            RestConfig(
                server=server, ca_data=self_signed_cert("api.internal", ())[0], tls_server_name="api.internal"
            ),
        ):
            transport = RestTransport(config)
            try:
                with pytest.raises(ServerError) as caught:
                    await transport.request("GET", "/version")
                assert isinstance(caught.value.__cause__.__cause__, ssl.SSLCertVerificationError)  # type: ignore[union-attr]
            finally:
                await transport.close()


async def test_client_certificates_from_data_and_files(tmp_path: Path) -> None:
    ca = make_ca("client-ca")

    async def handle(request: web.Request) -> web.Response:
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        subject = dict(x[0] for x in peer["subject"]) if peer else {}
        return web.json_response({"user": subject.get("commonName")})

    ctx, cert = tls_server()
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.load_verify_locations(cadata=pem(ca[0]).decode())
    client_cert, client_key = issue_client_cert(ca, "alice")
    (tmp_path / "alice.crt").write_bytes(client_cert)
    (tmp_path / "alice.key").write_bytes(client_key)
    async with serve(handle, ctx) as port:
        cluster = {"server": f"https://127.0.0.1:{port}", "certificate-authority-data": b64(cert)}
        users = {
            "data": {"client-certificate-data": b64(client_cert), "client-key-data": b64(client_key)},
            "files": {"client-certificate": "alice.crt", "client-key": "alice.key"},
        }
        for name, user in users.items():
            transport = RestTransport(load_config(write_kubeconfig(tmp_path / f"kc-{name}", cluster, user)))
            try:
                assert json.loads(await transport.request("GET", "/api")) == {"user": "alice"}, name
            finally:
                await transport.close()
        anonymous = RestTransport(load_config(write_kubeconfig(tmp_path / "kc-none", cluster)))
        try:
            with pytest.raises(ServerError) as caught:  # the server requires a certificate
                await anonymous.request("GET", "/api")
        finally:
            await anonymous.close()
        reason = explain(anonymous, info_for(Pod), caught.value)
        assert reason.startswith(f"cannot connect to {cluster['server']}"), reason
        # the server hangs up without a word (its TLS alert is not always flushed): said as such
        assert reason.endswith("the server closed the connection"), reason


async def test_basic_auth_and_no_credentials_over_plain_http(tmp_path: Path) -> None:
    seen: list[str | None] = []

    async def handle(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization"))
        return web.json_response({})

    ctx, cert = tls_server()
    async with serve(handle, ctx) as tls_port, serve(handle) as plain_port:
        for config in (
            RestConfig(
                server=f"https://127.0.0.1:{tls_port}", ca_data=cert, username="admin", password="s3cret"
            ),
            RestConfig(server=f"http://127.0.0.1:{plain_port}", token="never-in-clear"),
        ):
            transport = RestTransport(config)
            try:
                await transport.request("GET", "/api")
            finally:
                await transport.close()
    assert seen == ["Basic " + b64(b"admin:s3cret"), None]


async def test_proxy_url_carries_the_requests_and_watches(tmp_path: Path) -> None:
    """proxy-url goes through aiohttp (rest_proxy.py): requests, watches and errors as without one."""
    proxied: list[str] = []

    async def proxy(request: web.Request) -> web.StreamResponse:
        proxied.append(str(request.url))  # a forward proxy gets the absolute URL
        if request.path.endswith("/secrets"):
            return web.json_response({"kind": "Status", "code": 403, "reason": "Forbidden"}, status=403)
        if request.query.get("watch") != "true":
            return web.json_response({"via": "proxy"})
        resp = web.StreamResponse()
        await resp.prepare(request)
        await resp.write(b'{"type": "ADDED"}\n{"type": ')
        await resp.write(b'"DELETED"}\n')
        return resp

    async with serve(proxy) as proxy_port:
        kc = write_kubeconfig(
            tmp_path / "kc",
            {"server": "http://kube.invalid:8080/prefix", "proxy-url": f"http://127.0.0.1:{proxy_port}"},
        )
        transport = RestTransport(load_config(kc))
        try:
            assert json.loads(await transport.request("GET", "/api/v1/pods")) == {"via": "proxy"}
            async with transport.stream_lines("/api/v1/pods", {"watch": "true"}) as lines:
                assert [line async for line in lines] == [b'{"type": "ADDED"}', b'{"type": "DELETED"}']
            with pytest.raises(Forbidden):
                await transport.request("GET", "/api/v1/secrets")
        finally:
            await transport.close()
    assert proxied == [
        "http://kube.invalid:8080/prefix/api/v1/pods",
        "http://kube.invalid:8080/prefix/api/v1/pods?watch=true",
        "http://kube.invalid:8080/prefix/api/v1/secrets",
    ]


async def test_through_a_proxy_the_timeout_bounds_silence_not_a_long_answer(tmp_path: Path) -> None:
    """As without a proxy (test_http1pool.py): an answer that keeps arriving past the timeout is read
    whole, one that stops half way fails."""

    async def proxy(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        resp.content_length = 30
        await resp.prepare(request)
        for piece in (b'{"items"', b":[1,2,3,", b"4,5]}", b" " * 9)[: 2 if "stalls" in request.path else 4]:
            await resp.write(piece)
            await asyncio.sleep(0.15)  # 0.6 s in all, three times the timeout
        if "stalls" in request.path:
            await asyncio.sleep(1)  # silent: the client gives up first
        return resp

    async with serve(proxy) as proxy_port:
        kc = write_kubeconfig(
            tmp_path / "kc",
            {"server": "http://kube.invalid:8080", "proxy-url": f"http://127.0.0.1:{proxy_port}"},
        )
        transport = RestTransport(load_config(kc), timeout=0.2)
        try:
            assert json.loads(await transport.request("GET", "/trickles")) == {"items": [1, 2, 3, 4, 5]}
            with pytest.raises(ServerTimeout):
                await transport.request("GET", "/stalls")
        finally:
            await transport.close()


PLUGIN = """#!{python}
import json, os, pathlib, sys
runs = pathlib.Path(os.environ["RUNS_FILE"])
n = len(runs.read_text().splitlines()) + 1 if runs.exists() else 1
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
with runs.open("a") as f:
    f.write(json.dumps({{"args": sys.argv[1:], "info": info, "stdin_tty": sys.stdin.isatty()}}) + "\\n")
status = {{"token": f"tok-{{n}}"}}
if os.environ.get("EXPIRES"):
    status["expirationTimestamp"] = os.environ["EXPIRES"]
print(json.dumps({{"apiVersion": info["apiVersion"], "kind": "ExecCredential", "status": status}}))
"""


def write_plugin(folder: Path) -> Path:
    script = folder / "bin" / "get-token"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(PLUGIN.format(python=sys.executable))
    script.chmod(0o755)
    return script


@pytest.mark.parametrize(
    "api_version", ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"]
)
async def test_exec_plugin_token_cached_and_rerun_after_401(tmp_path: Path, api_version: str) -> None:
    write_plugin(tmp_path)
    runs = tmp_path / "runs.jsonl"
    valid = {"Bearer tok-1"}
    seen: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        auth = request.headers.get("Authorization", "")
        seen.append(auth)
        if auth not in valid:
            return web.json_response(STATUS_401, status=401)
        return web.json_response({})

    ctx, cert = tls_server()
    async with serve(handle, ctx) as port:
        server = f"https://127.0.0.1:{port}"
        kc = write_kubeconfig(
            tmp_path / "kc",
            {"server": server, "certificate-authority-data": b64(cert)},
            {
                "exec": {
                    "apiVersion": api_version,
                    "command": "./bin/get-token",  # relative to the kubeconfig's folder
                    "args": ["--cluster", "dev"],
                    "env": [{"name": "RUNS_FILE", "value": str(runs)}],
                    "provideClusterInfo": True,
                    "interactiveMode": "Never",
                }
            },
        )
        transport = RestTransport(load_config(kc))
        try:
            await transport.request("GET", "/api")
            await transport.request("GET", "/api")  # cached: no expiry given
            assert len(runs.read_text().splitlines()) == 1
            valid.clear()
            valid.add("Bearer tok-2")  # the server stops accepting tok-1 before any expiry
            await transport.request("GET", "/api")
        finally:
            await transport.close()
    assert seen == ["Bearer tok-1", "Bearer tok-1", "Bearer tok-1", "Bearer tok-2"]
    first = json.loads(runs.read_text().splitlines()[0])
    assert first["args"] == ["--cluster", "dev"] and first["stdin_tty"] is False
    assert first["info"]["kind"] == "ExecCredential" and first["info"]["apiVersion"] == api_version
    assert first["info"]["spec"]["interactive"] is False
    cluster = first["info"]["spec"]["cluster"]
    assert cluster["server"] == server and base64.b64decode(cluster["certificate-authority-data"]) == cert


async def test_exec_plugin_expiry_and_failures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = write_plugin(tmp_path)
    monkeypatch.setenv("RUNS_FILE", str(tmp_path / "runs"))
    monkeypatch.setenv("EXPIRES", "2030-01-01T00:10:00Z")
    now = [datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC)]
    plugin = ExecConfig(command=str(script), api_version="client.authentication.k8s.io/v1")
    creds = ExecCredentials(plugin, now=lambda: now[0])
    assert await creds.authorization() == "Bearer tok-1"
    now[0] += datetime.timedelta(minutes=9)
    assert await creds.authorization() == "Bearer tok-1"
    now[0] += datetime.timedelta(minutes=1)  # at expirationTimestamp: run again
    assert await creds.authorization() == "Bearer tok-2" and creds.runs == 2

    missing = ExecCredentials(
        ExecConfig(
            command="no-such-plugin-xyz", api_version=plugin.api_version, install_hint="brew install it"
        )
    )
    with pytest.raises(ConfigError, match="executable no-such-plugin-xyz not found: brew install it"):
        await missing.authorization()
    failing = tmp_path / "fail"
    failing.write_text("#!/bin/sh\nexit 3\n")
    failing.chmod(0o755)
    with pytest.raises(ConfigError, match="failed with exit code 3"):
        await ExecCredentials(
            ExecConfig(command=str(failing), api_version=plugin.api_version)
        ).authorization()
    other = ExecConfig(command=str(script), api_version=plugin.api_version)
    wrong = ExecCredentials(other)
    with pytest.raises(ConfigError, match="plugin returned version"):
        wrong._parse(
            b'{"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential", '
            b'"status": {"token": "x"}}'
        )
    with pytest.raises(ConfigError, match="didn't return a status"):
        wrong._parse(b'{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential"}')


async def test_the_emulators_kubeconfig_loads_and_serves(tmp_path: Path) -> None:
    async with Environment(kubelet=None, kubeconfig_path=tmp_path / "kubeconfig") as env:
        config = load_config(env.kubeconfig_path)
        assert config.server == env.url and config.context_name == "envtest"
        client = new_client(config)
        try:
            from pyscaffold_op.models.core_v1 import Namespace

            names = {ns.metadata.name for ns in await client.list(Namespace)}
            assert "default" in names
        finally:
            await client.close()


async def test_request_targets_keep_the_path_prefix_and_the_query() -> None:
    """Kubernetes paths go out as they are, others percent-quoted; a server's path prefix (Rancher's
    `/k8s/clusters/x`) and the query survive, as the server parses them."""
    seen: list[tuple[str, str, dict[str, str]]] = []

    async def handle(request: web.Request) -> web.Response:
        seen.append((request.raw_path.partition("?")[0], request.path, dict(request.query)))
        return web.json_response({})

    async with serve(handle) as port:
        rancher = RestTransport(RestConfig(server=f"http://127.0.0.1:{port}/k8s/clusters/c-1/"))
        try:
            selector = {"labelSelector": "app in (a,b),tier!=x", "limit": 5, "dryRun": None}
            await rancher.request("GET", "/api/v1/namespaces/ns/pods", params=selector)
            await rancher.request("GET", "/apis/g/v1/xs/system:node:a")
            await rancher.request("GET", "/api/v1/x y")  # not a Kubernetes name: quoted
        finally:
            await rancher.close()
    prefix = "/k8s/clusters/c-1"
    assert seen == [
        (f"{prefix}/api/v1/namespaces/ns/pods",) * 2
        + ({"labelSelector": "app in (a,b),tier!=x", "limit": "5"},),
        (f"{prefix}/apis/g/v1/xs/system:node:a",) * 2 + ({},),
        (f"{prefix}/api/v1/x%20y", f"{prefix}/api/v1/x y", {}),
    ]


async def test_no_cookies_are_kept_between_requests() -> None:
    """Like client-go (no cookie jar): a Set-Cookie from the server is not sent back."""
    cookies: list[str | None] = []

    async def handle(request: web.Request) -> web.Response:
        cookies.append(request.headers.get("Cookie"))
        response = web.json_response({"ok": True})
        response.set_cookie("session", "abc")
        return response

    async with serve(handle) as port:
        # a host name: aiohttp's default jar would keep this cookie (it ignores cookies of IP hosts)
        transport = RestTransport(RestConfig(server=f"http://localhost:{port}"))
        try:
            await transport.request("GET", "/api/v1/x")
            await transport.request("GET", "/api/v1/x")
        finally:
            await transport.close()
    assert cookies == [None, None]


TLS_ON_UVLOOP = [
    test_token_file_rotation_and_error_mapping,
    test_tls_verification_server_name_and_insecure,
    test_client_certificates_from_data_and_files,
]


@pytest.mark.parametrize("case", TLS_ON_UVLOOP, ids=[c.__name__.removeprefix("test_") for c in TLS_ON_UVLOOP])
def test_tls_on_uvloop(case: Any, tmp_path: Path) -> None:
    """The real-handshake TLS cases on uvloop too: the loop `runtime.run` starts operators on."""
    uvloop = pytest.importorskip("uvloop")
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(case(tmp_path))
