"""The OpenTelemetry extra (issue 29): a span per reconcile and per API request of the runtime's own client,
made only when a tracer provider is configured; checked with the SDK's in-memory exporter."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra (opentelemetry-sdk) is not installed")

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Client, NotFound, Request, tracing
from pyscaffold_op.testing import eventually

from .conftest import make_manager
from .widgets import Widget, widget


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    """A configured SDK provider for this test only (OTel's global provider can be set once a process:
    `tracing.tracer()` reads it through `trace.get_tracer_provider`, patched here)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    yield exporter
    provider.shutdown()


def test_no_provider_no_tracer() -> None:
    assert tracing.tracer() is None  # the API's ProxyTracerProvider: nothing configured


def test_nothing_is_imported_without_a_provider() -> None:
    code = (
        "import sys, pyscaffold_op.runtime.controller.controller, pyscaffold_op.runtime.client.rest\n"
        "from pyscaffold_op.runtime import tracing\n"
        "assert tracing.tracer() is None\n"
        "print(any(m.startswith('opentelemetry') for m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize(
    ("path", "template"),
    [
        ("/api/v1/namespaces/ns/pods/p", "/api/v1/namespaces/{namespace}/pods/{name}"),
        ("/api/v1/namespaces/ns/pods/p/status", "/api/v1/namespaces/{namespace}/pods/{name}/status"),
        ("/api/v1/namespaces/ns/pods", "/api/v1/namespaces/{namespace}/pods"),
        ("/api/v1/namespaces/ns", "/api/v1/namespaces/{name}"),
        ("/api/v1/nodes", "/api/v1/nodes"),
        (
            "/apis/apps/v1/namespaces/a/deployments/d/scale",
            "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale",
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/x",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}",
        ),
        ("/version", "/version"),
    ],
)
def test_url_templates(path: str, template: str) -> None:
    assert tracing.url_template(path) == template


async def test_reconciles_and_api_requests_are_spans(
    env: Environment, api: Client, spans: InMemorySpanExporter
) -> None:
    mgr = make_manager(env)

    async def reconcile(request: Request) -> None:
        try:
            await mgr.api_reader.get(Widget, request.name, namespace=request.namespace)
        except NotFound:
            return
        if request.name == "bad":
            raise RuntimeError("boom")

    mgr.builder().for_(Widget).complete(reconcile)
    async with mgr.running():
        await api.create(widget("good"))
        await api.create(widget("bad"))

        def reconciled() -> bool:
            names = {
                (s.attributes or {}).get("name") for s in spans.get_finished_spans() if s.name == "reconcile"
            }
            return {"good", "bad"} <= names

        await eventually(reconciled)
    finished = spans.get_finished_spans()
    reconciles = {(s.attributes or {})["name"]: s for s in finished if s.name == "reconcile"}
    good, bad = reconciles["good"], reconciles["bad"]
    attrs: dict[str, Any] = dict(good.attributes or {})
    assert attrs["controller"] == "widget" and attrs["controllerKind"] == "Widget"
    assert attrs["namespace"] == "default" and attrs["result"] == "success"
    assert good.status.status_code is StatusCode.UNSET
    assert (bad.attributes or {})["result"] == "error" and bad.status.status_code is StatusCode.ERROR
    assert [e.name for e in bad.events] == ["exception"]
    # the reconciler's GET is a client span inside its reconcile's span
    gets = [
        s
        for s in finished
        if s.kind is SpanKind.CLIENT and s.parent is not None and s.parent.span_id == good.context.span_id
    ]
    assert [s.name for s in gets] == ["GET /apis/test.pyop.io/v1/namespaces/{namespace}/widgets/{name}"]
    get_attrs = dict(gets[0].attributes or {})
    assert get_attrs["http.request.method"] == "GET" and get_attrs["http.response.status_code"] == 200
    assert get_attrs["server.address"] == "127.0.0.1"
    # the manager's own requests (list and watch set-up) are client spans too; a 404 is an error span
    client_spans = [s for s in finished if s.kind is SpanKind.CLIENT]
    assert any(s.name.startswith("GET /apis/test.pyop.io/v1/widgets") for s in client_spans)


async def test_an_api_error_is_an_error_span(env: Environment, spans: InMemorySpanExporter) -> None:
    from pyscaffold_op.runtime import new_client

    client = new_client(env.config)
    try:
        with pytest.raises(NotFound):
            await client.get(Widget, "missing", namespace="default")
    finally:
        await client.close()
    [span] = [s for s in spans.get_finished_spans() if s.kind is SpanKind.CLIENT]
    assert span.status.status_code is StatusCode.ERROR
    assert (span.attributes or {})["http.response.status_code"] == 404
    assert (span.attributes or {})["error.type"] == "404"
