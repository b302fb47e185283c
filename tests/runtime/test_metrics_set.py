"""A running manager's /metrics against controller-runtime's metric set (issue 29): the same family names,
types, label names and buckets, and no `*_created` series.

The table below is copied from controller-runtime v0.24.1 (kubernetes-sigs/controller-runtime at tag
v0.24.1): pkg/internal/controller/metrics/metrics.go, pkg/internal/metrics/workqueue.go,
pkg/metrics/client_go_adapter.go, pkg/metrics/leaderelection.go, pkg/webhook/internal/metrics/metrics.go,
pkg/webhook/admission/metrics/metrics.go, pkg/webhook/conversion/metrics/metrics.go and
pkg/certwatcher/metrics/metrics.go. It is kept apart from the runtime's own table on purpose."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import ApiError, Client, Controller, Request, RuntimeMetrics
from pyscaffold_op.runtime.certs import certs
from pyscaffold_op.runtime.client import rest
from pyscaffold_op.runtime.client.rest import RestTransport
from pyscaffold_op.runtime.client.restconfig import RestConfig
from pyscaffold_op.runtime.servers.metrics import controller_runtime_metrics
from pyscaffold_op.runtime.webhook import WebhookServer, validate_path, webhook_managed_by, write_local_certs
from pyscaffold_op.testing import eventually

from .conftest import make_manager
from .test_webhook_server import post, review
from .test_webhook_server import widget as widget_dict
from .webhook_kinds import WidgetValidator
from .widgets import Widget, widget

# family: (type, label names) as controller-runtime v0.24.1 registers them
CONTROLLER_RUNTIME_V0_24_1 = {
    "controller_runtime_reconcile_total": ("counter", ("controller", "result")),
    "controller_runtime_reconcile_errors_total": ("counter", ("controller",)),
    "controller_runtime_terminal_reconcile_errors_total": ("counter", ("controller",)),
    "controller_runtime_reconcile_panics_total": ("counter", ("controller",)),
    "controller_runtime_reconcile_time_seconds": ("histogram", ("controller",)),
    "controller_runtime_max_concurrent_reconciles": ("gauge", ("controller",)),
    "controller_runtime_active_workers": ("gauge", ("controller",)),
    "controller_runtime_reconcile_timeouts_total": ("counter", ("controller",)),
    "workqueue_depth": ("gauge", ("name", "controller", "priority")),
    "workqueue_adds_total": ("counter", ("name", "controller")),
    "workqueue_queue_duration_seconds": ("histogram", ("name", "controller")),
    "workqueue_work_duration_seconds": ("histogram", ("name", "controller")),
    "workqueue_unfinished_work_seconds": ("gauge", ("name", "controller")),
    "workqueue_longest_running_processor_seconds": ("gauge", ("name", "controller")),
    "workqueue_retries_total": ("counter", ("name", "controller")),
    "rest_client_requests_total": ("counter", ("code", "method", "host")),
    "leader_election_master_status": ("gauge", ("name",)),
    "controller_runtime_webhook_requests_total": ("counter", ("webhook", "code")),
    "controller_runtime_webhook_latency_seconds": ("histogram", ("webhook",)),
    "controller_runtime_webhook_requests_in_flight": ("gauge", ("webhook",)),
    "controller_runtime_webhook_panics_total": ("counter", ()),
    "controller_runtime_conversion_webhook_panics_total": ("counter", ()),
    "certwatcher_read_certificate_total": ("counter", ()),
    "certwatcher_read_certificate_errors_total": ("counter", ()),
}
# `le` labels as a Go scrape prints them
RECONCILE_LE = [
    "0.005", "0.01", "0.025", "0.05", "0.1", "0.15", "0.2", "0.25", "0.3", "0.35", "0.4", "0.45", "0.5",
    "0.6", "0.7", "0.8", "0.9", "1.0", "1.25", "1.5", "1.75", "2.0", "2.5", "3.0", "3.5", "4.0", "4.5",
    "5.0", "6.0", "7.0", "8.0", "9.0", "10.0", "15.0", "20.0", "25.0", "30.0", "40.0", "50.0", "60.0", "+Inf",
]  # fmt: skip
EXPONENTIAL_LE = [
    "1e-08", "1e-07", "1e-06", "9.999999999999999e-06", "9.999999999999999e-05", "0.001", "0.01", "0.1",
    "1.0", "10.0", "100.0", "1000.0", "+Inf",
]  # fmt: skip
PYOP_OWN = {"pyop_reconcile_errors_by_reason_total"}


def test_the_runtime_table_is_controller_runtimes() -> None:
    assert controller_runtime_metrics() == CONTROLLER_RUNTIME_V0_24_1


async def test_a_scrape_shows_controller_runtimes_metric_set(env: Environment, api: Client) -> None:
    mgr = make_manager(
        env,
        metrics_bind_address="127.0.0.1:0",
        leader_election=True,
        leader_election_id="metrics-set.test.pyop.io",
        retry_period=0.2,
    )
    mgr.webhook_server = WebhookServer(host="127.0.0.1", port=0)
    webhook_managed_by(mgr).for_(Widget).with_validator(WidgetValidator()).complete()
    seen: list[Request] = []

    async def reconcile(request: Request) -> None:
        seen.append(request)

    mgr.builder().for_(Widget).complete(reconcile)
    async with mgr.running():
        await api.create(widget("scraped"))
        await eventually(lambda: any(r.name == "scraped" for r in seen))
        answer = await post(mgr.webhook_server, validate_path(Widget), review("CREATE", widget_dict()))
        assert answer.status_code == 200
        assert mgr.metrics_address is not None
        host, port = mgr.metrics_address
        async with httpx2.AsyncClient() as http:
            scrape = await http.get(f"http://{host}:{port}/metrics")
    assert scrape.status_code == 200
    text = scrape.text
    assert "_created" not in text  # Go emits no *_created series
    families = {f.name: f for f in text_string_to_metric_families(text)}
    scraped: dict[str, tuple[str, tuple[str, ...]]] = {}
    for family in families.values():
        name = family.name + ("_total" if family.type == "counter" else "")
        if name.startswith(("process_", "python_")) or name in PYOP_OWN:
            continue  # Go's process and runtime collectors: process_* alike, go_* is python_* here
        labels = {k for s in family.samples for k in s.labels if k not in ("le", "quantile")}
        expected = CONTROLLER_RUNTIME_V0_24_1.get(name, ("?", ()))
        scraped[name] = (family.type, tuple(k for k in expected[1] if k in labels))
        assert labels == set(expected[1]), name
    assert scraped == CONTROLLER_RUNTIME_V0_24_1
    assert set(families) >= {"process_cpu_seconds", "process_resident_memory_bytes"}

    def le(family: str) -> list[str]:
        samples = families[family].samples
        first = next(s.labels for s in samples if s.name.endswith("_bucket"))
        return [
            s.labels["le"]
            for s in samples
            if s.name.endswith("_bucket")
            and {k: v for k, v in s.labels.items() if k != "le"}
            == {k: v for k, v in first.items() if k != "le"}
        ]

    assert le("controller_runtime_reconcile_time_seconds") == RECONCILE_LE
    for family in (
        "workqueue_queue_duration_seconds",
        "workqueue_work_duration_seconds",
        "controller_runtime_webhook_latency_seconds",
    ):
        assert le(family) == EXPONENTIAL_LE, family
    # the children controller-runtime makes at start, and client-go's request counter's labels
    lines = text.splitlines()
    for result in ("success", "error", "requeue", "requeue_after"):
        child = f'controller_runtime_reconcile_total{{controller="widget",result="{result}"}}'
        assert any(line.startswith(child) for line in lines)
    path = validate_path(Widget)
    assert f'controller_runtime_webhook_requests_total{{code="500",webhook="{path}"}} 0.0' in lines
    host_label = env.config.server.split("//", 1)[1].rstrip("/")
    assert any(
        line.startswith("rest_client_requests_total{")
        and f'host="{host_label}"' in line
        and 'code="200"' in line
        and 'method="GET"' in line
        for line in lines
    )
    assert 'leader_election_master_status{name="metrics-set.test.pyop.io"} 1.0' in lines
    assert 'workqueue_depth{controller="widget",name="widget",priority=""} 0.0' in lines


async def test_a_reconcile_timeout_is_counted_as_an_error_and_a_timeout() -> None:
    metrics = RuntimeMetrics()

    async def slow(req: Request) -> None:
        await asyncio.sleep(10)

    ctrl = Controller("slow", slow, metrics=metrics, reconcile_timeout=0.01, max_concurrent_reconciles=1)
    await ctrl.start()
    ctrl.queue.add(Request("ns", "a"))
    labels = {"controller": "slow"}
    await eventually(lambda: metrics.value("controller_runtime_reconcile_timeouts_total", labels) == 1)
    assert metrics.value("controller_runtime_reconcile_errors_total", labels) >= 1
    await ctrl.stop(timeout=0.1)


async def test_rest_client_requests_count_codes_and_unreachable_servers() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    transport = RestTransport(RestConfig(server=f"http://127.0.0.1:{port}"), timeout=2)
    before = rest.REQUEST_RESULTS["<error>", "GET", f"127.0.0.1:{port}"]
    with pytest.raises(ApiError):
        await transport.request("GET", "/api")
    await transport.close()
    assert rest.REQUEST_RESULTS["<error>", "GET", f"127.0.0.1:{port}"] == before + 1
    text = RuntimeMetrics().exposition().decode()
    assert f'rest_client_requests_total{{code="<error>",host="127.0.0.1:{port}",method="GET"}}' in text


def test_certificate_reads_and_failed_reads_are_counted(tmp_path: Path) -> None:
    total, errors = certs.READS.total, certs.READS.errors
    write_local_certs(tmp_path)
    ctx = certs.server_context(tmp_path, what="webhook")
    assert (certs.READS.total, certs.READS.errors) == (total + 1, errors)
    watcher = certs.CertWatcher(ctx, tmp_path, what="webhook")
    (tmp_path / "tls.crt").write_bytes(b"half-written")
    assert not watcher.check()
    assert (certs.READS.total, certs.READS.errors) == (total + 2, errors + 1)
    with pytest.raises(FileNotFoundError):
        certs.server_context(tmp_path / "missing")
    assert (certs.READS.total, certs.READS.errors) == (total + 3, errors + 2)
    metrics = RuntimeMetrics()
    assert metrics.value("certwatcher_read_certificate_total") == total + 3
    assert metrics.value("certwatcher_read_certificate_errors_total") == errors + 2
