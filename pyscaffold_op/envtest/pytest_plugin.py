"""pytest fixtures for projects tested against the emulator.

    # tests/conftest.py
    pytest_plugins = ["pyscaffold_op.envtest.pytest_plugin"]

Fixtures: `envtest_crd_paths` (override to choose CRD folders), `envtest_kubelet` (override with
`KubeletSimulator(rule=...)` or None), `envtest_workloads` (None: override with `Workloads()` to run
Deployments, Jobs, ... as a cluster would), `envtest` (a running `Environment`), `kubeconfig` (its
path as a string) and `client` (a `pyscaffold_op.runtime` client for it). pytest's log output shows
the runtime's structured fields (`error=... controller=... request=...`) after each message.

Webhooks: `webhook_server` is a running `pyscaffold_op.runtime.webhook.WebhookServer` on 127.0.0.1 with
its own CA, registered with the emulator as Service `system/webhook-service` (what
config/webhook/manifests.yaml and the CRDs' conversion webhooks name), with the configurations of
`envtest_webhook_paths` (default `config/webhook/manifests.yaml`) installed. Register handlers on it
(`webhook_managed_by(webhook_server)...`) and the emulator calls them over HTTPS.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from pyscaffold_op.envtest import Environment, KubeletSimulator, Workloads

_PYTEST_LOG_HANDLERS = ("caplog_handler", "report_handler", "log_cli_handler", "log_file_handler")


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Show the runtime's structured log fields in pytest's log output: controller-runtime's
    "Reconciler error" carries its error as a field, which pytest's `%(message)s` format would drop."""
    from pyscaffold_op.runtime.log import FieldsFormatter

    plugin = session.config.pluginmanager.get_plugin("logging-plugin")
    for name in _PYTEST_LOG_HANDLERS:
        handler = getattr(plugin, name, None)
        formatter = getattr(handler, "formatter", None)
        if formatter is not None and not isinstance(formatter, FieldsFormatter):
            handler.setFormatter(FieldsFormatter(formatter))  # type: ignore[union-attr]


@pytest.fixture
def envtest_crd_paths(request: pytest.FixtureRequest) -> list[Path]:
    """`<rootdir>/config/crd/bases` when it exists, else no CRDs."""
    bases = Path(str(request.config.rootpath)) / "config" / "crd" / "bases"
    return [bases] if bases.is_dir() else []


@pytest.fixture
def envtest_kubelet() -> KubeletSimulator | None:
    return KubeletSimulator()


@pytest.fixture
def envtest_workloads() -> Workloads | None:
    """No workload controllers, like envtest's bare API server; return `Workloads()` to opt in."""
    return None


@pytest.fixture
async def envtest(
    envtest_crd_paths: list[Path],
    envtest_kubelet: KubeletSimulator | None,
    envtest_workloads: Workloads | None,
) -> AsyncIterator[Environment]:
    async with Environment(
        crd_paths=envtest_crd_paths, kubelet=envtest_kubelet, workloads=envtest_workloads or False
    ) as env:
        yield env


@pytest.fixture
def envtest_webhook_paths(request: pytest.FixtureRequest) -> list[Path]:
    """`<rootdir>/config/webhook/manifests.yaml` when it exists, else no webhook configurations."""
    manifest = Path(str(request.config.rootpath)) / "config" / "webhook" / "manifests.yaml"
    return [manifest] if manifest.is_file() else []


@pytest.fixture
async def webhook_server(envtest: Environment, envtest_webhook_paths: list[Path]) -> AsyncIterator[Any]:
    from pyscaffold_op.runtime.webhook import WebhookServer

    server = WebhookServer(host="127.0.0.1", port=0)
    async with server:
        envtest.webhook_service_url("system", "webhook-service", server.url, ca=server.ca_bundle)
        if envtest_webhook_paths:
            await envtest.install_webhooks(envtest_webhook_paths)
        yield server


@pytest.fixture
def kubeconfig(envtest: Environment) -> str:
    return str(envtest.kubeconfig_path)


@pytest.fixture
async def client(envtest: Environment) -> AsyncIterator[Any]:
    # imported here to keep the plugin cheap to load; a broken runtime must fail the test, not skip it
    from pyscaffold_op.runtime import new_client

    c = new_client(envtest.config)
    try:
        yield c
    finally:
        await c.close()
