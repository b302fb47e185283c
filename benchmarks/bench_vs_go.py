"""pyop and Go's controller-runtime side by side on the real kube-apiserver and on the emulator (issues
31, 37), and pyop sharded over N replicas.

    python benchmarks/bench_vs_go.py [--servers real,emulator] [--sizes 1000] [--runs 3]
        [--setups pyop,go,go-gomaxprocs1,go-json] [--replicas 2] [--workers 8] [--pin auto]

One table per server and size, one column per operator setup, each run on a fresh server, the setups
alternating run by run (the first setup of run r is setup r mod k):

* `real`: kube-apiserver + etcd (envtest's ControlPlane, the binaries of `make oracles`), HTTPS with
  its CA and a bearer token, requests counted by its own `apiserver_request_total`;
* `emulator`: `pyop envtest serve --no-kubelet --no-workloads` in a child process (bench_vs_kopf's
  server), which now answers protobuf to a client that asks for it, as a cluster does.

Setups: `pyop` (one manager); `go` (the kubebuilder v4.16.0 project in benchmarks/goperator/,
controller-runtime v0.25.2, k8s v0.37.2, built with `go build` when missing or older than its
sources), as it runs by default, protobuf for the built-in ConfigMaps; `go-gomaxprocs1` the same with
GOMAXPROCS=1; `go-json` the same forced to JSON (`--force-json`); `pyop-xN`: N sharded managers. Every
setup runs `--workers` reconcile workers (8 unless told: pyop's default; controller-runtime's own is 1).

Every operator does the same work per BenchItem: with `--child` (the default) make sure a ConfigMap of
the same name exists, controlled by the item (`Owns(ConfigMap)` / `owns(ConfigMap)`); then patch
`status.observed = spec.value` and `status.handledAt` (wall time the reconcile started) with one merge
patch; an item already current costs no write. Both skip the status-only update their own patch causes
(pyop's for_() default; GenerationChangedPredicate in the Go peer).

The driver: a burst of N creates (64 in flight) until the driver's own watch sees every item done;
operator CPU per object (all replicas together), server CPU (kube-apiserver + etcd) and requests per
object, each CPU read once it has settled (what the burst set off is counted); RSS after the burst;
then event -> handler and end-to-end latency p50, one object at a time. Tables give the median and
the range of the runs, and the load average before each run. `--pin auto` puts each operator on a
core of its own (taskset) and the server and driver on the others when the machine has at least 3
cores; with fewer it says so and pins nothing.
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
from realserver import RealServer, settled_cpu

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

    counted = os.environ.get("BENCH_OPERATOR_COUNTERS")  # or CPU per call of the hot paths (hotcounters)
    counters = None
    if counted:
        from hotcounters import HotCounters

        counters = HotCounters.install()  # before anything binds the wrapped methods
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
    seen: set[str] = set()  # the objects reconciled, for BENCH_OPERATOR_COUNTERS' per-object figures
    count_objects = counters is not None

    async def reconcile(req: Request) -> None:
        started = time.time()
        if count_objects:
            seen.add(req.name)
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
    profile = os.environ.get("BENCH_OPERATOR_PROFILE")  # where the pyop operator writes its cProfile
    sample = os.environ.get("BENCH_OPERATOR_SAMPLE")  # or its CPU samples (collapsed stacks + summary)
    if counters is not None:
        run(mgr.start())
        counters.write(Path(str(counted)), objects=len(seen))
        return
    if sample:
        from cpusampler import CpuSampler

        with CpuSampler() as sampler:
            run(mgr.start())
        sampler.write_collapsed(Path(sample))
        Path(sample + ".summary").write_text(sampler.summary(60))
        return
    if not profile:
        run(mgr.start())
        return
    import cProfile

    with cProfile.Profile(time.process_time) as prof:  # CPU time: waiting in the loop is not cost
        run(mgr.start())
    prof.dump_stats(profile)


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


SETUPS = ("pyop", "go", "go-gomaxprocs1", "go-json")


def start_operators(
    setup: str, kubeconfig: str, args: argparse.Namespace, core: int | None
) -> list[subprocess.Popen[bytes]]:
    env = {**os.environ, "KUBECONFIG": kubeconfig}
    err = None if os.environ.get("BENCH_VERBOSE") else subprocess.DEVNULL
    pin = ["taskset", "-c", str(core)] if core is not None else []
    if setup.startswith("go"):
        argv = [
            *pin,
            str(GO_BINARY),
            f"--kubeconfig={kubeconfig}",
            "--metrics-bind-address=0",
            "--health-probe-bind-address=0",
            f"--child={'true' if args.child else 'false'}",
            f"--max-concurrent-reconciles={args.workers}",
        ]
        if setup == "go-json":
            argv.append("--force-json")
        if setup == "go-gomaxprocs1":
            env["GOMAXPROCS"] = "1"
        return [subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)]
    replicas = 1 if setup == "pyop" else int(setup.removeprefix("pyop-x"))
    procs = []
    for i in range(replicas):
        argv = [*pin, sys.executable, __file__, "--operator", kubeconfig]
        argv += ["--child" if args.child else "--no-child", "--pyop-workers", str(args.workers)]
        if setup != "pyop":
            argv += ["--identity", f"replica-{i}"]
        procs.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env))
    return procs


class EmulatorServer(kb.Server):
    """bench_vs_kopf's emulator child, with the interface RealServer has."""

    def __init__(self) -> None:
        super().__init__()
        self.pids = [self.proc.pid]

    def transport(self) -> kb.RawHTTP:
        from pyscaffold_op.runtime import load_config

        return kb.RawHTTP(load_config(self.kubeconfig).server)

    def pin(self, cores: str) -> None:
        subprocess.run(
            ["taskset", "-a", "-p", "-c", cores, str(self.proc.pid)], check=True, capture_output=True
        )


class RealBenchServer(RealServer):
    def __init__(self) -> None:
        super().__init__([kb.CRD])

    def transport(self) -> kb.RawHTTP:
        return kb.RawHTTP(self.url, self.token, self.ca_pem)


Server = EmulatorServer | RealBenchServer


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


def _cpu(pids: list[int]) -> float:
    return sum(kb.cpu_seconds(pid) for pid in pids)


async def drive(
    server: Server, procs: list[subprocess.Popen[bytes]], n: int, samples: int, replicas: int
) -> dict[str, float]:
    transport = server.transport()
    op_pids = [p.pid for p in procs]
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
        before_op = await settled_cpu(lambda: _cpu(op_pids))
        before_srv = _cpu(server.pids)
        before_drv = time.process_time()
        sem = asyncio.Semaphore(64)

        async def one(i: int) -> None:
            async with sem:
                await transport.request("POST", path, kb._body(f"item-{i:05d}", i))

        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        await asyncio.wait_for(watcher.all_done.wait(), 120 + n / 5)
        out["burst_s"] = time.perf_counter() - t0
        out["throughput"] = n / out["burst_s"]
        out["drv_cpu_ms"] = (time.process_time() - before_drv) * 1000 / n
        out["op_cpu_ms"] = (await settled_cpu(lambda: _cpu(op_pids)) - before_op) * 1000 / n
        out["srv_cpu_ms"] = (await settled_cpu(lambda: _cpu(server.pids)) - before_srv) * 1000 / n
        after_req = server.counts()
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


def one_run(setup: str, n: int, args: argparse.Namespace, kind: str) -> dict[str, float]:
    server: Server = RealBenchServer() if kind == "real" else EmulatorServer()
    cores = available_cores()
    core = cores[-1] if pinning(args) else None
    if core is not None:
        others = ",".join(str(c) for c in cores[:-1])
        server.pin(others)
        os.sched_setaffinity(0, set(cores[:-1]))  # the driver
    procs = start_operators(setup, server.kubeconfig, args, core)
    replicas = int(setup.removeprefix("pyop-x")) if setup.startswith("pyop-x") else 0
    try:
        from pyscaffold_op.runtime import loops

        result = loops.run(drive(server, procs, n, args.latency_samples, replicas))
        return result
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
        if core is not None:
            os.sched_setaffinity(0, set(cores))


def available_cores() -> list[int]:
    return sorted(os.sched_getaffinity(0))


def pinning(args: argparse.Namespace) -> bool:
    return args.pin == "on" or (args.pin == "auto" and len(available_cores()) >= 3)


ROWS = [
    ("throughput", "burst throughput (objects/s)", "{:.0f}"),
    ("handler_p50_ms", "event -> handler p50 (ms)", "{:.2f}"),
    ("e2e_p50_ms", "end-to-end p50 (ms)", "{:.2f}"),
    ("op_cpu_ms", "operator CPU per object (ms, all replicas)", "{:.3f}"),
    ("rss_mb", "operator RSS after the burst (MB, largest)", "{:.0f}"),
    ("rss_total_mb", "operator RSS, all replicas (MB)", "{:.0f}"),
    ("requests", "server requests per object", "{:.2f}"),
    ("srv_cpu_ms", "server CPU per object (ms)", "{:.2f}"),
    ("drv_cpu_ms", "driver CPU per object (ms)", "{:.2f}"),
]


def label(setup: str) -> str:
    return {"go": "ctrl-runtime", "go-gomaxprocs1": "c-r MAXPROCS=1", "go-json": "c-r JSON"}.get(setup, setup)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", default="real,emulator", help="real and/or emulator, in that order")
    parser.add_argument("--sizes", default="1000", help="burst sizes, comma-separated")
    parser.add_argument("--runs", type=int, default=3, help="runs per setup and size (setups alternate)")
    parser.add_argument("--setups", default=",".join(SETUPS), help=f"of {', '.join(SETUPS)}")
    parser.add_argument("--replicas", default="", help="sharded pyop replica counts, e.g. 2,4 ('' for none)")
    parser.add_argument("--workers", type=int, default=8, help="reconcile workers of every operator")
    parser.add_argument("--pin", choices=("auto", "on", "off"), default="auto")
    parser.add_argument("--latency-samples", type=int, default=30)
    parser.add_argument("--child", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--json", type=Path, help="write every run's raw figures here")
    parser.add_argument("--operator", metavar="KUBECONFIG", help=argparse.SUPPRESS)
    parser.add_argument("--identity", help=argparse.SUPPRESS)
    parser.add_argument("--pyop-workers", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.operator:
        run_pyop_operator(args.operator, args.child, args.identity, args.pyop_workers or None)
        return 0
    # a SIGTERM unwinds like an exception: every run's finally stops its operators and server
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    setups = [s for s in args.setups.split(",") if s]
    if any(s.startswith("go") for s in setups):
        build_go_operator()
    setups += [f"pyop-x{r}" for r in args.replicas.split(",") if r]
    sizes = [int(s) for s in args.sizes.split(",") if s]
    cores = available_cores()
    pinned = (
        f"each operator pinned to core {cores[-1]}, server and driver on {cores[:-1]}"
        if pinning(args)
        else f"nothing pinned ({len(cores)} cores for operator, server and driver: none to spare)"
    )
    print(
        f"pyop vs controller-runtime v0.25.2: servers {args.servers}, sizes {sizes}, {args.runs} run(s) "
        f"each, {args.workers} workers each, child ConfigMap {'on' if args.child else 'off'}, {pinned}"
    )
    print(
        f"{platform.node()} | {platform.processor() or platform.machine()} | {len(cores)} cores | "
        f"Python {platform.python_version()} | {datetime.now(UTC):%Y-%m-%d %H:%M} UTC | "
        f"load average {kb.load_average()}"
    )
    raw: dict[str, Any] = {"cores": len(cores), "pinned": pinning(args), "servers": {}}
    for kind in [k for k in args.servers.split(",") if k]:
        raw["servers"][kind] = {}
        for n in sizes:
            runs: dict[str, list[dict[str, float]]] = {s: [] for s in setups}
            for r in range(args.runs):
                order = setups[r % len(setups) :] + setups[: r % len(setups)]
                for setup in order:
                    load = kb.load_average()
                    result = one_run(setup, n, args, kind)
                    result["load1"] = float(load.split(",")[0].split()[0])
                    runs[setup].append(result)
                    print(
                        f"  {kind} n={n} run {r + 1} {label(setup)}: {result['throughput']:.0f} obj/s, "
                        f"CPU {result['op_cpu_ms']:.3f} ms/obj, RSS {result['rss_mb']:.0f} MB, "
                        f"server {result['srv_cpu_ms']:.2f} ms/obj, load before {load}",
                        flush=True,
                    )
            raw["servers"][kind][str(n)] = runs
            print_table(kind, n, setups, runs)
    print(f"load average at the end: {kb.load_average()}")
    if args.json:
        args.json.write_text(json.dumps(raw, indent=1))
    return 0


def print_table(kind: str, n: int, setups: list[str], runs: dict[str, list[dict[str, float]]]) -> None:
    med = {s: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for s, rs in runs.items()}
    loads = [r["load1"] for rs in runs.values() for r in rs]
    print(
        f"\n{kind} server, {n} objects: median [min-max] of {len(next(iter(runs.values())))} run(s), "
        f"1-min load average before the runs {min(loads):.1f}-{max(loads):.1f}; ratio = pyop / ctrl-runtime"
    )
    width = max(len(lbl) for _k, lbl, _f in ROWS)
    cell = 22
    head = "".join(f"  {label(s):>{cell}}" for s in setups)
    has_go = "go" in setups and "pyop" in setups
    print(f"{'measure':<{width}}{head}{'  ratio' if has_go else ''}")
    for key, lbl, fmt in ROWS:
        cells = ""
        for s in setups:
            values = [r[key] for r in runs[s]]
            text = f"{fmt.format(med[s][key])} [{fmt.format(min(values))}-{fmt.format(max(values))}]"
            cells += f"  {text:>{cell}}"
        ratio = f"  {med['pyop'][key] / med['go'][key]:.2f}x" if has_go and med["go"][key] else ""
        print(f"{lbl:<{width}}{cells}{ratio}")
    sharded = [s for s in setups if s.startswith("pyop-x")]
    if sharded and "pyop" in setups:
        scale = "  ".join(f"{s}: {med[s]['throughput'] / med['pyop']['throughput']:.2f}x" for s in sharded)
        print(f"sharded throughput against one manager: {scale}")


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
