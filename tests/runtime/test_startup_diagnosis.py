"""A manager that cannot start says why in one line, as controller-runtime does, and names the fix."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.core_v1 import Pod
from pyscaffold_op.runtime import (
    BindError,
    CacheSyncTimeout,
    Manager,
    ManagerOptions,
    NotFound,
    Request,
    load_config,
    parse_duration,
)
from pyscaffold_op.runtime.client.rest import RestTransport
from pyscaffold_op.runtime.manager.startup import explain
from pyscaffold_op.runtime.objects.kinds import info_for

from .conftest import make_manager
from .widgets import Widget

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster: {{server: "{server}", insecure-skip-tls-verify: true}}
users:
- name: nobody
  user: {{token: abc}}
contexts:
- name: envtest
  context: {{cluster: nowhere, user: nobody}}
current-context: envtest
"""


async def _noop(_request: Request) -> None:
    return None


@pytest.fixture
def refused_kubeconfig(tmp_path: Path) -> Path:
    # Port 1 on loopback: nothing listens there, so every connection is refused at once.
    path = tmp_path / "kc"
    path.write_text(KUBECONFIG.format(server="https://127.0.0.1:1"))
    return path


async def test_uninstalled_crd_is_no_matches_for_kind_then_exit(caplog: pytest.LogCaptureFixture) -> None:
    async with Environment(kubelet=None) as env:  # no CRDs installed
        mgr = make_manager(env, cache_sync_timeout=3.0)
        mgr.builder().for_(Widget).named("widgets").complete(_noop)
        with (
            caplog.at_level(logging.WARNING, logger="pyscaffold_op.runtime.informer"),
            pytest.raises(CacheSyncTimeout) as raised,
        ):
            await mgr.start(install_signal_handlers=False)
    expected = 'no matches for kind "Widget" in version "test.pyop.io/v1"; run make install'
    assert str(raised.value) == f"caches did not sync within 3s: {expected}"
    # Said as soon as the first list fails, and once, not at every retry of the backoff (the manager's
    # stall report repeats it once more, see below).
    said = [
        r.getMessage() for r in caplog.records if expected in r.getMessage() and r.name.endswith("informer")
    ]
    assert len(said) == 1, said


async def test_a_stalled_start_says_how_long_the_manager_still_waits(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 27: `make run` before `make install` warned, then waited 2 minutes saying nothing more."""
    async with Environment(kubelet=None) as env:  # no CRDs installed
        mgr = make_manager(env, cache_sync_timeout=2.0)
        mgr.builder().for_(Widget).named("widgets").complete(_noop)
        with (
            caplog.at_level(logging.WARNING, logger="pyscaffold_op.runtime.manager"),
            pytest.raises(CacheSyncTimeout),
        ):
            await mgr.start(install_signal_handlers=False)
    said = [r.getMessage() for r in caplog.records if r.name == "pyscaffold_op.runtime.manager"]
    assert said == [
        'caches not synced after 1s: no matches for kind "Widget" in version "test.pyop.io/v1"; run make '
        "install; waiting up to 2s in all (--cache-sync-timeout), then exiting; Ctrl-C stops now"
    ]


async def test_refused_connection_names_the_server_kubeconfig_and_context(refused_kubeconfig: Path) -> None:
    mgr = Manager(
        load_config(kubeconfig=refused_kubeconfig),
        ManagerOptions(health_probe_bind_address="0", cache_sync_timeout=2.0),
    )
    mgr.builder().for_(Pod).named("pods").complete(_noop)
    mgr.builder().for_(Widget).named("widgets").complete(_noop)
    with pytest.raises(CacheSyncTimeout) as raised:
        await mgr.start(install_signal_handlers=False)
    source = f"https://127.0.0.1:1 (kubeconfig {refused_kubeconfig}, context envtest)"
    reason = f"cannot connect to {source}: connection refused"
    # Both kinds fail alike: the reason appears once.
    assert str(raised.value) == f"caches did not sync within 2s: {reason}"


def test_built_in_kind_not_served_is_not_sent_to_make_install(refused_kubeconfig: Path) -> None:
    transport = RestTransport(load_config(kubeconfig=refused_kubeconfig))
    missing = NotFound("the server could not find the requested resource")
    assert explain(transport, info_for(Pod), missing) == 'no matches for kind "Pod" in version "v1"'


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.mark.parametrize("option", ["health_probe_bind_address", "metrics_bind_address"])
async def test_taken_port_names_the_flag_to_change(
    refused_kubeconfig: Path, taken_port: int, option: str
) -> None:
    address = f"127.0.0.1:{taken_port}"
    options = {"health_probe_bind_address": "0", "metrics_bind_address": "0", option: address}
    mgr = Manager(load_config(kubeconfig=refused_kubeconfig), ManagerOptions(**options))
    with pytest.raises(BindError) as raised:
        await mgr.start(install_signal_handlers=False)
    flag = "--" + option.replace("_", "-")
    assert raised.value.hint() == (
        f"{flag} {address}: address already in use; "
        f'pass another port, e.g. make run ARGS="{flag}=127.0.0.1:0"'
    )


def test_durations_are_go_durations() -> None:
    assert parse_duration("2m") == 120.0
    assert parse_duration("1m30s") == 90.0
    assert parse_duration("500ms") == 0.5
    with pytest.raises(ValueError, match="not a duration like 30s"):
        parse_duration("90")


async def test_taken_webhook_port_names_webhook_port(refused_kubeconfig: Path, taken_port: int) -> None:
    from pyscaffold_op.runtime.webhook import WebhookServer
    from pyscaffold_op.runtime.webhook.admission import Admission, AdmissionResponse

    async def allow(_request: object) -> AdmissionResponse:
        return AdmissionResponse.allow()

    options = ManagerOptions(health_probe_bind_address="0", metrics_bind_address="0")
    mgr = Manager(load_config(kubeconfig=refused_kubeconfig), options)
    mgr.webhook_server = WebhookServer(host="127.0.0.1", port=taken_port, generate_missing=True)
    mgr.webhook_server.register("/validate", Admission(allow))
    with pytest.raises(BindError) as raised:
        await mgr.start(install_signal_handlers=False)
    assert raised.value.hint() == (
        f"--webhook-port 127.0.0.1:{taken_port}: address already in use; "
        'pass another port, e.g. make run ARGS="--webhook-port=0"'
    )


async def test_connection_failures_say_why_in_one_line() -> None:
    """An untrusted certificate, a server that hangs up, a name that does not resolve: each one line,
    from the client's typed errors (the certificate error stays the cause, as the standard library's)."""
    import asyncio
    import ssl

    from pyscaffold_op.runtime import RestConfig, ServerError
    from pyscaffold_op.runtime.certs.certs import load_pem_chain, self_signed_cert

    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.close()

    cert, key = self_signed_cert("localhost", ("127.0.0.1",))
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    load_pem_chain(tls, cert, key)
    untrusted = await asyncio.start_server(hang_up, "127.0.0.1", 0, ssl=tls)
    plain = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    try:
        tls_port, plain_port = (s.sockets[0].getsockname()[1] for s in (untrusted, plain))
        try:
            socket.getaddrinfo("no-such-host.invalid", 6443)
            pytest.skip("this resolver answers for .invalid names")
        except socket.gaierror as err:
            resolver = err.strerror.lower()
        cases = {
            f"https://127.0.0.1:{tls_port}": "TLS certificate not trusted: [SSL: CERTIFICATE_VERIFY_FAILED]",
            f"http://127.0.0.1:{plain_port}": "the server closed the connection",
            "http://no-such-host.invalid:6443": resolver,
        }
        for server, reason in cases.items():
            transport = RestTransport(RestConfig(server=server))
            try:
                with pytest.raises(ServerError) as caught:
                    await transport.request("GET", "/api/v1/pods")
            finally:
                await transport.close()
            line = explain(transport, info_for(Pod), caught.value)
            assert line.startswith(f"cannot connect to {server}: {reason}"), line
            if server.startswith("https"):
                assert isinstance(caught.value.__cause__.__cause__, ssl.SSLCertVerificationError)  # type: ignore[union-attr]
    finally:
        untrusted.close()
        plain.close()


async def test_the_first_signal_says_a_second_one_stops_at_once(
    env: Environment, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 27: the first Ctrl-C during a long reconcile waited 30 s without saying a second one stops."""
    import signal

    mgr = make_manager(env, graceful_shutdown_timeout=30.0)
    with caplog.at_level(logging.INFO, logger="pyscaffold_op.runtime.manager"):
        mgr._on_signal(signal.SIGINT)
    assert [r.getMessage() for r in caplog.records] == [
        "received SIGINT, shutting down gracefully: waiting up to 30s for in-flight reconciles; Ctrl-C again "
        "to stop now"
    ]
