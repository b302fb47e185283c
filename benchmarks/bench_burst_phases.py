"""Where a burst of `bench_vs_kopf.py` spends its time, window by window (issue 18).

    python benchmarks/bench_burst_phases.py --n 1000 [--framework pyop|kopf] [--window 0.1]

One run of the side-by-side benchmark's burst (same emulator, operator and driver as
`bench_vs_kopf.py`), then per time window: creates the driver got answered, handlers started (the
objects' `status.handledAt`), objects the driver saw done, and the CPU seconds the operator, the
emulator and the driver used in that window. It shows the burst's two phases: while the driver's 64
creates are in flight the emulator serves them and the operator's few requests in turn; once they
are done the operator drains its backlog.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_vs_kopf as b  # the benchmark this one dissects


async def burst(server: b.Server, operator: subprocess.Popen[bytes], n: int, window: float) -> None:
    from pyscaffold_op.runtime import load_config

    transport = b.RawHTTP(load_config(server.kubeconfig).server)  # the side-by-side driver's client
    path = f"/apis/{b.GROUP}/{b.VERSION}/namespaces/{b.NAMESPACE}/{b.PLURAL}"
    watcher = b.Watcher(transport)
    await watcher.start()
    warm = watcher.waiters["warmup"] = asyncio.Event()
    await transport.request("POST", path, b._body("warmup", 1))
    await asyncio.wait_for(warm.wait(), 60)
    watcher.target = len(watcher.done) + n
    created: list[float] = []
    cpu: list[tuple[float, float, float, float]] = []

    async def sample() -> None:
        while True:
            now = time.perf_counter()
            cpu.append(
                (now, b.cpu_seconds(operator.pid), b.cpu_seconds(server.proc.pid), time.process_time())
            )
            await asyncio.sleep(window / 2)

    sampler = asyncio.create_task(sample())
    sem = asyncio.Semaphore(64)

    async def one(i: int) -> None:
        async with sem:
            await transport.request("POST", path, b._body(f"item-{i:05d}", i))
            created.append(time.perf_counter() - t0)

    await asyncio.sleep(window / 2)  # a CPU sample before the first create
    t0, wall0 = time.perf_counter(), time.time()
    await asyncio.gather(*(one(i) for i in range(n)))
    await asyncio.wait_for(watcher.all_done.wait(), 60 + n / 20)
    total = time.perf_counter() - t0
    sampler.cancel()
    items = json.loads(await transport.request("GET", path))["items"]
    handled = sorted(
        it["status"]["handledAt"] - wall0 for it in items if it["metadata"]["name"].startswith("item-")
    )
    done = sorted(v - t0 for k, v in watcher.done.items() if k.startswith("item-"))
    await watcher.stop()
    await transport.close()
    created.sort()
    print(f"n={n}: {total:.2f} s = {n / total:.0f} objects/s; creates answered by {created[-1]:.2f} s")
    head = f"{'window':>8} {'creates':>8} {'handled':>8} {'done':>6}"
    print(f"{head} | CPU s: {'operator':>8} {'server':>7} {'driver':>7}")

    def count(xs: list[float], lo: float, hi: float) -> int:
        return bisect.bisect(xs, hi) - bisect.bisect(xs, lo)

    def cpu_at(t: float) -> tuple[float, float, float, float]:
        i = max(0, bisect.bisect([c[0] - t0 for c in cpu], t) - 1)
        return cpu[i]

    lo = 0.0
    while lo < total:
        hi = lo + window
        a, z = cpu_at(lo), cpu_at(hi)
        print(
            f"{hi:7.1f}s {count(created, lo, hi):8d} {count(handled, lo, hi):8d} {count(done, lo, hi):6d} | "
            f"{'':7}{z[1] - a[1]:8.2f} {z[2] - a[2]:7.2f} {z[3] - a[3]:7.2f}"
        )
        lo = hi


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--framework", choices=["pyop", "kopf"], default="pyop")
    parser.add_argument(
        "--window", type=float, default=0.0, help="seconds per row (default: n/10000, >= 0.1)"
    )
    args = parser.parse_args()
    window = args.window or max(0.1, args.n / 10000)
    server = b.Server()
    env: dict[str, Any] = {**os.environ, "KUBECONFIG": server.kubeconfig}
    operator = subprocess.Popen(
        [sys.executable, b.__file__, "--operator", args.framework, server.kubeconfig],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        print(f"{args.framework}, load average {b.load_average()}")
        asyncio.run(burst(server, operator, args.n, window))
    finally:
        operator.send_signal(signal.SIGTERM)
        operator.wait(15)
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
