"""Benchmarks of the API server emulator (pyscaffold_op.envtest).

    python benchmarks/bench_envtest.py [--quick]

Measures, over loopback HTTP against a server in its own process (so client and server do not share
a GIL): requests/s for create, get and list with concurrent clients; watch fan-out (events delivered
per second to many watchers); memory per 10,000 stored objects; and the per-call cost of lightkube
through the in-process transport versus loopback HTTP. Prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CMS = "/api/v1/namespaces/default/configmaps"
ITEMS = "/apis/bench.pyop.io/v1/namespaces/default/benchitems"
STATUS_PATCH_GOAL_US = 300  # issue 18: server CPU per status PATCH
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
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {value: {type: integer}, owner: {type: string}}}
          status: {type: object, properties: {observed: {type: integer}, handledAt: {type: number}}}
"""


def item(name: str) -> dict:
    return {
        "apiVersion": "bench.pyop.io/v1",
        "kind": "BenchItem",
        "metadata": {"name": name, "labels": {"app": "bench"}},
        "spec": {"value": 1, "owner": "bench"},
    }


def cm(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "bench"}},
        "data": {"key": "value", "other": "x" * 64},
    }


def cpu_seconds(pid: int) -> float:
    """User+system CPU time of a process (Linux /proc), to report server cost per request."""
    try:
        parts = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-envtest-"))
    kc = tmp / "kubeconfig"
    (tmp / "crd.yaml").write_text(CRD)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pyscaffold_op",
            "envtest",
            "serve",
            "--no-kubelet",
            "--no-workloads",  # the API server alone, as measured before the controllers existed
            "--no-tls",  # plain HTTP, as measured before serve's default became a cluster's TLS
            "--crds",
            str(tmp / "crd.yaml"),
            "--kubeconfig-out",
            str(kc),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    proc.stdout.readline()  # the kubeconfig path: the server is up
    import yaml

    url = yaml.safe_load(kc.read_text())["clusters"][0]["cluster"]["server"]
    return proc, url


async def rate(url: str, n: int, concurrency: int, make: object) -> float:
    """Requests per second for n requests issued by `concurrency` workers."""
    counter = iter(range(n))
    conn = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(url, connector=conn) as session:

        async def worker() -> None:
            for i in counter:
                method, path, body, *ctype = make(i)  # type: ignore[operator]
                data = json.dumps(body).encode() if body is not None else None
                headers = {"Content-Type": ctype[0] if ctype else "application/json"}
                async with session.request(method, path, data=data, headers=headers) as r:
                    await r.read()
                    assert r.status < 300, (r.status, await r.text())

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return n / (time.perf_counter() - t0)


async def fan_out(url: str, watchers: int, events: int) -> float:
    """Events delivered per second across all watchers."""
    conn = aiohttp.TCPConnector(limit=0)  # every watcher holds a connection; writes need one more
    async with aiohttp.ClientSession(
        url, connector=conn, timeout=aiohttp.ClientTimeout(total=120)
    ) as session:
        await session.post("/api/v1/namespaces", json={"metadata": {"name": "fan"}})
        async with session.get("/api/v1/namespaces/fan/configmaps") as r:
            rv = (await r.json())["metadata"]["resourceVersion"]
        ready = asyncio.Event()
        opened = 0

        async def watch() -> None:
            nonlocal opened
            got = 0
            async with session.get(
                "/api/v1/namespaces/fan/configmaps", params={"watch": "true", "resourceVersion": rv}
            ) as resp:
                opened += 1
                if opened == watchers:
                    ready.set()
                async for _line in resp.content:
                    got += 1
                    if got == events:
                        return

        tasks = [asyncio.create_task(watch()) for _ in range(watchers)]
        await ready.wait()
        await asyncio.sleep(0.2)
        t0 = time.perf_counter()
        for i in range(events):
            async with session.post("/api/v1/namespaces/fan/configmaps", json=cm(f"f{i}")) as r:
                await r.read()
        await asyncio.gather(*tasks)
        return watchers * events / (time.perf_counter() - t0)


def memory_per_10k() -> float:
    from pyscaffold_op.envtest.storage.objectstore import Store

    store = Store()
    info = store.info("", "v1", "configmaps")
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(10_000):
        store.create(info, "default", cm(f"m{i}"), manager="bench")
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / 1024 / 1024


async def per_call(n: int) -> tuple[float, float]:
    """Mean microseconds per lightkube get: in-process transport, then loopback HTTP (same process)."""
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ConfigMap

    from pyscaffold_op.envtest import Environment
    from tests.envtest.lightkube_client import lightkube_client

    async with Environment() as env:
        out = []
        for in_process in (True, False):
            client = lightkube_client(env, in_process=in_process)
            await client.create(ConfigMap(metadata=ObjectMeta(name=f"pc{int(in_process)}"), data={"a": "1"}))
            t0 = time.perf_counter()
            for _ in range(n):
                await client.get(ConfigMap, f"pc{int(in_process)}")
            out.append((time.perf_counter() - t0) / n * 1e6)
            await client.close()
        return out[0], out[1]


async def main(quick: bool) -> int:
    n = 2_000 if quick else 10_000
    conc = 16
    proc, url = start_server()
    rows: list[tuple[str, str, str]] = []
    cpu: dict[str, float] = {}

    async def measure(label: str, count: int, make: object) -> None:
        c0 = cpu_seconds(proc.pid)
        rps = await rate(url, count, conc, make)
        per = (cpu_seconds(proc.pid) - c0) / count * 1e6
        rows.append((label, f"{rps:,.0f}", f"{per:,.0f}"))
        cpu[label] = per

    try:
        await measure("create ConfigMap (req/s, 16 conc.)", n, lambda i: ("POST", CMS, cm(f"c{i}")))
        await measure("get ConfigMap (req/s, 16 conc.)", n, lambda i: ("GET", f"{CMS}/c{i % 100}", None))
        await measure(
            "list 100 ConfigMaps, limit=100 (req/s)", n // 10, lambda i: ("GET", CMS + "?limit=100", None)
        )
        await measure("/version (req/s, 16 conc.)", n, lambda i: ("GET", "/version", None))
        await rate(url, 100, conc, lambda i: ("POST", ITEMS, item(f"s{i}")))
        await measure(
            "status PATCH of a custom resource (req/s, 16 conc.)",
            n,
            lambda i: (
                "PATCH",
                f"{ITEMS}/s{i % 100}/status?fieldManager=bench",
                {"status": {"observed": i, "handledAt": time.time()}},
                "application/merge-patch+json",
            ),
        )
        w, e = (50, 100) if quick else (100, 200)
        c0 = cpu_seconds(proc.pid)
        eps = await fan_out(url, w, e)
        per = (cpu_seconds(proc.pid) - c0) / (w * e) * 1e6
        rows.append((f"watch fan-out, {w} watchers x {e} events (events/s)", f"{eps:,.0f}", f"{per:,.0f}"))
    finally:
        proc.terminate()
        proc.wait(10)
    rows.append(("memory per 10,000 ConfigMaps (MiB, tracemalloc)", f"{memory_per_10k():.1f}", ""))
    inproc, loop = await per_call(500 if quick else 2_000)
    rows.append(("lightkube get, in-process transport (µs/call)", f"{inproc:,.0f}", ""))
    rows.append(("lightkube get, loopback HTTP same process (µs/call)", f"{loop:,.0f}", ""))
    width = max(len(r[0]) for r in rows)
    print(
        f"pyop envtest benchmarks — {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(f"{'measure'.ljust(width)}  {'value':>8}  server CPU µs/op")
    print(f"{'-' * width}  {'-' * 8}  ---------------")
    for k, v, c in rows:
        print(f"{k.ljust(width)}  {v:>8}  {c}")
    status_us = cpu["status PATCH of a custom resource (req/s, 16 conc.)"]
    met = status_us <= STATUS_PATCH_GOAL_US
    print(
        f"goal: status PATCH <= {STATUS_PATCH_GOAL_US} µs server CPU: {status_us:.0f} µs, "
        + ("met" if met else "NOT MET")
    )
    return 0 if met else 1


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer requests (for CI smoke runs)")
    sys.exit(asyncio.run(main(ap.parse_args().quick)))
