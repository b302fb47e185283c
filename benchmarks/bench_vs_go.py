"""pyop and Go's controller-runtime side by side, and pyop sharded over 1, 2 and 4 replicas (issue 31).

    python benchmarks/bench_vs_go.py [--sizes 1000,10000] [--runs 1] [--replicas 1,2,4] [--no-child]

One table per size, one column per operator setup, every column on a fresh emulator (bench_vs_kopf's
server: `pyop envtest serve --no-kubelet --no-workloads` in a child process, counting requests):

* `pyop`: one manager, default options (as bench_vs_kopf's pyop operator);
* `controller-runtime`: the kubebuilder v4.16.0 project in benchmarks/goperator/ (controller-runtime
  v0.25.2, k8s v0.37.2), built with `go build` into benchmarks/goperator/bin/manager when missing or
  older than its sources, run with kubebuilder's defaults (1 worker: `--go-workers` changes it);
* `pyop xN`: N manager processes with `ManagerOptions(sharding=...)`, each reconciling ~1/N of the keys.

Every operator does the same work per BenchItem: with `--child` (the default) make sure a ConfigMap of
the same name exists, controlled by the item (`Owns(ConfigMap)` / `owns(ConfigMap)`); then patch
`status.observed = spec.value` and `status.handledAt` (wall time the reconcile started) with one merge
patch; an item already current costs no write. Both skip the status-only update their own patch causes
(pyop's for_() default; GenerationChangedPredicate in the Go peer).

The driver and the figures are bench_vs_kopf's: a burst of N creates (64 in flight) until the driver's
own watch sees every item done; operator CPU per object (all replicas together), server CPU and
requests per object, RSS after the burst (the largest replica's, and all replicas' together), then
event -> handler and end-to-end latency p50, one object at a time. Record the cores: with N replicas on
fewer cores than N + the server, the processes share the cores and the server becomes the bottleneck.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# bench_vs_kopf: the server, the driver's HTTP client and watch, CPU and RSS reads
import bench_vs_kopf as kb

GOPERATOR = Path(__file__).resolve().parent / "goperator"
GO_BINARY = GOPERATOR / "bin" / "manager"
SHARD_GROUP = "bench"


# -- the operators ------------------------------------------------------------------------------------


def run_pyop_operator(kubeconfig: str, child: bool, identity: str | None, workers: int | None) -> None:
    from pyscaffold_op.apimachinery import ObjectMeta
    from pyscaffold_op.models.core_v1 import ConfigMap
    from pyscaffold_op.runtime import (
        AlreadyExists,
        Manager,
        ManagerOptions,
        NotFound,
        Request,
        ShardingOptions,
        controllerutil,
        load_config,
        run,
    )

    BenchItem = kb.bench_item_model()
    sharding = None
    if identity is not None:
        sharding = ShardingOptions(
            name=SHARD_GROUP, identity=identity, lease_duration=5.0, renew_deadline=3.0, retry_period=0.5
        )
    mgr = Manager(
        load_config(kubeconfig),
        ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0", sharding=sharding),
    )
    client = mgr.client

    async def reconcile(req: Request) -> None:
        started = time.time()
        try:
            item = await client.get(BenchItem, req.name, namespace=req.namespace)
        except NotFound:
            return
        if child:
            try:
                await client.get(ConfigMap, req.name, namespace=req.namespace)
            except NotFound:
                cm = ConfigMap(
                    metadata=ObjectMeta(name=req.name, namespace=req.namespace),
                    data={"value": str(item.spec.value)},
                )
                controllerutil.set_controller_reference(item, cm)
                with contextlib.suppress(AlreadyExists):
                    await client.create(cm)
        if item.status is not None and item.status.observed == item.spec.value:
            return
        patch = {"status": {"observed": item.spec.value, "handledAt": started}}
        await client.status().patch(BenchItem, req.name, patch, namespace=req.namespace)

    builder = mgr.builder().for_(BenchItem)
    if child:
        builder = builder.owns(ConfigMap)
    if workers:
        builder = builder.with_options(max_concurrent_reconciles=workers)
    builder.complete(reconcile)
    run(mgr.start())


def go_sources_newer_than_binary() -> bool:
    if not GO_BINARY.exists():
        return True
    built = GO_BINARY.stat().st_mtime
    sources = [*GOPERATOR.rglob("*.go"), GOPERATOR / "go.mod", GOPERATOR / "go.sum"]
    return any(p.stat().st_mtime > built for p in sources if "bin" not in p.parts)


def build_go_operator() -> None:
    """`go build` the Go peer into benchmarks/goperator/bin/manager (modules from the Go proxy)."""
    if not go_sources_newer_than_binary():
        return
    go = shutil.which("go")
    if go is None:
        raise SystemExit("the Go peer needs Go (1.26) on PATH: https://go.dev/dl/")
    print(
        f"building {GO_BINARY.relative_to(Path.cwd()) if GO_BINARY.is_relative_to(Path.cwd()) else GO_BINARY}"
    )
    subprocess.run([go, "build", "-o", str(GO_BINARY), "./cmd"], cwd=GOPERATOR, check=True)


# -- one column ---------------------------------------------------------------------------------------


def start_operators(setup: str, kubeconfig: str, args: argparse.Namespace) -> list[subprocess.Popen[bytes]]:
    env = {**os.environ, "KUBECONFIG": kubeconfig}
    err = None if os.environ.get("BENCH_VERBOSE") else subprocess.DEVNULL
    if setup == "go":
        argv = [
            str(GO_BINARY),
            f"--kubeconfig={kubeconfig}",
            "--metrics-bind-address=0",
            "--health-probe-bind-address=0",
            f"--child={'true' if args.child else 'false'}",
            f"--max-concurrent-reconciles={args.go_workers}",
        ]
        return [subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)]
    replicas = 1 if setup == "pyop" else int(setup.removeprefix("pyop x"))
    procs = []
    for i in range(replicas):
        argv = [sys.executable, __file__, "--operator", kubeconfig, "--child" if args.child else "--no-child"]
        if setup != "pyop":
            argv += ["--identity", f"replica-{i}"]
        if args.pyop_workers:
            argv += ["--pyop-workers", str(args.pyop_workers)]
        procs.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env))
    return procs


async def wait_for_shards(transport: kb.RawHTTP, replicas: int, timeout: float = 60.0) -> None:  # noqa: ASYNC109
    """Until the group's Leases show `replicas` members, all acknowledging the same view."""
    from pyscaffold_op.runtime.sharding.assign import view_digest
    from pyscaffold_op.runtime.sharding.shards import GROUP_LABEL, VIEW_ANNOTATION

    path = (
        f"/apis/coordination.k8s.io/v1/namespaces/{kb.NAMESPACE}/leases"
        f"?labelSelector={GROUP_LABEL}%3D{SHARD_GROUP}"
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        items = json.loads(await transport.request("GET", path))["items"]
        holders = [i["spec"].get("holderIdentity") for i in items]
        acks = {(i["metadata"].get("annotations") or {}).get(VIEW_ANNOTATION) for i in items}
        if len(holders) == replicas and acks == {view_digest(holders)}:
            await asyncio.sleep(1.0)  # a retry period: each member promotes the view it sees complete
            return
        await asyncio.sleep(0.2)
    raise TimeoutError(f"{replicas} shard members did not agree within {timeout:g}s")


async def drive(
    server: kb.Server, procs: list[subprocess.Popen[bytes]], n: int, samples: int, replicas: int
) -> dict[str, float]:
    from pyscaffold_op.runtime import load_config

    transport = kb.RawHTTP(load_config(server.kubeconfig).server)
    path = f"/apis/{kb.GROUP}/{kb.VERSION}/namespaces/{kb.NAMESPACE}/{kb.PLURAL}"
    watcher = kb.Watcher(transport)
    out: dict[str, float] = {}
    try:
        await watcher.start()
        if replicas:
            await wait_for_shards(transport, replicas)

        async def create_and_wait(name: str, value: int) -> None:
            waiter = watcher.waiters[name] = asyncio.Event()
            watcher.sent_at[name] = time.perf_counter()
            await transport.request("POST", path, kb._body(name, value))
            await asyncio.wait_for(waiter.wait(), 60)

        for i in range(max(1, replicas) * 4):  # warm-up: every replica has handled something
            await create_and_wait(f"warmup-{i}", 1)
        watcher.target = len(watcher.done) + n
        before_req = server.counts()
        before_op = sum(kb.cpu_seconds(p.pid) for p in procs)
        before_srv = kb.cpu_seconds(server.proc.pid)
        before_drv = time.process_time()
        sem = asyncio.Semaphore(64)

        async def one(i: int) -> None:
            async with sem:
                await transport.request("POST", path, kb._body(f"item-{i:05d}", i))

        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        await asyncio.wait_for(watcher.all_done.wait(), 60 + n / 20)
        out["burst_s"] = time.perf_counter() - t0
        out["throughput"] = n / out["burst_s"]
        after_req = server.counts()
        out["op_cpu_ms"] = (sum(kb.cpu_seconds(p.pid) for p in procs) - before_op) * 1000 / n
        out["srv_cpu_ms"] = (kb.cpu_seconds(server.proc.pid) - before_srv) * 1000 / n
        out["drv_cpu_ms"] = (time.process_time() - before_drv) * 1000 / n
        out["requests"] = (after_req["total"] - before_req["total"]) / n
        rss = [kb.rss_mb(p.pid) for p in procs]
        out["rss_mb"] = max(rss)
        out["rss_total_mb"] = sum(rss)
        for i in range(samples):
            await create_and_wait(f"lat-{i:04d}", i + 1)
        lat = [f"lat-{i:04d}" for i in range(samples)]
        out["handler_p50_ms"] = statistics.median(watcher.handled_at[k] for k in lat) * 1000
        out["e2e_p50_ms"] = statistics.median(watcher.done[k] - watcher.sent_at[k] for k in lat) * 1000
    finally:
        await watcher.stop()
        await transport.close()
    return out


def one_run(setup: str, n: int, args: argparse.Namespace) -> dict[str, float]:
    server = kb.Server()
    procs = start_operators(setup, server.kubeconfig, args)
    replicas = int(setup.removeprefix("pyop x")) if setup.startswith("pyop x") else 0
    try:
        from pyscaffold_op.runtime import loops

        return loops.run(drive(server, procs, n, args.latency_samples, replicas))
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        server.stop()


ROWS = [
    ("throughput", "burst throughput (objects/s)", "{:.0f}"),
    ("handler_p50_ms", "event -> handler p50 (ms)", "{:.2f}"),
    ("e2e_p50_ms", "end-to-end p50 (ms)", "{:.2f}"),
    ("op_cpu_ms", "operator CPU per object (ms, all replicas)", "{:.2f}"),
    ("rss_mb", "operator RSS after the burst (MB, largest)", "{:.0f}"),
    ("rss_total_mb", "operator RSS, all replicas (MB)", "{:.0f}"),
    ("requests", "server requests per object", "{:.2f}"),
    ("srv_cpu_ms", "server CPU per object (ms)", "{:.2f}"),
    ("drv_cpu_ms", "driver CPU per object (ms)", "{:.2f}"),
]


def label(setup: str) -> str:
    return {"go": "ctrl-runtime"}.get(setup, setup)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000", help="burst sizes, comma-separated (add 10000 for RSS)")
    parser.add_argument("--runs", type=int, default=1, help="runs per setup and size (setups rotate)")
    parser.add_argument("--replicas", default="1,2,4", help="sharded pyop replica counts ('' for none)")
    parser.add_argument("--latency-samples", type=int, default=30)
    parser.add_argument("--child", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument(
        "--go-workers", type=int, default=0, help="Go MaxConcurrentReconciles (0: its default, 1)"
    )
    parser.add_argument(
        "--pyop-workers", type=int, default=0, help="pyop max_concurrent_reconciles (0: default, 8)"
    )
    parser.add_argument("--skip-go", action="store_true", help="leave the controller-runtime column out")
    parser.add_argument("--json", type=Path, help="write every run's raw figures here")
    parser.add_argument("--operator", metavar="KUBECONFIG", help=argparse.SUPPRESS)
    parser.add_argument("--identity", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.operator:
        run_pyop_operator(args.operator, args.child, args.identity, args.pyop_workers or None)
        return 0
    setups = ["pyop"]
    if not args.skip_go:
        build_go_operator()
        setups.append("go")
    setups += [f"pyop x{r}" for r in args.replicas.split(",") if r]
    sizes = [int(s) for s in args.sizes.split(",") if s]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"pyop vs controller-runtime v0.25.2, pyop sharded: sizes {sizes}, {args.runs} run(s) each, "
        f"child ConfigMap {'on' if args.child else 'off'}, Go workers {args.go_workers or 'default (1)'}, "
        f"pyop workers {args.pyop_workers or 'default (8)'}"
    )
    print(
        f"{platform.node()} | {platform.processor() or platform.machine()} | {cores} cores available | "
        f"Python {platform.python_version()} | {datetime.now(UTC):%Y-%m-%d %H:%M} UTC | "
        f"load average {kb.load_average()}"
    )
    raw: dict[str, Any] = {"cores": cores, "sizes": {}}
    for n in sizes:
        runs: dict[str, list[dict[str, float]]] = {s: [] for s in setups}
        for r in range(args.runs):
            order = setups[r % len(setups) :] + setups[: r % len(setups)]
            for setup in order:
                result = one_run(setup, n, args)
                runs[setup].append(result)
                print(
                    f"  n={n} run {r + 1} {label(setup)}: {result['throughput']:.0f} obj/s, "
                    f"CPU {result['op_cpu_ms']:.2f} ms/obj, RSS {result['rss_mb']:.0f} MB, "
                    f"load {kb.load_average()}",
                    flush=True,
                )
        med = {s: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for s, rs in runs.items()}
        raw["sizes"][str(n)] = runs
        width = max(len(lbl) for _k, lbl, _f in ROWS)
        print(f"\n{n} objects (median of {args.runs} run(s); ratios are pyop / controller-runtime)")
        head = "".join(f"  {label(s):>12}" for s in setups)
        ratio_head = "  pyop/ctrl-rt" if "go" in setups else ""
        print(f"{'measure':<{width}}{head}{ratio_head}")
        for key, lbl, fmt in ROWS:
            cells = "".join(f"  {fmt.format(med[s][key]):>12}" for s in setups)
            ratio = ""
            if "go" in setups and med["go"][key]:
                ratio = f"  {med['pyop'][key] / med['go'][key]:>12.2f}x"
            print(f"{lbl:<{width}}{cells}{ratio}")
        if len([s for s in setups if s.startswith("pyop x")]) > 1:
            base = next(s for s in setups if s.startswith("pyop x"))
            scale = "  ".join(
                f"{s}: {med[s]['throughput'] / med[base]['throughput']:.2f}x"
                for s in setups
                if s.startswith("pyop x")
            )
            print(f"sharded throughput against {base}: {scale} ({cores} cores shared with the server)")
    print(f"load average at the end: {kb.load_average()}")
    if args.json:
        args.json.write_text(json.dumps(raw, indent=1))
    return 0


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
