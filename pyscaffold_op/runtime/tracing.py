"""OpenTelemetry spans for reconciles and the runtime's own API requests (extra `pyscaffold-op[otel]`).

A span per reconcile (`reconcile`: controller, controllerGroup/Kind, namespace, name, reconcileID,
result, the error) and per API request of the runtime's HTTP client (`GET /api/v1/namespaces/{namespace}/
pods/{name}`: OTel's HTTP client attributes with the URL template), made only when OpenTelemetry is
installed *and* the application has configured a tracer provider (`trace.set_tracer_provider(...)`)
before the manager starts. Otherwise nothing is imported and the hot paths are the untraced ones: the
controller and the transport swap in their traced methods once, when they start, instead of testing a
flag per call. Watches (long-lived streams) get no span.
"""

from __future__ import annotations

import sys
from typing import Any

INSTRUMENTATION = "pyscaffold_op.runtime"


def tracer() -> Any:
    """The runtime's tracer when a tracer provider is configured, else None. Never imports
    OpenTelemetry: an application that configured a provider has imported it already."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None  # the API's defaults: no provider set, spans would go nowhere
    from pyscaffold_op import __version__

    return provider.get_tracer(INSTRUMENTATION, __version__)


def url_template(path: str) -> str:
    """A Kubernetes API path with its variable parts named: `/api/v1/namespaces/{namespace}/pods/{name}`,
    `/apis/{group}/{version}/...` stays literal for the group and version (they are few)."""
    parts = path.split("?", 1)[0].strip("/").split("/")
    if parts[0] == "api" and len(parts) >= 2:
        head, rest = parts[:2], parts[2:]
    elif parts[0] == "apis" and len(parts) >= 3:
        head, rest = parts[:3], parts[3:]
    else:
        return path
    if len(rest) >= 3 and rest[0] == "namespaces":
        head += ["namespaces", "{namespace}"]
        rest = rest[2:]
    if len(rest) >= 2:
        rest = [rest[0], "{name}", *rest[2:]]
    return "/" + "/".join(head + rest)


def trace_controller(controller: Any, tracer: Any) -> None:
    """Make `controller._process` open a span around each reconcile."""
    from opentelemetry.trace import SpanKind, Status, StatusCode

    untraced = controller._process
    group, kind = controller.group_kind or ("", "")

    async def process(req: Any) -> tuple[str, BaseException | None]:
        attributes = {"controller": controller.name, "namespace": req.namespace, "name": req.name}
        if kind:
            attributes["controllerGroup"], attributes["controllerKind"] = group, kind
        with tracer.start_as_current_span(
            "reconcile",
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            outcome, err = await untraced(req)
            span.set_attribute("result", outcome)
            if err is not None:
                span.record_exception(err)
                span.set_status(Status(StatusCode.ERROR, type(err).__name__))
            return outcome, err

    controller._process = process


def trace_transport(transport: Any, tracer: Any) -> None:
    """Make `transport.request` open a client span around each API request (retries included)."""
    from opentelemetry.trace import SpanKind, Status, StatusCode

    untraced = transport.request
    host, port = transport._host, transport._port

    async def request(method: str, path: str, **kwargs: Any) -> bytes:
        template = url_template(path)
        attributes = {
            "http.request.method": method,
            "url.template": template,
            "server.address": host,
            "server.port": port,
        }
        with tracer.start_as_current_span(
            f"{method} {template}",
            kind=SpanKind.CLIENT,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                return await untraced(method, path, **kwargs)
            except BaseException as err:
                code = getattr(err, "code", None)  # an ApiError's status; the attribute is set already
                span.set_attribute(
                    "error.type", str(code) if isinstance(code, int) and code else type(err).__name__
                )
                span.set_status(Status(StatusCode.ERROR))
                raise

    transport.request = request
    transport._traced = True


def response_status(status: int) -> None:
    """The status of the response the current request span got (the transport calls it per attempt,
    only when traced)."""
    from opentelemetry import trace

    trace.get_current_span().set_attribute("http.response.status_code", status)
