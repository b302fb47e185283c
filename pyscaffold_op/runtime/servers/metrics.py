"""Prometheus metrics with controller-runtime's and client-go's names, in a per-manager registry
(two managers in one process, as in tests, must not collide in prometheus_client's global registry)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyscaffold_op.runtime.controller.queue import Queue

# controller-runtime's reconcile_time buckets; client-go's workqueue buckets: 10 ns * 10^n.
RECONCILE_BUCKETS = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.15,
    0.2,
    0.25,
    0.3,
    0.35,
    0.4,
    0.45,
    0.5,
    0.6,
    0.7,
    0.8,
    0.9,
    1.0,
    1.25,
    1.5,
    1.75,
    2.0,
    2.5,
    3.0,
    3.5,
    4.0,
    4.5,
    5,
    6,
    7,
    8,
    9,
    10,
    15,
    20,
    25,
    30,
    40,
    50,
    60,
)
QUEUE_BUCKETS = tuple(1e-8 * 10**i for i in range(12))

# (attribute, type, name, help, labels, buckets): controller-runtime's and client-go's metrics.
_SPECS: tuple[tuple[str, str, str, str, tuple[str, ...], tuple[float, ...] | None], ...] = (
    (
        "reconcile_total",
        "Counter",
        "controller_runtime_reconcile_total",
        "Total number of reconciliations per controller",
        ("controller", "result"),
        None,
    ),
    (
        "reconcile_errors",
        "Counter",
        "controller_runtime_reconcile_errors_total",
        "Total number of reconciliation errors per controller",
        ("controller",),
        None,
    ),
    # pyop's addition: which errors (by API Status reason; "Error" for any other exception), so
    # optimistic-concurrency conflicts can be told from real failures.
    (
        "reconcile_errors_by_reason",
        "Counter",
        "pyop_reconcile_errors_by_reason_total",
        "Total number of reconciliation errors per controller and reason",
        ("controller", "reason"),
        None,
    ),
    (
        "terminal_errors",
        "Counter",
        "controller_runtime_terminal_reconcile_errors_total",
        "Total number of terminal reconciliation errors per controller",
        ("controller",),
        None,
    ),
    (
        "reconcile_panics",
        "Counter",
        "controller_runtime_reconcile_panics_total",
        "Total number of reconciliation panics per controller",
        ("controller",),
        None,
    ),
    (
        "reconcile_time",
        "Histogram",
        "controller_runtime_reconcile_time_seconds",
        "Length of time per reconciliation per controller",
        ("controller",),
        RECONCILE_BUCKETS,
    ),
    (
        "max_concurrent",
        "Gauge",
        "controller_runtime_max_concurrent_reconciles",
        "Maximum number of concurrent reconciles per controller",
        ("controller",),
        None,
    ),
    (
        "active_workers",
        "Gauge",
        "controller_runtime_active_workers",
        "Number of currently used workers per controller",
        ("controller",),
        None,
    ),
    (
        "leader",
        "Gauge",
        "leader_election_master_status",
        "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
        "backup, 1 indicates master. 'name' is the string used to identify the lease.",
        ("name",),
        None,
    ),
    ("wq_depth", "Gauge", "workqueue_depth", "Current depth of workqueue", ("name", "controller"), None),
    (
        "wq_adds",
        "Counter",
        "workqueue_adds_total",
        "Total number of adds handled by workqueue",
        ("name", "controller"),
        None,
    ),
    (
        "wq_queue_duration",
        "Histogram",
        "workqueue_queue_duration_seconds",
        "How long in seconds an item stays in workqueue before being requested",
        ("name", "controller"),
        QUEUE_BUCKETS,
    ),
    (
        "wq_work_duration",
        "Histogram",
        "workqueue_work_duration_seconds",
        "How long in seconds processing an item from workqueue takes",
        ("name", "controller"),
        QUEUE_BUCKETS,
    ),
    (
        "wq_retries",
        "Counter",
        "workqueue_retries_total",
        "Total number of retries handled by workqueue",
        ("name", "controller"),
        None,
    ),
    (
        "wq_unfinished",
        "Gauge",
        "workqueue_unfinished_work_seconds",
        "How many seconds of work has been done that is in progress and hasn't "
        "been observed by work_duration.",
        ("name", "controller"),
        None,
    ),
    (
        "wq_longest",
        "Gauge",
        "workqueue_longest_running_processor_seconds",
        "How many seconds has the longest running processor for workqueue been running.",
        ("name", "controller"),
        None,
    ),
)


class RuntimeMetrics:
    """The manager's metrics: one prometheus_client collector attribute per `_SPECS` row."""

    reconcile_total: Any
    reconcile_errors: Any
    reconcile_errors_by_reason: Any
    terminal_errors: Any
    reconcile_panics: Any
    reconcile_time: Any
    max_concurrent: Any
    active_workers: Any
    leader: Any
    wq_depth: Any
    wq_adds: Any
    wq_queue_duration: Any
    wq_work_duration: Any
    wq_retries: Any
    wq_unfinished: Any
    wq_longest: Any

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
        kinds = {"Counter": Counter, "Gauge": Gauge, "Histogram": Histogram}
        for attr, kind, name, doc, labels, buckets in _SPECS:
            extra = {"buckets": buckets} if buckets else {}
            setattr(self, attr, kinds[kind](name, doc, list(labels), registry=registry, **extra))

    def queue_metrics(self, name: str) -> _QueueMetrics:
        return _QueueMetrics(self, name)

    def bind_queue(self, name: str, queue: Queue) -> None:
        """In-progress gauges and the depth are computed when scraped: no ticker task, and no gauge
        update (a lock each) per add and get."""
        self.wq_unfinished.labels(name, name).set_function(queue.unfinished_work_seconds)
        self.wq_longest.labels(name, name).set_function(queue.longest_running_processor_seconds)
        self.wq_depth.labels(name, name).set_function(queue.__len__)
        hooks = getattr(queue, "_metrics", None)
        if isinstance(hooks, _QueueMetrics):
            hooks.depth_scraped = True

    def exposition(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)

    def value(self, name: str, labels: dict[str, str] | None = None) -> float:
        """A sample's current value (0.0 when absent): handy in tests."""
        v = self.registry.get_sample_value(name, labels or {})
        return v if v is not None else 0.0


class _QueueMetrics:
    """The work queue's hooks bound to one queue name (controller-runtime labels both name and controller)."""

    def __init__(self, m: RuntimeMetrics, name: str) -> None:
        self._depth = m.wq_depth.labels(name, name)
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
