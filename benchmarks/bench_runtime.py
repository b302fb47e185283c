"""Benchmark the runtime against the envtest emulator's loopback HTTP server.

    python benchmarks/bench_runtime.py [--objects 10000] [--latency-samples 1000]

The emulator runs in a daemon thread with its own event loop (`Environment.start_in_thread()`), the
manager on the main loop, so they talk over real sockets as an operator and an API server do.

Measures, for one namespaced kind with a trivial reconciler:
* reconciles/s: manager start -> every one of N pre-created objects reconciled (initial paged list,
  decode, events, queue, workers), and the steady rate once cached (a second burst of N updates);
* event -> reconcile latency: p50/p99 from sending a patch to the reconcile of that object;
* RSS of the process with N objects cached, and the part the manager added (the emulator's own copy of
  the objects lives in the same process, so the delta is the runtime's cost).
Goals: >= 1,000 reconciles/s and < 150 MB. After the initial sync, the reconcile rate can be no higher
than the server's write rate (each event is one write); the table shows both, and how far the last
reconcile trails the last write.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel
from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Manager, ManagerOptions, Request, load_config, new_client

CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: benchitems.bench.pyop.io}
spec:
  group: bench.pyop.io
  names: {kind: BenchItem, listKind: BenchItemList, plural: benchitems, singular: benchitem}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              owner: {type: string}
"""


class BenchSpec(KubeModel):
    size: int = 0
    owner: str = ""


class BenchItem(CustomResource):
    gvk = GroupVersionKind("bench.pyop.io", "v1", "BenchItem")
    spec: BenchSpec = BenchSpec()


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Counter:
    """The trivial reconciler: count, and time the first reconcile after a marked send."""

    def __init__(self) -> None:
        self.count = 0
        self.done = asyncio.Event()
        self.target = 0
        self.sent: dict[str, float] = {}
        self.latencies: list[float] = []

    async def reconcile(self, request: Request) -> None:
        self.count += 1
        sent = self.sent.pop(request.name, None)
        if sent is not None:
            self.latencies.append(time.perf_counter() - sent)
        if self.count >= self.target:
            self.done.set()


async def create_all(client, n: int, concurrency: int = 64) -> float:
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with sem:
            await client.create(
                BenchItem.model_validate(
                    {
                        "metadata": {
                            "name": f"item-{i:05d}",
                            "namespace": "default",
                            "labels": {"bench": "yes"},
                        },
                        "spec": {"size": i, "owner": "bench"},
                    }
                )
            )

    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return time.perf_counter() - t0


def serve() -> None:
    """`--serve`: run the emulator in this process, print its kubeconfig path, stop when stdin closes."""
    with tempfile.TemporaryDirectory() as tmp:
        crd = Path(tmp) / "crd.yaml"
        crd.write_text(CRD)
        env = Environment(crd_paths=[crd], kubelet=None).start_in_thread()
        print(env.kubeconfig_path, flush=True)
        sys.stdin.read()
        env.stop()


class Emulator:
    """The emulator in a thread of this process (default, as envtest is used in tests) or in a child
    process (`--emulator process`: no GIL shared with the manager, and RSS is the manager's alone)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.env: Environment | None = None
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> Any:
        if self.mode == "thread":
            with tempfile.TemporaryDirectory() as tmp:
                crd = Path(tmp) / "crd.yaml"
                crd.write_text(CRD)
                self.env = Environment(crd_paths=[crd], kubelet=None).start_in_thread()
            return self.env.config
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        return load_config(self.proc.stdout.readline().strip())

    def stop(self) -> None:
        if self.env is not None:
            self.env.stop()
        if self.proc is not None and self.proc.stdin is not None:
            self.proc.stdin.close()
            self.proc.wait(10)


async def run(n: int, samples: int, workers: int, mode: str) -> dict[str, float]:
    emulator = Emulator(mode)
    config = emulator.start()
    results: dict[str, float] = {}
    client = new_client(config)
    try:
        results["create_s"] = await create_all(client, n)
        gc.collect()
        rss_before = rss_mb()
        mgr = Manager(config, ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0"))
        rec = Counter()
        rec.target = n
        mgr.builder().for_(BenchItem).with_options(max_concurrent_reconciles=workers).complete(rec)
        t0 = time.perf_counter()
        async with mgr.running(timeout=120):
            results["sync_s"] = time.perf_counter() - t0
            await asyncio.wait_for(rec.done.wait(), 300)
            results["initial_s"] = time.perf_counter() - t0
            results["initial_rps"] = n / results["initial_s"]
            results["drain_rps"] = n / max(1e-9, results["initial_s"] - results["sync_s"])
            gc.collect()
            results["rss_mb"] = rss_mb()
            results["rss_delta_mb"] = results["rss_mb"] - rss_before

            # Steady state: N more events (server-side patches) through the watch, the queue and workers.
            rec.count, rec.target = 0, n
            rec.done.clear()
            sem = asyncio.Semaphore(64)

            async def bump(i: int) -> None:
                async with sem:
                    await client.patch(BenchItem, f"item-{i:05d}", {"spec": {"size": -(i + 1)}})

            t1 = time.perf_counter()
            await asyncio.gather(*(bump(i) for i in range(n)))
            results["writes_s"] = time.perf_counter() - t1
            await asyncio.wait_for(rec.done.wait(), 300)
            results["steady_s"] = time.perf_counter() - t1
            results["steady_rps"] = n / results["steady_s"]
            # How far reconciles trail the last write: ~0 means the runtime keeps up with the server.
            results["lag_ms"] = (results["steady_s"] - results["writes_s"]) * 1000

            # Latency: one event at a time, send -> reconcile.
            rec.target = 10**12
            for i in range(samples):
                name = f"item-{i % n:05d}"
                rec.sent[name] = time.perf_counter()
                await client.patch(BenchItem, name, {"spec": {"size": 10**6 + i}})
                while name in rec.sent:  # noqa: ASYNC110 - polling keeps the reconciler trivial
                    await asyncio.sleep(0.0002)
            lat = sorted(rec.latencies)
            results["p50_ms"] = statistics.median(lat) * 1000
            results["p99_ms"] = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000
            results["errors"] = mgr.metrics.value(
                "controller_runtime_reconcile_errors_total", {"controller": "benchitem"}
            )
    finally:
        await client.close()
        emulator.stop()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--latency-samples", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=1, help="max_concurrent_reconciles")
    parser.add_argument("--emulator", choices=["thread", "process"], default="thread")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return 0
    r = asyncio.run(run(args.objects, args.latency_samples, args.workers, args.emulator))
    n = args.objects
    rss_label = "RSS, process" + (" (emulator + manager)" if args.emulator == "thread" else " (manager)")
    rows = [
        (
            "create N objects (client, 64 in flight)",
            f"{r['create_s']:.2f} s",
            f"{n / r['create_s']:.0f} obj/s",
            "",
        ),
        ("manager start -> caches synced", f"{r['sync_s']:.2f} s", "", ""),
        (
            "start -> all N reconciled",
            f"{r['initial_s']:.2f} s",
            f"{r['initial_rps']:.0f} rec/s",
            ">= 1000/s",
        ),
        ("caches synced -> all N reconciled", "", f"{r['drain_rps']:.0f} rec/s", "queue + workers"),
        ("N patches sent (64 in flight)", f"{r['writes_s']:.2f} s", f"{n / r['writes_s']:.0f} writes/s", ""),
        (
            "N patches -> all reconciled",
            f"{r['steady_s']:.2f} s",
            f"{r['steady_rps']:.0f} rec/s",
            "write-bound",
        ),
        ("last reconcile after last write", f"{r['lag_ms']:.1f} ms", "", "small"),
        ("event -> reconcile p50", f"{r['p50_ms']:.2f} ms", "", ""),
        ("event -> reconcile p99", f"{r['p99_ms']:.2f} ms", "", ""),
        (rss_label, f"{r['rss_mb']:.0f} MB", "", ""),
        ("RSS added by the manager (N cached)", f"{r['rss_delta_mb']:.0f} MB", "", "< 150 MB"),
        ("reconcile errors", f"{r['errors']:.0f}", "", "0"),
    ]
    print(
        f"pyop runtime benchmark: {n} objects, {args.latency_samples} latency samples, "
        f"{args.workers} worker(s), emulator in a {args.emulator}"
    )
    print(
        f"{platform.node()} | {platform.processor() or platform.machine()} | {os.cpu_count()} CPUs | "
        f"Python {platform.python_version()} | {datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    )
    width = max(len(row[0]) for row in rows)
    print(f"{'measure':<{width}}  {'value':>10}  {'rate':>12}  goal")
    for name, value, rate, goal in rows:
        print(f"{name:<{width}}  {value:>10}  {rate:>12}  {goal}")
    ok = r["initial_rps"] >= 1000 and r["rss_delta_mb"] < 150 and r["errors"] == 0
    print("goals met" if ok else "GOALS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
