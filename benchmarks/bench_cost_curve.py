"""The cost curve (issue 37): what an informer costs pyop and controller-runtime as the cached objects
grow to 100k, on the real kube-apiserver and on the emulator.

    python benchmarks/bench_cost_curve.py [--servers real,emulator] [--sizes 1000,10000,50000,100000]
        [--kinds configmap,benchitem] [--many 10000] [--runs 1]

For each server, kind and size (objects are added to one namespace as the sizes grow: ConfigMaps of
~1 KB of data, BenchItems of ~2 KB, mostly an annotation), each operator is started fresh, alternating
which goes first, with one no-op controller For the kind (pyop: `builder.for_(Kind)`, Go:
benchmarks/goperator/cmd/costcurve, kubebuilder's defaults, protobuf for ConfigMaps as it does by
default; only BenchItems are JSON for both). Measured:

* initial list + sync: from the manager's start to its cache synced (in-process clocks), and to every
  object reconciled once; the CPU that took per object, less the median CPU of BASELINES starts with
  no objects, reported only where it exceeds their spread (max - min): below that the difference is
  the baseline's noise (at 1k objects a few clock ticks), and the table says "< bound" instead;
* RSS once the CPU settled, and bytes per cached object: (RSS - median RSS with no objects) / objects;
* pyop's failed list attempts before the sync (`list_errors`, `list_error`: the informer's own count);
* relist: operator CPU per object after a forced 410, until the CPU settles. The emulator compacts
  its history and drops the watches: every client relists. kube-apiserver is restarted on the same
  etcd: a client relists only when its version predates the new watch cache, which is not certain
  (read a near-zero figure as "resumed without a relist"). Each start waits until the server's
  watch cache answers, so no sync pays for a restarted server's warm-up;
* with `--many N`: at N objects, the same with 10 controllers sharing the kind's informer (RSS).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
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

import bench_vs_kopf as kb
import msgspec
from realserver import RealServer, settled_cpu

GO_DIR = Path(__file__).resolve().parent / "goperator"
GO_BINARY = GO_DIR / "bin" / "costcurve"
NS = "cost"
CM_DATA = {f"key-{i}": ("x" * 118) for i in range(8)}  # ~1 KB of data
ANNOTATION = "y" * 1800  # with spec and metadata, ~2 KB
BASELINES = 3  # starts with no objects per operator: the CPU and RSS a sync is measured against


# -- the pyop operator (a child process) -----------------------------------------------------------


def run_pyop_operator(kubeconfig: str, kind: str, controllers: int, expect: int) -> None:
    from pyscaffold_op.models.core_v1 import ConfigMap
    from pyscaffold_op.runtime import Manager, ManagerOptions, Request, load_config, run

    model = ConfigMap if kind == "configmap" else kb.bench_item_model()
    mgr = Manager(
        load_config(kubeconfig),
        ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0", namespace=NS),
    )
    count = 0
    everything = asyncio.Event()

    async def reconcile(_req: Request) -> None:
        nonlocal count
        count += 1
        if count >= expect * controllers:
            everything.set()

    for i in range(controllers):
        # kubebuilder's defaults: one worker per controller, as the Go peer runs
        mgr.builder().for_(model).named(f"c{i}").with_options(max_concurrent_reconciles=1).complete(reconcile)
    start = time.perf_counter()

    async def report() -> None:
        await mgr.cache.wait_for_cache_sync()
        print(f"synced {time.perf_counter() - start:.6f}", flush=True)
        # a sync that waited without computing shows here: failed list attempts and why
        (informer,) = mgr.cache.informers()
        failure = "" if informer.last_error is None else str(informer.last_error)
        print("informer " + json.dumps({**informer.stats, "last_error": failure}), flush=True)
        if expect:
            await everything.wait()
        print(f"reconciled {time.perf_counter() - start:.6f}", flush=True)
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while await reader.readline():
            print(f"count {count}", flush=True)

    mgr.add(report, need_leader_election=False)
    run(mgr.start())


# -- servers ---------------------------------------------------------------------------------------


class Emulator(kb.Server):
    def __init__(self) -> None:
        super().__init__()
        self.pids = [self.proc.pid]

    def transport(self) -> kb.RawHTTP:
        from pyscaffold_op.runtime import load_config

        return kb.RawHTTP(load_config(self.kubeconfig).server)

    def warm(self, kind: str) -> None:
        pass

    def relist(self) -> None:
        """A write, then the history forgotten and every watch ended: re-watches get 410."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("relist\n")
        self.proc.stdin.flush()
        self.proc.stdout.readline()


class Real(RealServer):
    def __init__(self) -> None:
        super().__init__([kb.CRD])

    def transport(self) -> kb.RawHTTP:
        return kb.RawHTTP(self.url, self.token, self.ca_pem)

    def relist(self) -> None:
        """kube-apiserver restarted on the same etcd: its new watch caches start at etcd's current
        revision, which its own startup writes move past every informer's version, so each re-watch
        is answered 410 and relists."""
        self.cp.restart()
        self.pids = [p.pid for p in self.cp._procs]

    def warm(self, kind: str) -> None:
        """Until the kind's watch cache is ready: a restarted kube-apiserver fills it from etcd first
        (30k BenchItems: over 17 s on this machine), and the next operator's sync must not pay for
        that. A watch tells: refused 429 until the cache is ready. A list does not: kube-apiserver
        serves `resourceVersion=0` lists from etcd, in pages, meanwhile (what this checked before;
        the operator started after the other's forced relist waited on that, 110 s for pyop's
        100k BenchItems in one run, 71 s for Go's in the next; probe_restart_warmup.py shows it).
        The selector matches nothing, so a ready cache sends no initial events."""
        path = (
            f"/api/v1/namespaces/{NS}/configmaps"
            if kind == "configmap"
            else (f"/apis/{kb.GROUP}/{kb.VERSION}/namespaces/{NS}/{kb.PLURAL}")
        )
        query = "watch=1&resourceVersion=0&labelSelector=bench-warm%3Dnone&timeoutSeconds=1"
        self.wait_served(f"{path}?{query}", timeout=600)


Server = Emulator | Real


async def fill(server: Server, kind: str, have: int, want: int) -> None:
    """Create objects `have`..`want` - 1 (64 in flight)."""
    transport = server.transport()
    if kind == "configmap":
        path = f"/api/v1/namespaces/{NS}/configmaps"
    else:
        path = f"/apis/{kb.GROUP}/{kb.VERSION}/namespaces/{NS}/{kb.PLURAL}"
    sem = asyncio.Semaphore(64)

    async def one(i: int) -> None:
        name = f"{kind}-{i:06d}"
        if kind == "configmap":
            doc: dict[str, Any] = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "labels": {"app": "cost"}},
                "data": CM_DATA,
            }
        else:
            doc = {
                "apiVersion": f"{kb.GROUP}/{kb.VERSION}",
                "kind": "BenchItem",
                "metadata": {"name": name, "labels": {"app": "cost"}, "annotations": {"note": ANNOTATION}},
                "spec": {"value": i, "sentAt": time.time(), "owner": "cost"},
            }
        async with sem:
            await transport.request("POST", path, msgspec.json.encode(doc))

    try:
        await asyncio.gather(*(one(i) for i in range(have, want)))
    finally:
        await transport.close()


async def make_namespace(server: Server) -> None:
    transport = server.transport()
    try:
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}
        await transport.request("POST", "/api/v1/namespaces", msgspec.json.encode(body))
    finally:
        await transport.close()


# -- one operator at one size ----------------------------------------------------------------------


def start(op: str, server: Server, kind: str, controllers: int, expect: int) -> subprocess.Popen[str]:
    err = None if os.environ.get("BENCH_VERBOSE") else subprocess.DEVNULL
    if op == "go":
        argv = [str(GO_BINARY), f"--kubeconfig={server.kubeconfig}", f"--kind={kind}"]
        argv += [f"--namespace={NS}", f"--controllers={controllers}", f"--expect={expect}"]
    else:
        argv = [sys.executable, __file__, "--operator", server.kubeconfig, "--kind", kind]
        argv += ["--controllers", str(controllers), "--expect", str(expect)]
    env = {**os.environ, "KUBECONFIG": server.kubeconfig}
    return subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env, text=True
    )


def _line(proc: subprocess.Popen[str], word: str) -> float:
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    if not line or line[0] != word:
        raise RuntimeError(f"expected {word!r}, got {line!r}")
    return float(line[1])


def measure(
    op: str, server: Server, kind: str, n: int, controllers: int, relist: bool, warm: bool = True
) -> dict[str, Any]:
    if warm:
        server.warm(kind)
    proc = start(op, server, kind, controllers, n)
    try:
        out: dict[str, Any] = {"synced_s": _line(proc, "synced")}
        if op == "pyop":
            assert proc.stdout is not None
            word, _, stats = proc.stdout.readline().partition(" ")
            if word != "informer":
                raise RuntimeError(f"expected 'informer', got {word!r}")
            informer = json.loads(stats)
            out["list_errors"] = informer["errors"]
            if informer["last_error"]:
                out["list_error"] = informer["last_error"]
        out["reconciled_s"] = _line(proc, "reconciled")
        cpu = asyncio.run(settled_cpu(lambda: kb.cpu_seconds(proc.pid)))
        out["rss_mb"] = kb.rss_mb(proc.pid)
        out["cpu_s"] = cpu
        if relist and n:
            server.relist()
            time.sleep(1.0)  # the watches notice the restart, back off, re-watch, get 410
            after = asyncio.run(settled_cpu(lambda: kb.cpu_seconds(proc.pid), window=1.0, limit=60))
            out["relist_cpu_ms_per_obj"] = (after - cpu) * 1000 / n
            out["rss_after_relist_mb"] = kb.rss_mb(proc.pid)
            server.warm(kind)
        return out
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def sync_cpu(cpu_s: float, baselines: list[float], n: int) -> dict[str, float]:
    """CPU per object to sync n objects: less the baselines' median, where it exceeds their spread;
    else only a bound (a single baseline made 1k ConfigMaps cost -0.040 ms per object)."""
    extra, spread = cpu_s - statistics.median(baselines), max(baselines) - min(baselines)
    if extra > spread:
        return {"cpu_ms_per_obj": extra * 1000 / n}
    return {"cpu_ms_per_obj_below": max(extra, spread) * 1000 / n}


def build_go() -> None:
    sources = [*GO_DIR.rglob("*.go"), GO_DIR / "go.mod", GO_DIR / "go.sum"]
    if GO_BINARY.exists() and all(p.stat().st_mtime <= GO_BINARY.stat().st_mtime for p in sources):
        return
    subprocess.run(["go", "build", "-o", str(GO_BINARY), "./cmd/costcurve"], cwd=GO_DIR, check=True)


ROWS = [
    ("synced_s", "list + cache synced (s)", "{:.2f}"),
    ("reconciled_s", "every object reconciled once (s)", "{:.2f}"),
    ("rss_mb", "RSS (MB)", "{:.0f}"),
    ("bytes_per_obj", "RSS per cached object (bytes)", "{:.0f}"),
    ("cpu_ms_per_obj", "CPU to sync, per object (ms)", "{:.3f}"),
    ("relist_cpu_ms_per_obj", "relist after a 410, CPU per object (ms)", "{:.3f}"),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", default="real,emulator")
    parser.add_argument("--sizes", default="1000,10000,50000,100000")
    parser.add_argument("--kinds", default="configmap,benchitem")
    parser.add_argument("--ops", default="pyop,go")
    parser.add_argument("--many", type=int, default=10000, help="size of the 10-controller row (0: none)")
    parser.add_argument("--runs", type=int, default=1, help="runs per operator and size (alternating)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path, help="print a results JSON as docs/benchmarks.md's tables")
    parser.add_argument("--operator", help=argparse.SUPPRESS)
    parser.add_argument("--kind", help=argparse.SUPPRESS)
    parser.add_argument("--controllers", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--expect", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.operator:
        run_pyop_operator(args.operator, args.kind, args.controllers, args.expect)
        return 0
    if args.markdown:
        print_markdown(json.loads(args.markdown.read_text()))
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: every finally stops what it started
    ops = [o for o in args.ops.split(",") if o]
    if "go" in ops:
        build_go()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    print(
        f"cost curve: {platform.node()} | {len(os.sched_getaffinity(0))} cores | Python "
        f"{platform.python_version()} | {datetime.now(UTC):%Y-%m-%d %H:%M} UTC | load {kb.load_average()}",
        flush=True,
    )
    results: dict[str, Any] = {}
    for server_kind in [s for s in args.servers.split(",") if s]:
        for kind in [k for k in args.kinds.split(",") if k]:
            server: Server = Real() if server_kind == "real" else Emulator()
            try:
                asyncio.run(make_namespace(server))
                table = results.setdefault(f"{server_kind}/{kind}", {})
                empties: dict[str, list[dict[str, Any]]] = {op: [] for op in ops}
                for r in range(BASELINES):
                    for op in ops if r % 2 == 0 else ops[::-1]:
                        empties[op].append(measure(op, server, kind, 0, 1, False))
                base = {op: statistics.median(e["rss_mb"] for e in runs) for op, runs in empties.items()}
                base_cpu = {op: [e["cpu_s"] for e in runs] for op, runs in empties.items()}
                table["baseline"] = {"rss_mb": base, "cpu_s": base_cpu}
                have = 0
                for n in sizes:
                    t0 = time.perf_counter()
                    asyncio.run(fill(server, kind, have, n))
                    have = n
                    print(
                        f"  {server_kind} {kind}: {n} objects in ({time.perf_counter() - t0:.0f} s)",
                        flush=True,
                    )
                    for r in range(args.runs):
                        order = ops if (r + sizes.index(n)) % 2 == 0 else ops[::-1]
                        for op in order:
                            load = kb.load_average()
                            got = measure(op, server, kind, n, 1, True)
                            got["bytes_per_obj"] = (got["rss_mb"] - base[op]) * 1024 * 1024 / n
                            got.update(sync_cpu(got.pop("cpu_s"), base_cpu[op], n))
                            got["load1"] = float(load.split()[0])
                            table.setdefault(str(n), {}).setdefault(op, []).append(got)
                            print(f"    {op} n={n}: {json.dumps(got)} (load {load})", flush=True)
                    if n == args.many:
                        for op in ops:
                            got = measure(op, server, kind, n, 10, False)
                            got["bytes_per_obj"] = (got["rss_mb"] - base[op]) * 1024 * 1024 / n
                            got.pop("cpu_s")
                            table.setdefault(f"{n}x10", {}).setdefault(op, []).append(got)
                            print(f"    {op} n={n} 10 controllers: {json.dumps(got)}", flush=True)
                print_table(server_kind, kind, table, ops, base)
            finally:
                server.stop()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


def print_table(
    server_kind: str, kind: str, table: dict[str, Any], ops: list[str], base: dict[str, float]
) -> None:
    print(f"\n{server_kind} server, {kind}: median of runs; RSS with no objects: {base}")
    print(f"{'size':>10} {'measure':<42}" + "".join(f"{op:>12}" for op in ops) + "   pyop/go")
    for size, per_op in table.items():
        if size == "baseline":
            continue
        for key, label, fmt in ROWS:
            cells = {op: [r[key] for r in per_op.get(op, []) if key in r] for op in ops}
            below = f"{key}_below"
            bounds = {op: [r[below] for r in per_op.get(op, []) if below in r] for op in ops}
            if not any(cells.values()) and not any(bounds.values()):
                continue
            shown = {
                op: fmt.format(statistics.median(cells[op]))
                if cells[op]
                else ("< " + fmt.format(max(bounds[op])) if bounds[op] else "")
                for op in ops
            }
            both = all(cells.values()) and "go" in cells and "pyop" in cells
            med = {op: statistics.median(v) for op, v in cells.items() if v}
            ratio = f"   {med['pyop'] / med['go']:.2f}x" if both and med["go"] else ""
            print(f"{size:>10} {label:<42}" + "".join(f"{shown[op]:>12}" for op in ops) + ratio)


def print_markdown(results: dict[str, Any]) -> None:
    """Each server/kind as a table: a column per size, each cell pyop / controller-runtime (ratio)."""
    times = "\u00d7"
    for name, table in results.items():
        sizes = [s for s in table if s != "baseline"]
        heads = [s.replace("x10", f" {times}10 controllers") for s in sizes]
        print(f"| {name} (pyop / controller-runtime) | " + " | ".join(heads) + " |")
        print("| --- |" + " --- |" * len(sizes))
        for key, label, fmt in ROWS:
            cells = []
            for size in sizes:
                pyop, go = (_figure(table[size].get(op, []), key, fmt) for op in ("pyop", "go"))
                cell = f"{pyop[0]} / {go[0]}" if pyop[0] or go[0] else ""
                if cell and key in RATIO_ROWS and pyop[1] and go[1]:
                    cell += f" ({pyop[1] / go[1]:.2f}{times})"
                cells.append(cell)
            if any(cells):
                print(f"| {label} | " + " | ".join(cells) + " |")
        print()


RATIO_ROWS = {"synced_s", "reconciled_s", "rss_mb", "bytes_per_obj"}


def _figure(runs: list[dict[str, Any]], key: str, fmt: str) -> tuple[str, float | None]:
    """The runs' median as shown and as a number; "< bound" where only a bound was measured."""
    values = [r[key] for r in runs if key in r]
    if values:
        median = statistics.median(values)
        return (f"{median:,.0f}" if fmt == "{:.0f}" else fmt.format(median)), median
    bounds = [r[f"{key}_below"] for r in runs if f"{key}_below" in r]
    return ("< " + fmt.format(max(bounds)) if bounds else ""), None


if __name__ == "__main__":
    sys.exit(main())
