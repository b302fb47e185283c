"""pytest fixtures for projects tested against the emulator (docs/envtest.md, "The pytest fixtures").

pytest loads this plugin wherever pyscaffold-op is installed (its `pytest11` entry point, named as this
module); a conftest line `pytest_plugins = ["pyscaffold_op.envtest.pytest_plugin"]` still works and
does not register it twice; `pytest -p no:pyscaffold_op.envtest.pytest_plugin` turns it off. Loading it
imports nothing beyond pytest: the emulator (the `envtest` extra) is imported when a fixture runs.

Fixtures: `envtest_crd_paths` (override to choose CRD folders), `envtest_kubelet` (override with
`KubeletSimulator(rule=...)` or None), `envtest_workloads` (None: override with `Workloads()` to run
Deployments, Jobs, ... as a cluster would), `envtest_authorization` ("AlwaysAllow": override with
"RBAC" to test your role.yaml), `envtest` (a running `Environment`), `kubeconfig` (its
path as a string) and `client` (a `pyscaffold_op.runtime` client for it). pytest's log output shows
the runtime's structured fields (`error=... controller=... request=...`) after each message.

Suite-scoped: `envtest_suite` is one server for the whole session (its own thread; CRDs installed
once), `envtest_namespace` a fresh namespace of it per test and `suite_client` a client whose default
namespace is that one. A test's namespaced objects are gone for the next test; cluster-scoped
objects, CRDs and webhook configurations it adds are not (docs/envtest.md, "One server per suite").
pytest's header names the server: `envtest: emulator (pyop X.Y.Z)` or
`envtest: kube-apiserver vX.Y.Z + etcd at <folder>`.

Real mode: with `PYOP_ENVTEST=real` (or `pytest --envtest=real`), `envtest` is the real kube-apiserver +
etcd from `PYOP_ENVTEST_ASSETS` or `KUBEBUILDER_ASSETS` (pyop's `make oracles` builds them), and the
same fixtures work against it. What only the emulator simulates (its kubelet, workload controllers,
garbage collector, fault injection, review policy) is skipped with a reason naming it, never run
against a server that lacks it. Cluster mode (`PYOP_ENVTEST=cluster`, `--envtest=cluster`) adds
kube-controller-manager, kube-scheduler and kwok's fake nodes from the same folder: Pods run and the
real controllers act. Mark a test the plugin cannot see through: `@pytest.mark.needs_cluster("why")`
when it needs a kubelet or a controller-manager (skipped in real mode only),
`@pytest.mark.emulator_only("why")` when it needs what only the emulator has (fault injection, a
kubelet rule, a fake clock; skipped in real and cluster mode).

Webhooks: `webhook_server` is a running `pyscaffold_op.runtime.webhook.WebhookServer` on 127.0.0.1 with
its own CA, registered with the emulator as Service `system/webhook-service` (what
config/webhook/manifests.yaml and the CRDs' conversion webhooks name), with the configurations of
`envtest_webhook_paths` (default `config/webhook/manifests.yaml`) installed. Register handlers on it
(`webhook_managed_by(webhook_server)...`) and the emulator calls them over HTTPS.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pyscaffold_op.envtest.modes import LABELS, MODES

if TYPE_CHECKING:
    from pyscaffold_op.envtest import Environment, KubeletSimulator, Workloads
    from pyscaffold_op.runtime import Client
    from pyscaffold_op.runtime.webhook import WebhookServer

MODE_ENV = "PYOP_ENVTEST"

_PYTEST_LOG_HANDLERS = ("caplog_handler", "report_handler", "log_cli_handler", "log_file_handler")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--envtest",
        choices=MODES,
        default=None,
        help="envtest on pyop's emulator (default), the real kube-apiserver + etcd, or a cluster "
        f"(those plus kube-controller-manager, kube-scheduler and kwok's fake nodes) (${MODE_ENV})",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "emulator_only(reason): needs a part only pyop's emulator simulates; skipped in real and "
        "cluster mode",
    )
    config.addinivalue_line(
        "markers",
        "needs_cluster(reason): needs a kubelet or kube-controller-manager (the emulator simulates them, "
        "cluster mode runs them); skipped in real mode",
    )


def pytest_report_header(config: pytest.Config) -> str:
    """Which server the envtest fixtures run: `envtest: emulator (pyop X.Y.Z)`, in real mode
    `envtest: kube-apiserver vX.Y.Z + etcd at <folder>`, in cluster mode the same plus its parts."""
    mode = envtest_mode(config)
    if mode == "emulator":
        from pyscaffold_op import __version__

        return f"envtest: emulator (pyop {__version__})"
    from pyscaffold_op.envtest.controlplane import ControlPlaneError, apiserver_version, assets_dir

    parts = " + etcd" if mode == "real" else " + etcd, kube-controller-manager, kube-scheduler, kwok"
    try:
        return f"envtest: kube-apiserver {apiserver_version()}{parts} at {assets_dir()}"
    except ControlPlaneError as err:
        return f"envtest: {LABELS[mode]}, not usable: {err}"


def envtest_mode(config: pytest.Config) -> str:
    """What `envtest` runs: `--envtest=...`, else `$PYOP_ENVTEST`, else "emulator"."""
    import os

    chosen = config.getoption("--envtest", default=None) or os.environ.get(MODE_ENV) or "emulator"
    if chosen not in MODES:
        raise pytest.UsageError(f"{MODE_ENV}={chosen}: expected one of {', '.join(MODES)}")
    return str(chosen)


def real_mode(config: pytest.Config) -> bool:
    """Whether `envtest` runs real Kubernetes processes (real or cluster mode), not the emulator."""
    return envtest_mode(config) != "emulator"


def pytest_runtest_setup(item: pytest.Item) -> None:
    mode = envtest_mode(item.config)
    for name, skipped_in in (("emulator_only", ("real", "cluster")), ("needs_cluster", ("real",))):
        marker = item.get_closest_marker(name)
        if marker is not None and mode in skipped_in:
            reason = marker.args[0] if marker.args else marker.kwargs.get("reason", name.replace("_", " "))
            pytest.skip(f"{LABELS[mode]}: {reason}")


def _emulator_only(err: BaseException) -> bool:
    """Whether `err` is real mode's EmulatorOnly (its module is loaded once real mode could raise it)."""
    realmode = sys.modules.get("pyscaffold_op.envtest.realmode")
    return realmode is not None and isinstance(err, realmode.EmulatorOnly)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    try:
        return (yield)
    except Exception as err:
        if not _emulator_only(err):
            raise
        pytest.skip(str(err))


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: pytest.FixtureRequest) -> Any:
    try:
        return (yield)
    except Exception as err:
        if not _emulator_only(err):
            raise
        pytest.skip(str(err))


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


@pytest.fixture(scope="session")
def envtest_crd_paths(request: pytest.FixtureRequest) -> list[Path]:
    """`<rootdir>/config/crd/bases` when it exists, else no CRDs (session-scoped, so `envtest_suite`
    can use it too; an override may have any scope `envtest_suite` does not use)."""
    bases = Path(str(request.config.rootpath)) / "config" / "crd" / "bases"
    return [bases] if bases.is_dir() else []


@pytest.fixture
def envtest_kubelet(request: pytest.FixtureRequest) -> KubeletSimulator | None:
    """The kubelet simulator (Pods run, end, log); none in real mode, where nothing runs Pods, and in
    cluster mode, where kwok runs them."""
    from pyscaffold_op.envtest import KubeletSimulator

    return None if real_mode(request.config) else KubeletSimulator()


@pytest.fixture
def envtest_workloads() -> Workloads | None:
    """No workload controllers, like envtest's bare API server; return `Workloads()` to opt in."""
    return None


@pytest.fixture(scope="session")
def envtest_authorization() -> str:
    """`"AlwaysAllow"`; return `"RBAC"` to authorize every request against the stored Roles and
    bindings (HTTPS, `envtest.add_user(...)` tokens: docs/envtest.md, "Testing your RBAC"). The real
    kube-apiserver always authorizes with RBAC."""
    return "AlwaysAllow"


@pytest.fixture
async def envtest(
    request: pytest.FixtureRequest,
    envtest_crd_paths: list[Path],
    envtest_kubelet: KubeletSimulator | None,
    envtest_workloads: Workloads | None,
    envtest_authorization: str,
) -> AsyncIterator[Environment]:
    """A running API server (the emulator; real mode: kube-apiserver + etcd; cluster mode: a cluster)
    with the CRDs of `envtest_crd_paths` installed, for one test; stopped and forgotten after it."""
    from pyscaffold_op.envtest import Environment

    async with Environment(
        crd_paths=envtest_crd_paths,
        kubelet=envtest_kubelet,
        workloads=envtest_workloads or False,
        mode=envtest_mode(request.config),
        authorization=envtest_authorization,
    ) as env:
        yield env


@pytest.fixture(scope="session")
def envtest_suite_workloads() -> bool:
    """Whether `envtest_suite` runs the workload controllers (`Workloads()`); default False."""
    return False


@pytest.fixture(scope="session")
def envtest_suite(
    request: pytest.FixtureRequest,
    envtest_crd_paths: list[Path],
    envtest_authorization: str,
    envtest_suite_workloads: bool,
) -> Iterator[Environment]:
    """One API server for the whole test session, with the CRDs of `envtest_crd_paths` installed once
    (the emulator with its kubelet simulator; real mode: kube-apiserver + etcd; cluster mode: a
    cluster, whose kwok runs Pods). It runs on its own
    thread, so tests on any event loop reach it. Use it with `envtest_namespace` (a fresh namespace
    per test) and `suite_client`: what a test creates in its namespace is gone for the next one;
    cluster-scoped objects, CRDs and webhook configurations a test adds stay (docs/envtest.md)."""
    from pyscaffold_op.envtest import Environment, KubeletSimulator

    mode = envtest_mode(request.config)
    env = Environment(
        crd_paths=envtest_crd_paths,
        kubelet=KubeletSimulator() if mode == "emulator" else None,
        workloads=envtest_suite_workloads,
        mode=mode,
        authorization=envtest_authorization,
    )
    env.start_in_thread(timeout=30 if mode == "emulator" else 180)
    try:
        yield env
    finally:
        env.stop(timeout=60)


@pytest.fixture
async def envtest_namespace(envtest_suite: Environment, request: pytest.FixtureRequest) -> AsyncIterator[str]:
    """A namespace of `envtest_suite` made for this test (named after it), deleted after it. The
    emulator's namespace controller then removes what is in it; the real server has none, so there
    the namespace stays Terminating (harmless: the next test gets another one)."""
    from pyscaffold_op.apimachinery import ObjectMeta
    from pyscaffold_op.models.core_v1 import Namespace
    from pyscaffold_op.runtime import new_client

    async with _closing(new_client(envtest_suite.config)) as admin:
        created = await admin.create(Namespace(metadata=ObjectMeta(generate_name=_namespace_prefix(request))))
        name = str(created.metadata.name)
        try:
            yield name
        finally:
            await admin.delete(Namespace, name)


@pytest.fixture
async def suite_client(envtest_suite: Environment, envtest_namespace: str) -> AsyncIterator[Client]:
    """A `pyscaffold_op.runtime.Client` of `envtest_suite` whose default namespace is the test's own
    (`envtest_namespace`): a namespaced object created without a namespace lands there."""
    import dataclasses

    from pyscaffold_op.runtime import new_client

    async with _closing(
        new_client(dataclasses.replace(envtest_suite.config, namespace=envtest_namespace))
    ) as c:
        yield c


def _namespace_prefix(request: pytest.FixtureRequest) -> str:
    """`test-<the test's name as a DNS label>-` (generateName adds 5 characters)."""
    import re

    slug = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower().removeprefix("test_")).strip("-")
    return f"test-{slug[:40].rstrip('-')}-"


class _closing:
    """`async with` for a runtime client: closed whatever the test did."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def __aenter__(self) -> Client:
        return self.client

    async def __aexit__(self, *exc: object) -> None:
        await self.client.close()


@pytest.fixture
def envtest_webhook_paths(request: pytest.FixtureRequest) -> list[Path]:
    """`<rootdir>/config/webhook/manifests.yaml` when it exists, else no webhook configurations."""
    manifest = Path(str(request.config.rootpath)) / "config" / "webhook" / "manifests.yaml"
    return [manifest] if manifest.is_file() else []


@pytest.fixture
async def webhook_server(
    envtest: Environment, envtest_webhook_paths: list[Path]
) -> AsyncIterator[WebhookServer]:
    """A running webhook server on 127.0.0.1 with its own CA, which `envtest` calls for Service
    `system/webhook-service`, with the configurations of `envtest_webhook_paths` installed."""
    from pyscaffold_op.runtime.webhook import WebhookServer

    server = WebhookServer(host="127.0.0.1", port=0)
    async with server:
        envtest.webhook_service_url("system", "webhook-service", server.url, ca=server.ca_bundle)
        if envtest_webhook_paths:
            await envtest.install_webhooks(envtest_webhook_paths)
        yield server


@pytest.fixture
def kubeconfig(envtest: Environment) -> str:
    """The path of a kubeconfig file for `envtest` (for kubectl, other clients, a manager's --kubeconfig)."""
    return str(envtest.kubeconfig_path)


@pytest.fixture
async def client(envtest: Environment) -> AsyncIterator[Client]:
    """A `pyscaffold_op.runtime.Client` of `envtest` (reads go to the server, no cache); closed after it."""
    # imported here to keep the plugin cheap to load; a broken runtime must fail the test, not skip it
    from pyscaffold_op.runtime import new_client

    c = new_client(envtest.config)
    try:
        yield c
    finally:
        await c.close()
