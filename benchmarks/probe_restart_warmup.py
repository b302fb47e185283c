"""What a kube-apiserver restarted on etcd holding N BenchItems answers while it refills its watch
cache, and what a pyop start pays then (the cost curve's 110 s sync at 100k objects, issue 37).

    python benchmarks/probe_restart_warmup.py [N]     # default 30000

Prints, every few tenths of a second after the restart, whether a `resourceVersion=0&limit=500` list
came back in pages (`continue` set: served from etcd) and what a watch got (429 until the cache is
ready); then pyop's sync right after a restart (what bench_cost_curve's old warm-up check allowed)
and on a ready server. Results: benchmarks/results/cost-curve-real-restart-probe-2026-12-07.txt.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import urllib.error
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_cost_curve as bcc
import bench_vs_kopf as kb

PATH = f"/apis/{kb.GROUP}/{kb.VERSION}/namespaces/{bcc.NS}/{kb.PLURAL}"
WATCH = "watch=1&resourceVersion=0&labelSelector=bench-warm%3Dnone&timeoutSeconds=1"


def probe(server: bcc.Real, target: str) -> tuple[int, float, bool | None]:
    """(status, seconds, whether a list answer carried a continue token)."""
    start = time.perf_counter()
    try:
        body, code = server._get(target), 200
    except urllib.error.HTTPError as err:
        body, code = b"", err.code
    paged = bool(json.loads(body).get("metadata", {}).get("continue")) if body.startswith(b"{") else None
    return code, time.perf_counter() - start, paged


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30000
    server = bcc.Real()
    try:
        asyncio.run(bcc.make_namespace(server))
        start = time.perf_counter()
        asyncio.run(bcc.fill(server, "benchitem", 0, n))
        print(f"filled {n} in {time.perf_counter() - start:.0f}s", flush=True)
        print("ready server, pyop:", bcc.measure("pyop", server, "benchitem", n, 1, False), flush=True)
        server.relist()  # kube-apiserver restarted on the same etcd
        start = time.perf_counter()
        for _ in range(40):
            code, took, paged = probe(server, f"{PATH}?resourceVersion=0&limit=500")
            watch = probe(server, f"{PATH}?{WATCH}")[0]
            print(
                f"  t={time.perf_counter() - start:5.1f}s list rv=0 limit=500: {code} in {took:.2f}s "
                f"continue={paged}; watch: {watch}",
                flush=True,
            )
            if watch == 200:
                break
        server.relist()
        # the old warm-up check: answered at once, from etcd
        server.wait_served(f"{PATH}?resourceVersion=0&limit=1")
        print(
            "right after a restart, pyop:",
            bcc.measure("pyop", server, "benchitem", n, 1, False, warm=False),
            flush=True,
        )
        start = time.perf_counter()
        server.warm("benchitem")
        print(f"watch cache ready {time.perf_counter() - start:.0f}s later", flush=True)
        print("ready again, pyop:", bcc.measure("pyop", server, "benchitem", n, 1, False), flush=True)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
