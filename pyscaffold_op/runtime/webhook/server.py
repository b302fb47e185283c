"""`WebhookServer` (pkg/webhook.Server): HTTPS endpoints for admission and conversion reviews.

Certificates come from `cert_dir` (`tls.crt`/`tls.key`, reloaded by a `CertWatcher` on the file event
as cert-manager rotates them, `cert_watch_interval` the fallback poll) or, with `cert_dir=None`, from a
throw-away CA made at start for local runs: its PEM is `server.ca_bundle`, the `caBundle` a webhook
configuration needs. With `generate_missing=True` an empty `cert_dir` gets such a CA written into it
(`ca.crt` beside `tls.crt`/`tls.key`), which is how `make run` works without cert-manager."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shutil
import ssl
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pyscaffold_op.runtime.panics import own_cancellation, panic_hook, panic_message
from pyscaffold_op.runtime.webhook.admission import http_headers
from pyscaffold_op.runtime.webhook.localcerts import write_local_certs

log = logging.getLogger("pyscaffold_op.runtime.webhook")

# One endpoint: the decoded review in, the review to answer out.
Endpoint = Callable[[Any], Awaitable[dict[str, Any]]]

DEFAULT_PORT = 9443


class WebhookMetrics:
    """controller-runtime's webhook metrics, labelled by path like its `webhook` label: the collectors of
    the `RuntimeMetrics` in the registry the server is bound to (servers/metrics.py holds the table)."""

    def __init__(self, registry: Any) -> None:
        from pyscaffold_op.runtime.servers.metrics import runtime_metrics_of

        self.runtime = m = runtime_metrics_of(registry)
        self.requests = m.webhook_requests
        self.latency = m.webhook_latency
        self.panics = m.webhook_panics
        self.conversion_panics = m.conversion_webhook_panics
        self.in_flight = m.webhook_in_flight


class WebhookServer:
    def __init__(
        self,
        *,
        host: str = "",
        port: int = DEFAULT_PORT,
        cert_dir: str | Path | None = None,
        cert_watch_interval: float = 10.0,
        generate_missing: bool = False,
        local_hosts: tuple[str, ...] = ("localhost",),
        local_ips: tuple[str, ...] = ("127.0.0.1",),
        read_header_timeout: float = 32.0,
        shutdown_timeout: float = 30.0,
    ) -> None:
        """`read_header_timeout`: seconds a connection may take to send a complete request header (or
        stay idle between requests), and then its body; Go's ReadHeaderTimeout (32 s in the emulator).
        `shutdown_timeout`: how long `stop()` lets in-flight requests run before it cuts their
        connections (a manager passes what is left of its `graceful_shutdown_timeout` instead)."""
        self.host, self.port = host, port
        self.read_header_timeout = read_header_timeout
        self.shutdown_timeout = shutdown_timeout
        self.cert_dir = Path(cert_dir) if cert_dir is not None else None
        self.cert_watch_interval = cert_watch_interval
        self.generate_missing = generate_missing
        self.local_hosts, self.local_ips = local_hosts, local_ips
        self._endpoints: dict[str, Endpoint] = {}
        self.metrics: WebhookMetrics | None = None
        self.ca_bundle: bytes | None = None  # set when the server made its own certificates
        self.address: tuple[str, int] | None = None
        self.cert_watcher: Any = None
        self._runner: Any = None
        self._tmp: Path | None = None
        self._watch_task: asyncio.Task[None] | None = None
        self.cut = 0  # requests whose handlers a stop cancelled because they ran past its timeout

    # -- registration ---------------------------------------------------------------------------------
    def register(self, path: str, endpoint: Endpoint) -> None:
        """Serve `endpoint` at `path` (e.g. an `Admission(...)` or `Conversion(...)`)."""
        if not path.startswith("/"):
            raise ValueError(f"webhook path {path!r} must start with '/'")
        if path in self._endpoints:
            raise ValueError(f"a webhook is already registered at {path}")
        self._endpoints[path] = endpoint  # a running server serves it from its next request
        if self.metrics is not None:
            self.metrics.runtime.bind_webhook(path)

    def paths(self) -> list[str]:
        return sorted(self._endpoints)

    def endpoint(self, path: str) -> Endpoint | None:
        return self._endpoints.get(path)

    def bind_metrics(self, registry: Any) -> None:
        if self.metrics is None:
            self.metrics = WebhookMetrics(registry)
            for path in self._endpoints:
                self.metrics.runtime.bind_webhook(path)

    @property
    def url(self) -> str:
        """`https://127.0.0.1:<port>` once serving (a loopback URL even when bound to all interfaces)."""
        if self.address is None:
            raise RuntimeError("the webhook server is not serving yet")
        host = self.address[0]
        host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
        return f"https://{host}:{self.address[1]}"

    def write_ca_bundle(self, path: str | Path) -> Path:
        """Write the CA to trust (the self-made one, or `cert_dir/ca.crt`) to `path`."""
        bundle = self.ca_bundle
        if bundle is None and self.cert_dir is not None and (self.cert_dir / "ca.crt").is_file():
            bundle = (self.cert_dir / "ca.crt").read_bytes()
        if bundle is None:
            raise RuntimeError("no CA bundle: the certificates in cert_dir came without a ca.crt")
        out = Path(path)
        out.write_bytes(bundle)
        return out

    # -- lifecycle ------------------------------------------------------------------------------------
    def _tls(self) -> ssl.SSLContext:
        from pyscaffold_op.runtime.certs.certs import CertWatcher, server_context

        cert_dir = self.cert_dir
        if cert_dir is not None and self.generate_missing and not (cert_dir / "tls.crt").is_file():
            # `make run`: a local CA in the cert dir, so `pyop envtest serve --webhook-ca` can trust it
            self.ca_bundle = write_local_certs(cert_dir, self.local_hosts, self.local_ips)
            log.info("wrote a local webhook certificate", extra={"dir": str(cert_dir)})
        if cert_dir is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="pyop-webhook-"))
            self.ca_bundle = write_local_certs(self._tmp, self.local_hosts, self.local_ips)
            cert_dir = self._tmp
        ctx = server_context(cert_dir, what="webhook")
        if self.cert_dir is not None:
            self.cert_watcher = CertWatcher(ctx, self.cert_dir, self.cert_watch_interval, what="webhook")
        return ctx

    async def start_serving(self) -> None:
        """Bind and serve in the background (the manager calls this before its caches start)."""
        if self._runner is not None:
            return
        from pyscaffold_op.runtime.manager.startup import bind_error
        from pyscaffold_op.runtime.servers.server import start_site

        ctx = self._tls()
        address = f"{self.host}:{self.port}"
        try:
            site = await start_site(self._app(), address, ctx, read_header_timeout=self.read_header_timeout)
        except OSError as err:  # one line naming --webhook-port, like the health and metrics servers
            raise bind_error("webhook_port", address, err) from err
        assert site is not None
        self._runner, self.address = site
        if self.cert_watcher is not None:
            self._watch_task = asyncio.create_task(
                self.cert_watcher.run(), name="webhook certificate watcher"
            )
        log.info(
            "serving webhooks",
            extra={"address": f"{self.address[0]}:{self.address[1]}", "paths": self.paths()},
        )

    async def stop(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Stop within `timeout` seconds (default `shutdown_timeout`): no new connections, idle ones
        closed, in-flight requests given the time left and then cut (their handlers cancelled). True
        when no request had to be cut."""
        from pyscaffold_op.runtime.servers.server import stop_site

        cut = self.cut

        if self._watch_task is not None:
            self._watch_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch_task
            self._watch_task = None
        if self._runner is not None:
            runner, self._runner = self._runner, None
            with contextlib.suppress(Exception):
                await stop_site(runner, self.shutdown_timeout if timeout is None else timeout)
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        return self.cut == cut

    async def __aenter__(self) -> WebhookServer:
        await self.start_serving()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def started_check(self) -> None:
        """Readiness (StartedChecker): the server is bound and completes a TLS handshake."""
        if self.address is None:
            raise RuntimeError("webhook server has not been started yet")
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        host = self.url.split("//")[1].rsplit(":", 1)[0]
        _reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, self.address[1], ssl=ctx), timeout=5.0
        )
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()

    # -- serving --------------------------------------------------------------------------------------
    def _count_panic(self) -> None:
        if self.metrics is not None:
            self.metrics.panics.inc()

    def _recovered(self, path: str, err: BaseException) -> str:
        """A panic no endpoint answered for itself (`Admission` turns its own into a 500 denial); a
        conversion webhook's counts in controller_runtime_conversion_webhook_panics_total."""
        from pyscaffold_op.runtime.webhook.conversion import Conversion

        if not isinstance(self._endpoints.get(path), Conversion):
            self._count_panic()
        elif self.metrics is not None:
            self.metrics.conversion_panics.inc()
        message = panic_message(err)
        log.error("Observed a panic in webhook", extra={"webhook": path, "error": message}, exc_info=err)
        return message + "\n"

    def _app(self) -> Any:
        from aiohttp import web

        async def handle(request: web.Request) -> web.Response:
            path = request.path
            endpoint = self._endpoints.get(path)
            if endpoint is None:
                return web.Response(status=404, text="404 page not found\n")
            m = self.metrics
            if m is not None:
                m.in_flight.labels(path).inc()
            started = time.monotonic()
            code = 200
            try:
                if request.method != "POST":
                    code = 405
                    return web.Response(status=code, text="only POST is allowed\n")
                ctype = request.headers.get("Content-Type", "").split(";")[0].strip()
                if ctype != "application/json":
                    code = 400
                    return web.Response(status=code, text=f"contentType={ctype}, expected application/json\n")
                try:
                    async with asyncio.timeout(self.read_header_timeout):  # a body sent at a trickle
                        raw = await request.read()
                except TimeoutError:
                    code = 408
                    timed_out = web.Response(status=code, text="timed out reading the request body\n")
                    timed_out.force_close()  # the rest of the body is not worth waiting for
                    return timed_out
                try:
                    body = json.loads(raw)
                except RecursionError:  # 100k nested arrays: refused as Go's decoder refuses them
                    code = 400
                    return web.Response(status=code, text="unable to decode the request: nesting too deep\n")
                except ValueError as err:
                    code = 400
                    return web.Response(status=code, text=f"unable to decode the request: {err}\n")
                try:
                    token = http_headers.set(request.headers)  # for admission_request().headers
                    try:
                        with panic_hook(self._count_panic):
                            answer = await endpoint(body)
                    finally:
                        http_headers.reset(token)
                    text = json.dumps(answer)
                except asyncio.CancelledError as err:
                    if own_cancellation():  # a stop cut the request: it ran past the shutdown timeout
                        self.cut += 1
                        log.warning("webhook request cut by the shutdown", extra={"webhook": path})
                        raise
                    code = 500
                    return web.Response(status=code, text=self._recovered(path, err))
                except BaseException as err:  # an endpoint's panic: recovered, the server lives on
                    code = 500
                    return web.Response(status=code, text=self._recovered(path, err))
                return web.Response(status=code, text=text, content_type="application/json")
            finally:
                if m is not None:
                    m.in_flight.labels(path).dec()
                    m.latency.labels(path).observe(time.monotonic() - started)
                    m.requests.labels(path, str(code)).inc()

        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", handle)
        return app
