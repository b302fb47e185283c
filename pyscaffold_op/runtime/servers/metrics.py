"""Prometheus metrics with controller-runtime's and client-go's names, in a per-manager registry
(two managers in one process, as in tests, must not collide in prometheus_client's global registry).

The set is controller-runtime v0.24.1's, exactly: names, help texts, label names and buckets copied from
pkg/internal/controller/metrics, pkg/internal/metrics/workqueue.go, pkg/metrics/client_go_adapter.go,
pkg/metrics/leaderelection.go, pkg/webhook/internal/metrics, pkg/webhook/{admission,conversion}/metrics
and pkg/certwatcher/metrics (`controller_runtime_metrics()` below; tests/runtime/test_metrics_set.py
scrapes a manager against it). Like a Go scrape, no `*_created` series and no family without samples
(`exposition()` leaves them out, for this registry only: prometheus_client's switch is process-wide).
pyop adds its own families (`pyop_reconcile_errors_by_reason_total`, the daemons'
`pyop_daemon_runs_total` and `pyop_daemons_running`); Go's `go_*` collectors are Python's `python_*`
here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyscaffold_op.runtime.controller.queue import Queue

CONTROLLER_RUNTIME_VERSION = "v0.24.1"


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """Go's `prometheus.ExponentialBuckets`, multiplied the way Go does, so the `le` labels print as a
    Go scrape prints them (`9.999999999999999e-06`, not `1e-05`)."""
    out = []
    for _ in range(count):
        out.append(start)
        start *= factor
    return tuple(out)


# controller-runtime's reconcile_time buckets
RECONCILE_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
    1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
)  # fmt: skip
# the workqueue's and the webhooks' latency buckets: prometheus.ExponentialBuckets(10e-9, 10, 12)
QUEUE_BUCKETS = exponential_buckets(10e-9, 10, 12)
WEBHOOK_BUCKETS = QUEUE_BUCKETS

_WQ = ("name", "controller")
# (attribute, type, name, help, labels, buckets): controller-runtime's collectors, as it registers them.
_SPECS: tuple[tuple[str, str, str, str, tuple[str, ...], tuple[float, ...] | None], ...] = (
    # pkg/internal/controller/metrics
    ("reconcile_total", "Counter", "controller_runtime_reconcile_total",
     "Total number of reconciliations per controller", ("controller", "result"), None),
    ("reconcile_errors", "Counter", "controller_runtime_reconcile_errors_total",
     "Total number of reconciliation errors per controller", ("controller",), None),
    ("terminal_errors", "Counter", "controller_runtime_terminal_reconcile_errors_total",
     "Total number of terminal reconciliation errors per controller", ("controller",), None),
    ("reconcile_panics", "Counter", "controller_runtime_reconcile_panics_total",
     "Total number of reconciliation panics per controller", ("controller",), None),
    ("reconcile_time", "Histogram", "controller_runtime_reconcile_time_seconds",
     "Length of time per reconciliation per controller", ("controller",), RECONCILE_BUCKETS),
    ("max_concurrent", "Gauge", "controller_runtime_max_concurrent_reconciles",
     "Maximum number of concurrent reconciles per controller", ("controller",), None),
    ("active_workers", "Gauge", "controller_runtime_active_workers",
     "Number of currently used workers per controller", ("controller",), None),
    ("reconcile_timeouts", "Counter", "controller_runtime_reconcile_timeouts_total",
     "Total number of reconciliation timeouts per controller", ("controller",), None),
    # pkg/metrics/leaderelection.go (its slowpath counter is declared there but never registered)
    ("leader", "Gauge", "leader_election_master_status",
     "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates "
     "master. 'name' is the string used to identify the lease. Please make sure to group by name.",
     ("name",), None),
    # pkg/internal/metrics/workqueue.go
    ("wq_depth", "Gauge", "workqueue_depth", "Current depth of workqueue by workqueue and priority",
     (*_WQ, "priority"), None),
    ("wq_adds", "Counter", "workqueue_adds_total", "Total number of adds handled by workqueue", _WQ, None),
    ("wq_queue_duration", "Histogram", "workqueue_queue_duration_seconds",
     "How long in seconds an item stays in workqueue before being requested", _WQ, QUEUE_BUCKETS),
    ("wq_work_duration", "Histogram", "workqueue_work_duration_seconds",
     "How long in seconds processing an item from workqueue takes.", _WQ, QUEUE_BUCKETS),
    ("wq_unfinished", "Gauge", "workqueue_unfinished_work_seconds",
     "How many seconds of work has been done that is in progress and hasn't been observed by "
     "work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by "
     "observing the rate at which this increases.", _WQ, None),
    ("wq_longest", "Gauge", "workqueue_longest_running_processor_seconds",
     "How many seconds has the longest running processor for workqueue been running.", _WQ, None),
    ("wq_retries", "Counter", "workqueue_retries_total",
     "Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, "
     "explicit RequeueAfter or AddAfter calls)", _WQ, None),
    # pkg/webhook/internal/metrics
    ("webhook_latency", "Histogram", "controller_runtime_webhook_latency_seconds",
     "Histogram of the latency of processing admission requests", ("webhook",), WEBHOOK_BUCKETS),
    ("webhook_requests", "Counter", "controller_runtime_webhook_requests_total",
     "Total number of admission requests by HTTP status code.", ("webhook", "code"), None),
    ("webhook_in_flight", "Gauge", "controller_runtime_webhook_requests_in_flight",
     "Current number of admission requests being served.", ("webhook",), None),
    # pkg/webhook/admission/metrics, pkg/webhook/conversion/metrics: registered at 0
    ("webhook_panics", "Counter", "controller_runtime_webhook_panics_total",
     "Total number of webhook panics", (), None),
    ("conversion_webhook_panics", "Counter", "controller_runtime_conversion_webhook_panics_total",
     "Total number of conversion webhook panics", (), None),
)  # fmt: skip
# Process-wide in Go (client-go's and the certwatcher's globals) and here: read from their owners
# (`client/rest.py`, `certs/certs.py`) when scraped, by `_ProcessWideCollector`.
# (name, help, labels)
_PROCESS_WIDE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # pkg/metrics/client_go_adapter.go: client-go's request results (controller-runtime registers no
    # client-go latency histogram)
    ("rest_client_requests_total", "Number of HTTP requests, partitioned by status code, method, and host.",
     ("code", "method", "host")),
    # pkg/certwatcher/metrics
    ("certwatcher_read_certificate_total", "Total number of certificate reads", ()),
    ("certwatcher_read_certificate_errors_total", "Total number of certificate read errors", ()),
)  # fmt: skip
# pyop's own, beside controller-runtime's: which errors (by API Status reason; "Error" for any other
# exception, "Panic" for a recovered panic), so optimistic-concurrency conflicts can be told from failures.
_PYOP_SPECS: tuple[tuple[str, str, str, str, tuple[str, ...], tuple[float, ...] | None], ...] = (
    ("reconcile_errors_by_reason", "Counter", "pyop_reconcile_errors_by_reason_total",
     "Total number of reconciliation errors per controller and reason", ("controller", "reason"), None),
    # per-object daemons and timers (controller/daemon.py): calls by outcome, and how many run now
    ("daemon_runs", "Counter", "pyop_daemon_runs_total",
     "Total number of daemon and timer calls per controller, daemon and result (success, error, terminal)",
     ("controller", "daemon", "result"), None),
    ("daemons_running", "Gauge", "pyop_daemons_running",
     "Number of objects a daemon or timer runs for, per controller and daemon",
     ("controller", "daemon"), None),
)  # fmt: skip


# What every reconcile updates: kept in fastmetrics' lock-free counters and histograms, which a scrape
# reads exactly as prometheus_client's.
_HOT = frozenset(
    {"reconcile_total", "reconcile_time", "wq_adds", "wq_queue_duration", "wq_work_duration", "wq_retries"}
)


def controller_runtime_metrics() -> dict[str, tuple[str, tuple[str, ...]]]:
    """{family name: (type, label names)} of controller-runtime's metric set (no process/Go collectors):
    what a scrape of a manager is compared with."""
    table = {name: (kind.lower(), labels) for _a, kind, name, _h, labels, _b in _SPECS}
    for name, _help, labels in _PROCESS_WIDE:
        table[name] = ("counter", labels)
    return table


class _ProcessWideCollector:
    """client-go's `rest_client_requests_total` and the certwatcher's counters: process-wide tallies
    kept by the HTTP client and the certificate loader (a dict increment each), exposed when scraped."""

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily

        from pyscaffold_op.runtime.certs import certs
        from pyscaffold_op.runtime.client import rest

        (name, doc, labels), cert_total, cert_errors = _PROCESS_WIDE
        family = CounterMetricFamily(name.removesuffix("_total"), doc, labels=list(labels))
        for key, count in sorted(rest.REQUEST_RESULTS.items()):
            family.add_metric(list(key), count)
        yield family
        for (fname, fdoc, _l), value in ((cert_total, certs.READS.total), (cert_errors, certs.READS.errors)):
            yield CounterMetricFamily(fname.removesuffix("_total"), fdoc, value=value)


class _AsGoGathers:
    """A registry's view as Go's registry gathers it: without the `*_created` samples prometheus_client
    adds to counters, histograms and summaries, and without families that have no sample yet (a labelled
    metric no child of which was made)."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry

    def collect(self) -> Iterator[Any]:
        for family in self.registry.collect():
            if family.type in ("counter", "histogram", "summary", "gaugehistogram"):
                family.samples = [s for s in family.samples if not s.name.endswith("_created")]
            if family.samples:
                yield family


class RuntimeMetrics:
    """The manager's metrics: one prometheus_client collector attribute per `_SPECS` row, the
    process-wide client-go and certwatcher counters, and (for a registry it makes) the process and
    Python collectors."""

    reconcile_total: Any
    reconcile_errors: Any
    reconcile_errors_by_reason: Any
    daemon_runs: Any
    daemons_running: Any
    terminal_errors: Any
    reconcile_panics: Any
    reconcile_time: Any
    max_concurrent: Any
    active_workers: Any
    reconcile_timeouts: Any
    leader: Any
    wq_depth: Any
    wq_adds: Any
    wq_queue_duration: Any
    wq_work_duration: Any
    wq_retries: Any
    wq_unfinished: Any
    wq_longest: Any
    webhook_latency: Any
    webhook_requests: Any
    webhook_in_flight: Any
    webhook_panics: Any
    conversion_webhook_panics: Any

    def __init__(self, registry: Any = None) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        if registry is None:
            registry = CollectorRegistry()
            # process_* and python_* as Go's process and runtime collectors give controller-runtime.
            from prometheus_client import GCCollector, PlatformCollector, ProcessCollector

            ProcessCollector(registry=registry)
            PlatformCollector(registry=registry)
            GCCollector(registry=registry)
        self.registry = registry
        from pyscaffold_op.runtime.servers.fastmetrics import FastCounter, FastHistogram

        kinds = {"Counter": Counter, "Gauge": Gauge, "Histogram": Histogram}
        hot = {"Counter": FastCounter, "Histogram": FastHistogram}
        for attr, kind, name, doc, labels, buckets in _SPECS + _PYOP_SPECS:
            extra = {"buckets": buckets} if buckets else {}
            make = hot[kind] if attr in _HOT else kinds[kind]
            setattr(self, attr, make(name, doc, list(labels), registry=registry, **extra))
        registry.register(_ProcessWideCollector())
        # found again by a webhook server bound to this registry (WebhookServer.bind_metrics)
        registry.pyop_runtime_metrics = self

    def queue_metrics(self, name: str) -> _QueueMetrics:
        return _QueueMetrics(self, name)

    def bind_queue(self, name: str, queue: Queue) -> None:
        """In-progress gauges and the depth are computed when scraped: no ticker task, and no gauge
        update (a lock each) per add and get. The depth's `priority` is "" (controller-runtime's
        queue without priorities)."""
        self.wq_unfinished.labels(name, name).set_function(queue.unfinished_work_seconds)
        self.wq_longest.labels(name, name).set_function(queue.longest_running_processor_seconds)
        self.wq_depth.labels(name, name, "").set_function(queue.__len__)
        hooks = getattr(queue, "_metrics", None)
        if isinstance(hooks, _QueueMetrics):
            hooks.depth_scraped = True

    def bind_webhook(self, path: str) -> None:
        """A webhook served at `path`: its request counter's 200 and 500 children and its in-flight
        gauge exist from the start, as controller-runtime's `InstrumentedHook` makes them."""
        self.webhook_requests.labels(path, "200")
        self.webhook_requests.labels(path, "500")
        self.webhook_in_flight.labels(path)

    def exposition(self) -> bytes:
        """The text exposition format, as a Go manager's: no `*_created` series, no empty families."""
        from prometheus_client import generate_latest

        return generate_latest(_AsGoGathers(self.registry))

    def value(self, name: str, labels: dict[str, str] | None = None) -> float:
        """A sample's current value (0.0 when absent): handy in tests."""
        v = self.registry.get_sample_value(name, labels or {})
        return v if v is not None else 0.0


def runtime_metrics_of(registry: Any) -> RuntimeMetrics:
    """The `RuntimeMetrics` registered in `registry` (made there when there are none yet)."""
    found = getattr(registry, "pyop_runtime_metrics", None)
    return found if isinstance(found, RuntimeMetrics) else RuntimeMetrics(registry)


class _QueueMetrics:
    """The work queue's hooks bound to one queue name (controller-runtime labels both name and controller)."""

    def __init__(self, m: RuntimeMetrics, name: str) -> None:
        self._depth = m.wq_depth.labels(name, name, "")
        self._adds = m.wq_adds.labels(name, name)
        self._queued = m.wq_queue_duration.labels(name, name)
        self._work = m.wq_work_duration.labels(name, name)
        self._retries = m.wq_retries.labels(name, name)
        self.depth_scraped = False  # bind_queue: the gauge reads the queue's length itself

    def on_add(self) -> None:
        self._adds.inc()

    def on_get(self, queued_seconds: float) -> None:
        self._queued.observe(queued_seconds)

    def on_done(self, work_seconds: float) -> None:
        self._work.observe(work_seconds)

    def on_retry(self) -> None:
        self._retries.inc()

    def set_depth(self, depth: int) -> None:
        if not self.depth_scraped:
            self._depth.set(depth)
