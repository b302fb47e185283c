"""`Manager`: owns the shared cache, clients, controllers, servers and leader election (pkg/manager).

Start order (`RunnableGroups`, as controller-runtime's runnable groups): webhook server -> caches
started (their lists in flight) -> health and metrics servers -> caches synced -> what needs no lease
-> leader election (if enabled) -> controllers and other leader runnables. Stop order is the reverse:
controllers stop taking work and drain in-flight reconciles within `graceful_shutdown_timeout`, the
lease is released, pending events are flushed, caches and servers stop, connections close.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyscaffold_op.runtime.cache.cache import InformerCache
from pyscaffold_op.runtime.cache.liveness import WatchLiveness
from pyscaffold_op.runtime.client.client import CachedClient, Client
from pyscaffold_op.runtime.client.rest import RestTransport
from pyscaffold_op.runtime.clock import REAL_CLOCK, Clock
from pyscaffold_op.runtime.controller.builder import Builder
from pyscaffold_op.runtime.controller.controller import Controller
from pyscaffold_op.runtime.controller.events import EventRecorder
from pyscaffold_op.runtime.controller.recorder import LegacyEventRecorder
from pyscaffold_op.runtime.manager.leader import LeaderElector
from pyscaffold_op.runtime.manager.runnables import RunnableGroups
from pyscaffold_op.runtime.manager.startup import (
    CacheSyncTimeout,
    bind_error,
    connection_source,
    credentials_waiting,
)
from pyscaffold_op.runtime.servers.authfilter import AuthFilter
from pyscaffold_op.runtime.servers.health import Checker, HealthChecks
from pyscaffold_op.runtime.servers.metrics import RuntimeMetrics
from pyscaffold_op.runtime.servers.server import parse_bind_address, start_site, stop_site

if TYPE_CHECKING:
    from pyscaffold_op.runtime.client.restconfig import RestConfig
    from pyscaffold_op.runtime.sharding.shards import Sharding, ShardingOptions
    from pyscaffold_op.runtime.webhook import WebhookServer

log = logging.getLogger("pyscaffold_op.runtime.manager")

# The lease release gets at least this long even when the drain used the whole graceful timeout: a
# released lease lets the next leader start at once instead of after leaseDuration.
_RELEASE_TIMEOUT = 2.0
# A kubeconfig's client certificate is reloaded on the file event, and polled every 10 s as the serving
# certificates are (client-go polls every 5 minutes; two small reads every 10 s cost nothing).
CLIENT_CERT_POLL = 10.0

SA_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


class ShutdownTimeout(RuntimeError):
    """In-flight reconciles ran past `graceful_shutdown_timeout` and were cancelled (exit non-zero)."""


class LeaderElectionLost(RuntimeError):
    """The manager lost its lease; it stopped. Exit non-zero so the pod restarts as a candidate."""


@dataclass(kw_only=True)
class ManagerOptions:
    """How a manager runs: controller-runtime's `manager.Options` (`Manager(cfg, ManagerOptions(...))`)."""

    metrics_bind_address: str = "0"
    """"0" disables the server; ":8080" binds every interface; "127.0.0.1:0" picks a free port."""
    metrics_secure: bool = False
    """HTTPS with TokenReview + SubjectAccessReview of every scrape (kubebuilder's --metrics-secure)."""
    metrics_cert_dir: str | Path | None = None
    """A folder with the certificate and key for secure metrics (reloaded when they change, as
    cert-manager rotates them); None: a self-signed certificate."""
    metrics_cert_name: str = "tls.crt"
    """The certificate's file in metrics_cert_dir (controller-runtime's CertName)."""
    metrics_cert_key: str = "tls.key"
    """The private key's file in metrics_cert_dir (controller-runtime's KeyName)."""
    metrics_cert_watch_interval: float = 10.0
    """How often the certificate files are checked for a rotation, in seconds."""
    health_probe_bind_address: str = ":8081"
    leader_election: bool = False
    leader_election_id: str = ""
    """The Lease's name; required with leader_election."""
    leader_election_namespace: str | None = None
    """Default: the in-cluster namespace, else the kubeconfig's."""
    leader_identity: str | None = None
    """Default: hostname + a random suffix."""
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    graceful_shutdown_timeout: float = 30.0
    """How long in-flight reconciles may run after a stop is asked for; then they are cancelled."""
    namespace: str | None = None
    """Restrict the cache to one namespace; None: every namespace."""
    sync_period: float | None = 10 * 3600.0
    """Replay every cached object to the handlers this often (±10 %); None: never."""
    cache_sync_timeout: float = 120.0
    """Seconds the caches may take to fill at start (an uninstalled CRD never does); then start() raises
    CacheSyncTimeout saying why. controller-runtime's CacheSyncTimeout, 2 minutes by default."""
    field_manager: str | None = None
    unsafe_disable_deep_copy: bool = False
    """Cache reads return shared decoded objects instead of decoding a new one per read (see cache.py)."""
    watch_liveness: WatchLiveness | None = None
    """How the informers judge a silent watch (None: `WatchLiveness()`, client-go's figures: a probe
    after 30 s without a byte, 15 s for its answer, watches of 5 to 10 minutes)."""
    clock: Clock | None = None
    """Time for the work queues, rate limiters and leader election; a FakeClock in tests."""
    sharding: ShardingOptions | None = None
    """Split the controllers' keys among the replicas (runtime/sharding; docs/runtime.md, "Sharding")."""


class Manager:
    def __init__(self, config: RestConfig, options: ManagerOptions | None = None) -> None:
        self.options = opts = options or ManagerOptions()
        if opts.leader_election and not opts.leader_election_id:
            raise ValueError("leader_election=True needs leader_election_id (the Lease name)")
        if opts.metrics_cert_dir is not None and not opts.metrics_secure:
            log.warning(
                "metrics_cert_dir is ignored: metrics are served over plain HTTP (metrics_secure=False)"
            )
        self.transport = RestTransport(config)
        self.config = self.transport.config
        self.clock: Clock = opts.clock or REAL_CLOCK
        self.metrics = RuntimeMetrics()
        self.registry = self.metrics.registry
        self.cache = InformerCache(
            self.transport,
            namespace=opts.namespace,
            resync_period=opts.sync_period,
            unsafe_disable_deep_copy=opts.unsafe_disable_deep_copy,
            liveness=opts.watch_liveness,
        )
        self.api_reader = Client(self.transport, field_manager=opts.field_manager)
        self.client = CachedClient(self.transport, self.cache, field_manager=opts.field_manager)
        self.health = HealthChecks()
        # With metrics_secure: TokenReview + SubjectAccessReview of every scrape (uncached client).
        self.metrics_filter: AuthFilter | None = AuthFilter(self.transport) if opts.metrics_secure else None
        self.metrics_cert_watcher: Any = None  # a certs.CertWatcher with metrics_cert_dir, once started
        self.client_cert_watcher: Any = None  # a certs.CertWatcher of the kubeconfig's client-certificate
        self._webhook_server: WebhookServer | None = None
        self.runnables = RunnableGroups()
        self._recorders: dict[str, EventRecorder] = {}
        self._legacy_recorders: dict[str, LegacyEventRecorder] = {}
        self.elector: LeaderElector | None = None
        if opts.leader_election:
            ns = opts.leader_election_namespace or _in_cluster_namespace() or self.transport.default_namespace
            self.elector = LeaderElector(
                self.api_reader,
                opts.leader_election_id,
                ns,
                identity=opts.leader_identity,
                lease_duration=opts.lease_duration,
                renew_deadline=opts.renew_deadline,
                retry_period=opts.retry_period,
                metrics=self.metrics,
                clock=self.clock,
            )
        self.sharding: Sharding | None = None
        if opts.sharding is not None:
            from pyscaffold_op.runtime.sharding.shards import for_manager

            self.sharding = for_manager(self, opts.sharding)
        self.health_address: tuple[str, int] | None = None
        self.metrics_address: tuple[str, int] | None = None
        self._stop: asyncio.Event | None = None
        self._stop_requested = False
        self._cache_synced = asyncio.Event()
        self._ready = asyncio.Event()
        self._started = False
        self._signals = 0

    @property
    def controllers(self) -> list[Controller]:
        return self.runnables.controllers

    # -- registration ---------------------------------------------------------------------------------
    def builder(self) -> Builder:
        return Builder(self)

    def new_controller(self, name: str, reconciler: Any, **options: Any) -> Controller:
        """A controller registered with this manager (controller.New); add watches with `watch()`."""
        if any(c.name == name for c in self.controllers):  # before Controller() takes the options
            raise ValueError(f"a controller named {name!r} already exists; use named() to pick another")
        sharded = options.pop("sharded", True)
        ctrl = Controller(
            name,
            reconciler,
            metrics=self.metrics,
            cache=self.cache,
            cache_sync_timeout=options.pop("cache_sync_timeout", self.options.cache_sync_timeout),
            clock=options.pop("clock", self.clock),
            **options,
        )
        if self.sharding is not None and sharded:
            self.sharding.attach(ctrl)  # on every replica, for the keys this one holds
        if self.elector is not None and ctrl.need_leader_election:
            ctrl.leader = self.elector  # starts no reconcile while its lease is older than renew_deadline
        self.runnables.add_controller(ctrl)
        if self._ready.is_set():
            self.spawn(ctrl.start(), f"controller {name}")
        return ctrl

    def add(self, runnable: Any, *, need_leader_election: bool = True) -> None:
        """Run `runnable` (an async callable, or an object with `async def start()`) while the manager
        runs (after election if `need_leader_election`); it is cancelled on stop."""
        self.runnables.add(runnable, need_leader_election=need_leader_election)

    def add_healthz_check(self, name: str, check: Checker) -> None:
        self.health.healthz[name] = check

    def add_readyz_check(self, name: str, check: Checker) -> None:
        self.health.readyz[name] = check

    def get_event_recorder(self, name: str) -> EventRecorder:
        """A fire-and-forget recorder of events.k8s.io/v1 Events (controller-runtime's
        `GetEventRecorder`): `reportingController` is `name` (a qualified name), `reportingInstance`
        `<name>-<hostname>`. Repeats become a series, as client-go's `tools/events` makes them. Its
        RBAC: `+kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch`."""
        if name not in self._recorders:
            self._recorders[name] = EventRecorder(self.transport, name, clock=self.clock)
        return self._recorders[name]

    def get_event_recorder_for(self, name: str) -> LegacyEventRecorder:
        """Deprecated (as controller-runtime's `GetEventRecorderFor`): a recorder of core/v1 Events
        with `source.component = name`; use `get_event_recorder`."""
        if name not in self._legacy_recorders:
            self._legacy_recorders[name] = LegacyEventRecorder(self.transport, name)
        return self._legacy_recorders[name]

    def get_field_indexer(self) -> InformerCache:
        """The cache's field indexer (GetFieldIndexer): `mgr.get_field_indexer().index_field(Pod,
        "spec.nodeName", lambda p: [p.spec.node_name] if p.spec and p.spec.node_name else [])` indexes
        Pods by node; the index is named by the wire path (`client.list(Pod, fields={"spec.nodeName":
        n})` uses it), the extractor reads the typed object's snake_case attributes."""
        return self.cache

    @property
    def webhook_server(self) -> WebhookServer:
        """The HTTPS server for admission and conversion webhooks (GetWebhookServer): a default
        `WebhookServer()` (port 9443, self-made certificates) unless one was assigned. It starts with
        the manager, before the caches, when anything is registered on it, and adds the `webhook`
        readiness check."""
        if self._webhook_server is None:
            from pyscaffold_op.runtime.webhook import WebhookServer

            self.webhook_server = WebhookServer()
        assert self._webhook_server is not None
        return self._webhook_server

    @webhook_server.setter
    def webhook_server(self, server: WebhookServer) -> None:
        if self._started:
            raise RuntimeError("set the webhook server before the manager starts")
        server.bind_metrics(self.registry)
        self._webhook_server = server
        self.add_readyz_check("webhook", server.started_check)

    @property
    def elected(self) -> asyncio.Event:
        """Set once this manager leads (at once without leader election)."""
        return self.elector.elected if self.elector is not None else self._ready

    # -- lifecycle ------------------------------------------------------------------------------------
    def stop(self) -> None:
        """Ask a running manager to stop (safe to call from signal handlers and other tasks)."""
        self._stop_requested = True
        if self._stop is not None:
            self._stop.set()

    async def start(self, *, install_signal_handlers: bool = True) -> None:
        """Run until `stop()`, SIGTERM or SIGINT; then shut down gracefully, within
        `graceful_shutdown_timeout`: in-flight reconciles and webhook requests that run past it are
        cancelled (their connections cut) and start() raises ShutdownTimeout once everything is
        closed. A second SIGTERM or SIGINT exits the process at once with status 1
        (controller-runtime's signal handler: `os.Exit(1)`).
        Raises LeaderElectionLost if the lease was lost (after shutting down)."""
        await self._start(install_signal_handlers=install_signal_handlers)

    async def _start(self, *, install_signal_handlers: bool) -> None:
        if self._started:
            raise RuntimeError("a manager can only be started once")
        self._started = True
        self._stop = asyncio.Event()
        if self._stop_requested:
            self._stop.set()
        self._tasks: list[asyncio.Task[Any]] = []
        self._runners: list[Any] = []
        signals = self._install_signal_handlers() if install_signal_handlers else []
        lost = False
        try:
            if not await self.runnables.start(self):
                return  # stopped before everything started
            self._ready.set()
            log.info("manager started", extra={"controllers": [c.name for c in self.controllers]})
            lost = await self._wait_for_stop_or_lost_lease()
        finally:
            drained = await self._shutdown(
                drain_timeout=0.0 if lost else self.options.graceful_shutdown_timeout
            )
            for sig in signals:
                asyncio.get_running_loop().remove_signal_handler(sig)
        if lost:
            raise LeaderElectionLost(f"leader election lost for lease {self.options.leader_election_id}")
        if self.sharding is not None and self.sharding.lost:
            from pyscaffold_op.runtime.sharding.shards import ShardLeaseLost

            raise ShardLeaseLost(f"shard lease {self.sharding.lease_name} lost")
        if drained is not True:
            raise ShutdownTimeout(
                f"in-flight {drained} ran past graceful_shutdown_timeout "
                f"({self.options.graceful_shutdown_timeout:g}s) and were cancelled"
            )

    def _install_signal_handlers(self) -> list[signal.Signals]:
        if threading.current_thread() is not threading.main_thread():
            return []
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._on_signal, sig)
        return [signal.SIGTERM, signal.SIGINT]

    # -- the manager's steps of RunnableGroups.start --------------------------------------------------
    async def start_caches(self) -> None:
        """Start the caches: their first lists go out now; `wait_for_caches` waits for them."""
        log.info("connecting to %s", connection_source(self.transport))
        self._watch_client_certificate()
        await self.cache.start()

    async def wait_for_caches(self) -> bool:
        """Wait for the caches to sync; False when a stop came first."""
        timeout = self.options.cache_sync_timeout
        # A stalled start is named within seconds, with how long the manager will still wait.
        after = min(5.0, timeout / 2)

        def report_stall() -> None:
            if not self._cache_synced.is_set():
                log.warning(
                    "caches not synced after %gs%s; waiting up to %gs in all (--cache-sync-timeout), "
                    "then exiting; Ctrl-C stops now",
                    after,
                    self._not_synced_report(),
                    timeout,
                )

        stall = asyncio.get_running_loop().call_later(after, report_stall)
        try:
            if not await self._until_stop(self.cache.wait_for_cache_sync(timeout)):
                return False
        except TimeoutError:
            raise CacheSyncTimeout(
                f"caches did not sync within {timeout:g}s{self._not_synced_report()}"
            ) from None
        finally:
            stall.cancel()
        self._cache_synced.set()
        return True

    def _watch_client_certificate(self) -> None:
        """A kubeconfig's client-certificate and client-key files are reloaded when they change (as
        client-go's transport reloads them), for the connections opened after."""
        config, ctx = self.transport.config, self.transport.ssl_context
        if ctx is None or not (config.cert_file and config.key_file) or config.cert_data or config.key_data:
            return
        from pyscaffold_op.runtime.certs.certs import CertWatcher

        self.client_cert_watcher = CertWatcher.for_files(
            ctx, config.cert_file, config.key_file, what="client", interval=CLIENT_CERT_POLL
        )
        self.client_cert_watcher.on_reload = self.transport.renew_connections
        self.spawn(self.client_cert_watcher.run(), "client certificate watcher")

    async def elect(self) -> bool:
        """Lead (at once without leader election); False when a stop came first."""
        if self.elector is None:
            return True
        self.elector.start()
        return await self._until_stop(self.elector.elected.wait())

    async def _wait_for_stop_or_lost_lease(self) -> bool:
        """Run until stop or a lost lease; True when the lease was lost."""
        assert self._stop is not None
        waits = [asyncio.ensure_future(self._stop.wait())]
        if self.elector is not None:
            waits.append(asyncio.ensure_future(self.elector.lost.wait()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()
        lost = self.elector is not None and self.elector.lost.is_set()
        if lost:
            # Another replica may lead already: stop reconciling now, not after a drain
            # (controller-runtime stops at once on lost leadership).
            for ctrl in self.runnables.leader_controllers():
                ctrl.abort()
        return lost

    async def _until_stop(self, aw: Any) -> bool:
        """Await `aw` unless stop comes first; True when `aw` finished (and returned truthy or None)."""
        assert self._stop is not None
        task = asyncio.ensure_future(aw)
        stopper = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait([task, stopper], return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return False
        result = task.result()
        if result is False:
            raise TimeoutError("timed out waiting for caches to sync")
        return True

    def _on_signal(self, sig: signal.Signals) -> None:
        self._signals += 1
        if self._signals == 1:
            # A long reconcile holds the drain up to the timeout: say how to cut it short.
            again = "Ctrl-C again" if sig == signal.SIGINT else f"send {sig.name} again"
            log.info(
                "received %s, shutting down gracefully: waiting up to %gs for in-flight reconciles; %s to "
                "stop now",
                sig.name,
                self.options.graceful_shutdown_timeout,
                again,
            )
            self.stop()
        else:  # a second signal: exit now, as Go's os.Exit(1), whatever is still running
            log.warning("received %s again, exiting with status 1", sig.name)
            _exit_now(1)

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> None:
        """Run `coro` as a task of this manager (cancelled on stop; a failure is logged)."""
        task = asyncio.create_task(coro, name=name)
        self._tasks.append(task)
        task.add_done_callback(_log_failure)

    async def start_webhooks(self) -> None:
        # Before the caches: a conversion webhook must answer before the caches can list converted kinds.
        if self._webhook_server is not None and self._webhook_server.paths():
            await self._webhook_server.start_serving()

    async def start_servers(self) -> None:
        """The health probe and metrics servers, each only when its address binds one. The caches'
        first lists are in flight by now: aiohttp's import (~0.25 s of CPU) runs in a thread meanwhile,
        so the server's answer is not waited for behind it."""
        opts = self.options
        if all(
            parse_bind_address(a) is None for a in (opts.health_probe_bind_address, opts.metrics_bind_address)
        ):
            return
        if "aiohttp.web" not in sys.modules:
            await asyncio.to_thread(importlib.import_module, "aiohttp.web")
        site = await self._bind("health_probe_bind_address", self.health.app)
        if site is not None:
            self._runners.append(site[0])
            self.health_address = site[1]
            log.info("serving health probes", extra={"address": f"{site[1][0]}:{site[1][1]}"})
        tls = None
        if opts.metrics_secure and opts.metrics_bind_address not in ("0", ""):
            from pyscaffold_op.runtime.certs.certs import CertWatcher, server_context

            names = {"cert_name": opts.metrics_cert_name, "key_name": opts.metrics_cert_key}
            tls = server_context(opts.metrics_cert_dir, **names)
            if opts.metrics_cert_dir is not None:
                self.metrics_cert_watcher = CertWatcher(
                    tls, opts.metrics_cert_dir, opts.metrics_cert_watch_interval, **names
                )
                self.spawn(self.metrics_cert_watcher.run(), "metrics certificate watcher")
        site = await self._bind("metrics_bind_address", self._metrics_app, tls)
        if site is not None:
            self._runners.append(site[0])
            self.metrics_address = site[1]
            log.info(
                "serving metrics",
                extra={"address": f"{site[1][0]}:{site[1][1]}", "secure": opts.metrics_secure},
            )

    async def _bind(self, option: str, make_app: Callable[[], Any], tls: Any = None) -> Any:
        """Serve the app `make_app` builds on the address `option` names; None (and no app built, no
        aiohttp imported) when that address is "0"."""
        address = getattr(self.options, option)
        if parse_bind_address(address) is None:
            return None
        try:
            return await start_site(make_app(), address, tls)
        except OSError as err:
            # One line naming the option, not aiohttp's traceback; the CLI maps it to its flag.
            raise bind_error(option, address, err) from err

    def _metrics_app(self) -> Any:
        from aiohttp import web
        from prometheus_client import CONTENT_TYPE_LATEST

        async def handle(_request: web.Request) -> web.Response:
            resp = web.Response(body=self.metrics.exposition())
            resp.headers["Content-Type"] = CONTENT_TYPE_LATEST
            return resp

        middlewares = [self.metrics_filter.middleware()] if self.metrics_filter is not None else []
        app = web.Application(middlewares=middlewares)
        app.router.add_get("/metrics", handle)
        return app

    async def _shutdown(self, drain_timeout: float) -> bool | str:
        """Stop everything; True when in-flight reconciles and webhook requests finished within
        `drain_timeout`, else what was cut ("reconciles", "webhook requests").

        Every step is bounded: a manager stops within its graceful timeout (plus a short, bounded
        lease release and cleanup), whatever the reconcilers, the webhook handlers and the API server
        do. The servers keep serving during the drain; at the deadline their idle connections are
        closed and the in-flight ones cut. If the stop is itself cancelled, connections still close."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + drain_timeout
        self._ready.clear()
        drained: bool | str = True
        try:
            results = await asyncio.gather(
                *(c.stop(timeout=drain_timeout) for c in self.controllers), return_exceptions=True
            )
            if not all(r is True for r in results):
                drained = "reconciles"
                log.warning("graceful shutdown timed out; some reconciles were cancelled")
            await _cancel_all(self._tasks, timeout=max(0.1, deadline - loop.time()))
            if self.elector is not None:  # after the drain, so the next leader never overlaps with us
                await self.elector.stop(timeout=max(_RELEASE_TIMEOUT, deadline - loop.time()))
            remaining = max(0.1, deadline - loop.time())
            for recorder in self._recorders.values():
                await recorder.close(timeout=min(remaining, 5.0))
            for legacy in self._legacy_recorders.values():
                await legacy.flush(timeout=min(remaining, 5.0))
        finally:
            for ctrl in self.controllers:
                ctrl.abort()
            for task in self._tasks:
                task.cancel()
            await self.cache.stop()
            # in-flight webhook requests and scrapes have until the deadline, then are cut
            left = max(0.0, deadline - loop.time())
            stops: list[Any] = [stop_site(runner, left) for runner in self._runners]
            if self._webhook_server is not None:
                stops.insert(0, self._webhook_server.stop(timeout=left))
            results = await asyncio.gather(*stops, return_exceptions=True)
            if self._webhook_server is not None and results[0] is not True and drained is True:
                drained = "webhook requests"
            await self.transport.close()
            log.info("manager stopped")
        return drained

    def _not_synced_report(self) -> str:
        reasons = _unsynced_reasons(self.cache.informers())
        waiting = credentials_waiting(self.transport)
        if waiting is not None:  # a hanging exec plugin: named here, before its own timeout
            reasons.insert(0, waiting)
        return f": {'; '.join(reasons)}" if reasons else ""

    @contextlib.asynccontextmanager
    async def running(
        self,
        *,
        wait_for_leadership: bool = True,
        timeout: float = 30.0,  # noqa: ASYNC109
    ) -> AsyncIterator[Manager]:
        """Start in the background; enter once caches are synced and (if `wait_for_leadership`)
        controllers run; stop and drain on exit."""
        task = asyncio.create_task(self.start(install_signal_handlers=False), name="manager")
        target = self._ready if wait_for_leadership or self.elector is None else self._cache_synced
        waiter = asyncio.ensure_future(target.wait())
        done, _ = await asyncio.wait([task, waiter], timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if waiter not in done:
            waiter.cancel()
            self.stop()
            if task in done:
                task.result()  # raises what start() raised
            with contextlib.suppress(Exception):
                await task
            raise TimeoutError(f"manager not ready after {timeout}s{self._not_synced_report()}")
        try:
            yield self
        finally:
            self.stop()
            with contextlib.suppress(LeaderElectionLost):
                await task


async def _cancel_all(tasks: list[asyncio.Task[Any]], timeout: float) -> None:  # noqa: ASYNC109
    """Cancel `tasks` and wait at most `timeout` for them: a task that ignores cancellation is logged
    and left behind rather than blocking the shutdown for ever."""
    for task in tasks:
        task.cancel()
    if not tasks:
        return
    _done, pending = await asyncio.wait(tasks, timeout=timeout)
    for task in pending:
        log.warning("%s did not stop within the graceful shutdown timeout", task.get_name())


def _exit_now(code: int) -> None:
    """End the process at once (no clean-up, no waiting for threads), after flushing the logs."""
    for handler in logging.getLogger().handlers:
        with contextlib.suppress(Exception):
            handler.flush()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("%s failed", task.get_name(), exc_info=task.exception())


def _unsynced_reasons(informers: list[Any]) -> list[str]:
    out = []
    for informer in informers:
        if informer.has_synced():
            continue
        info, err = informer.info, informer.last_error
        what = f"{info.kind} ({info.api_version})"
        if err is None:
            out.append(f"{what} not listed yet")
        else:
            out.append(informer.last_reason or f"{what}: {err}")
    return list(dict.fromkeys(out))  # one refused connection fails every kind alike: say it once


def _in_cluster_namespace() -> str | None:
    try:
        return SA_NAMESPACE.read_text().strip() or None
    except OSError:
        return None
