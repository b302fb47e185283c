"""pyop and kopf side by side on the same emulator (issue 18).

    pip install -e '.[bench]'     # kopf is only needed here
    python benchmarks/bench_vs_kopf.py [--sizes 100,1000] [--runs 2] [--latency-samples 50]

Every run starts a fresh emulator (`pyop envtest serve --no-kubelet --no-workloads`, in a child
process, with a request counter) and a fresh operator process, pyop or kopf; the frameworks alternate
(run 1 pyop first, run 2 kopf first, ...). Both operators run the same trivial handler: on a BenchItem,
patch `status.observed = spec.value` (plus `status.handledAt`, the wall time the handler started, which
the driver uses for the latency). The pyop operator is a `Manager` with `for_(BenchItem)` and default
options, started with `run(mgr.start())` as generated projects start; the kopf operator is
`@kopf.on.create`/`@kopf.on.resume` with kopf's default settings. Both run on uvloop where it is
installed (what `run()` and kopf's CLI, `kopf run`, pick), or both on asyncio with `--loop asyncio`.

The driver (this process: creates, and its own watch to see objects done) shares the 2 cores with the
server and the operator, so it speaks HTTP/1.1 itself on kept-alive asyncio streams (`RawHTTP`): about
0.15 ms of CPU per object where the runtime's aiohttp client cost 0.3-0.4 ms. It is the same for both.

Per run, after a warm-up object has been handled (caches synced, connections open):
* burst: N objects created with 64 requests in flight; throughput = N / (first create sent -> last
  object seen with status.observed == spec.value, through the driver's own watch);
* operator CPU (user+system), server CPU and the driver's own CPU over the burst, per object; server
  requests per object (the emulator counts every request it serves, watches included);
* operator RSS after the burst (VmRSS);
* latency, one object at a time: event -> handler (create sent -> handler started, `handledAt`) and
  end to end (create sent -> the driver's watch sees it done), p50 of `--latency-samples`.
Separately, in this process: bytes of the runtime's informer cache per object for the same objects
(tracemalloc around decoding a list of them into an informer store), next to their JSON size.

Prints one table per size with the medians of the runs, the ratio pyop/kopf and the issue's targets;
exits 1 when a target is missed. `--json PATH` also writes every run's raw figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import platform
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GROUP, VERSION, PLURAL = "bench.pyop.io", "v1", "benchitems"
NAMESPACE = "default"
CRD = f"""apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: {PLURAL}.{GROUP}}}
spec:
  group: {GROUP}
  names: {{kind: BenchItem, listKind: BenchItemList, plural: {PLURAL}, singular: benchitem}}
  scope: Namespaced
  versions:
  - name: {VERSION}
    served: true
    storage: true
    subresources: {{status: {{}}}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              value: {{type: integer}}
              sentAt: {{type: number}}
              owner: {{type: string}}
          status:
            type: object
            properties:
              observed: {{type: integer}}
              handledAt: {{type: number}}
"""
_CLK = os.sysconf("SC_CLK_TCK")


# -- the two operators (each runs in its own process) ------------------------------------------------


def bench_item_model() -> Any:
    """The BenchItem kind in pyop's types (imported here: the kopf operator's process never needs pyop)."""
    from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel

    class BenchSpec(KubeModel):
        value: int = 0
        sent_at: float | None = None
        owner: str = ""

    class BenchStatus(KubeModel):
        observed: int | None = None
        handled_at: float | None = None

    class BenchItem(CustomResource):
        gvk = GroupVersionKind(GROUP, VERSION, "BenchItem")
        spec: BenchSpec = BenchSpec()
        status: BenchStatus | None = None

    return BenchItem


def run_pyop_operator(kubeconfig: str) -> None:
    from pyscaffold_op.runtime import Manager, ManagerOptions, NotFound, Request, load_config, run

    BenchItem = bench_item_model()

    mgr = Manager(
        load_config(kubeconfig), ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0")
    )
    client = mgr.client

    async def reconcile(req: Request) -> None:
        started = time.time()
        try:
            item = await client.get(BenchItem, req.name, namespace=req.namespace)
        except NotFound:
            return
        if item.status is not None and item.status.observed == item.spec.value:
            return  # level-triggered: nothing to do
        patch = {"status": {"observed": item.spec.value, "handledAt": started}}
        await client.status().patch(BenchItem, req.name, patch, namespace=req.namespace)

    mgr.builder().for_(BenchItem).complete(reconcile)
    profile = os.environ.get("BENCH_PROFILE")  # where the operator writes its cProfile stats
    if not profile:
        run(mgr.start())  # as generated projects start: uvloop where installed (PYOP_RUNTIME_LOOP)
        return
    import cProfile

    with cProfile.Profile() as prof:
        run(mgr.start())
    prof.dump_stats(profile)


def run_kopf_operator(kubeconfig: str) -> None:
    import logging

    import kopf

    logging.basicConfig(level=logging.WARNING)

    @kopf.on.resume(GROUP, VERSION, PLURAL)
    @kopf.on.create(GROUP, VERSION, PLURAL)
    async def handle(spec: Any, patch: Any, **_: Any) -> None:
        patch.status["observed"] = spec.get("value")
        patch.status["handledAt"] = time.time()

    # as `kopf run` (its CLI) runs an operator: on uvloop where installed, unless the bench says asyncio
    loop = None
    if os.environ.get("PYOP_RUNTIME_LOOP") != "asyncio":
        with contextlib.suppress(ImportError):
            import uvloop

            loop = uvloop.new_event_loop()
    kopf.run(loop=loop, standalone=True, namespaces=[NAMESPACE])


# -- the emulator with a request counter (child process) ---------------------------------------------


def serve() -> None:
    """`--serve`: the emulator as `pyop envtest serve --no-kubelet --no-workloads` runs it, counting
    requests; prints the kubeconfig path, then answers each line on stdin with the counts as JSON."""
    from pyscaffold_op.envtest import Environment
    from pyscaffold_op.envtest.gctuning import own_process

    counts: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        crd = Path(tmp) / "crd.yaml"
        crd.write_text(CRD)
        env = Environment(crd_paths=[crd], kubelet=None, workloads=False)
        handle = env.api.handle

        async def counted(req: Any) -> Any:
            counts[f"{'WATCH' if req.flag('watch') else req.method} {_what(req.path)}"] += 1
            counts["total"] += 1
            return await handle(req)

        env.api.handle = counted  # type: ignore[method-assign]
        profile = os.environ.get("BENCH_SERVER_PROFILE")  # where the emulator writes its cProfile stats
        if profile:
            _profile_threads(profile)
        env.start_in_thread()
        own_process()  # as `pyop envtest serve` does once it serves
        print(env.kubeconfig_path, flush=True)
        for line in sys.stdin:
            if line.strip() == "relist":  # bench_cost_curve: force every informer to relist
                env._call_soon(lambda: _forget(env))
            print(json.dumps(dict(counts)), flush=True)
        env.stop()


def _forget(env: Any) -> None:
    """A write, then the history forgotten and every watch ended, in one step of the server's loop (no
    bookmark can carry the write's version first): every re-watch predates the history, gets 410."""
    store = env.store
    info = store.registry.get("", "v1", "configmaps")
    tick = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"tick-{time.time_ns()}"}}
    store.create(info, "default", tick, manager="bench")
    store.compact()
    store.drop_watches()


def _profile_threads(path: str) -> None:
    """cProfile every thread started from now on (the emulator's), writing the stats when it ends."""
    import cProfile
    import threading

    run = threading.Thread.run

    def profiled(thread: threading.Thread) -> None:
        with cProfile.Profile() as prof:
            run(thread)
        prof.dump_stats(path)

    threading.Thread.run = profiled  # type: ignore[method-assign]


def _what(path: str) -> str:
    parts = path.strip("/").split("/")
    if PLURAL in parts:
        rest = parts[parts.index(PLURAL) + 1 :]
        return "benchitems" if not rest else "benchitem" if len(rest) == 1 else f"benchitem/{rest[1]}"
    if "events" in parts:
        return "events"
    return "other (discovery, leases, ...)"


class Server:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.kubeconfig = self.proc.stdout.readline().strip()

    def counts(self) -> dict[str, int]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("counts\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(20)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLK  # utime + stime


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# -- the driver ---------------------------------------------------------------------------------------


class RawHTTP:
    """The driver's HTTP/1.1 client: plain asyncio streams, kept-alive connections, no framework.

    The load generator shares the 2 cores with the emulator and the operator under test, so it should
    cost as little as it can (an aiohttp client costs ~2x the CPU per request). Same for both frameworks.
    """

    def __init__(self, server: str, token: str | None = None, ca_pem: bytes | None = None) -> None:
        https = server.startswith("https://")
        host_port = server.removeprefix("https://").removeprefix("http://").rstrip("/")
        self.host, port = host_port.rsplit(":", 1)
        self.port = int(port)
        # the real kube-apiserver: TLS with its CA and a bearer token (bench_vs_go --server real)
        self.ssl = ssl.create_default_context(cadata=ca_pem.decode() if ca_pem else None) if https else None
        self.auth = f"Authorization: Bearer {token}\r\n" if token else ""
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self._all: list[asyncio.StreamWriter] = []

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        reader, writer = await asyncio.open_connection(self.host, self.port, limit=1 << 24, ssl=self.ssl)
        self._all.append(writer)
        return reader, writer

    async def _connection(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._idle:
            return self._idle.pop()
        return await self._open()

    async def request(self, method: str, path: str, body: bytes = b"") -> bytes:
        reader, writer = await self._connection()
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nAccept: application/json\r\n{self.auth}"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        writer.write(head.encode() + body)
        status, headers = await _response_head(reader)
        data = await _response_body(reader, headers)
        self._idle.append((reader, writer))
        if status >= 300:
            raise RuntimeError(f"{method} {path}: HTTP {status}: {data[:200]!r}")
        return data

    async def stream_lines(self, path: str) -> AsyncIterator[bytes]:
        """A watch: its lines (one event each), on a connection of its own."""
        reader, writer = await self._open()
        head = f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\nAccept: application/json\r\n{self.auth}\r\n"
        writer.write(head.encode())
        status, headers = await _response_head(reader)
        if status != 200 or headers.get(b"transfer-encoding") != b"chunked":
            raise RuntimeError(f"watch {path}: HTTP {status} {headers}")
        buf = b""
        while True:
            size = int((await reader.readuntil(b"\r\n"))[:-2].split(b";", 1)[0], 16)
            if size == 0:
                return
            buf += (await reader.readexactly(size + 2))[:-2]
            *lines, buf = buf.split(b"\n")
            for line in lines:
                if line.strip():
                    yield line

    async def close(self) -> None:
        for writer in self._all:
            writer.close()
        self._idle.clear()


async def _response_head(reader: asyncio.StreamReader) -> tuple[int, dict[bytes, bytes]]:
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *lines = head[:-4].split(b"\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split(b" ", 2)[1]), headers


async def _response_body(reader: asyncio.StreamReader, headers: dict[bytes, bytes]) -> bytes:
    if b"content-length" in headers:
        return await reader.readexactly(int(headers[b"content-length"]))
    if headers.get(b"transfer-encoding") != b"chunked":
        raise RuntimeError(f"a response without a length: {headers}")
    parts = []
    while size := int((await reader.readuntil(b"\r\n"))[:-2].split(b";", 1)[0], 16):
        parts.append((await reader.readexactly(size + 2))[:-2])
    await reader.readuntil(b"\r\n")  # the empty trailer
    return b"".join(parts)


class _Status(msgspec.Struct):
    observed: int | None = None
    handledAt: float | None = None


class _Spec(msgspec.Struct):
    value: int | None = None
    sentAt: float | None = None


class _Meta(msgspec.Struct):
    name: str = ""
    resourceVersion: str = ""


class _Item(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: _Spec = msgspec.field(default_factory=_Spec)
    status: _Status | None = None


class _Event(msgspec.Struct):
    type: str
    object: msgspec.Raw  # an _Item, or a Status for an ERROR


class _Items(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    items: list[_Item] = msgspec.field(default_factory=list)


class Watcher:
    """The driver's own watch: when each object was first seen handled (observed == value)."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport
        self.done: dict[str, float] = {}
        self.handled_at: dict[str, float] = {}
        self.sent_at: dict[str, float] = {}
        self.waiters: dict[str, asyncio.Event] = {}
        self.target = 0
        self.all_done = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._path = f"/apis/{GROUP}/{VERSION}/namespaces/{NAMESPACE}/{PLURAL}"
        rv = await self._list()
        self._task = asyncio.create_task(self._run(rv))

    async def _list(self) -> str:
        listed = msgspec.json.decode(await self.transport.request("GET", self._path), type=_Items)
        for obj in listed.items:
            self._seen(obj)
        return listed.metadata.resourceVersion

    async def _run(self, rv: str) -> None:
        """Watch, resuming from the last version after a broken stream and relisting after an ERROR
        event (kube-apiserver answers a watch from a version its watch cache has not reached yet with
        a "Too large resource version" error): a lost watch must not leave the driver waiting."""
        events, items = msgspec.json.Decoder(_Event), msgspec.json.Decoder(_Item)
        while True:
            query = f"?watch=true&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=3600"
            try:
                async for line in self.transport.stream_lines(self._path + query):
                    ev = events.decode(line)
                    if ev.type == "ERROR":
                        raise LookupError(bytes(ev.object)[:200])
                    obj = items.decode(ev.object)
                    rv = obj.metadata.resourceVersion or rv
                    if ev.type != "BOOKMARK":
                        self._seen(obj)
            except LookupError:
                await asyncio.sleep(0.1)
                rv = await self._list()
            except (OSError, asyncio.IncompleteReadError, RuntimeError, msgspec.DecodeError):
                await asyncio.sleep(0.1)

    def _seen(self, obj: _Item) -> None:
        name = obj.metadata.name
        if name in self.done or obj.status is None or obj.status.observed != obj.spec.value:
            return
        self.done[name] = time.perf_counter()
        if obj.status.handledAt is not None and obj.spec.sentAt is not None:
            self.handled_at[name] = obj.status.handledAt - obj.spec.sentAt
        waiter = self.waiters.pop(name, None)
        if waiter is not None:
            waiter.set()
        if self.target and len(self.done) >= self.target:
            self.all_done.set()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


def _body(name: str, value: int) -> bytes:
    return msgspec.json.encode(  # 5x cheaper than json.dumps: the driver shares the cores it measures
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "BenchItem",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": "bench", "tier": "x"}},
            "spec": {"value": value, "sentAt": time.time(), "owner": "bench"},
        }
    )


async def drive(server: Server, operator: subprocess.Popen[bytes], n: int, samples: int) -> dict[str, float]:
    from pyscaffold_op.runtime import load_config

    transport = RawHTTP(load_config(server.kubeconfig).server)
    path = f"/apis/{GROUP}/{VERSION}/namespaces/{NAMESPACE}/{PLURAL}"
    watcher = Watcher(transport)
    out: dict[str, float] = {}
    try:
        await watcher.start()

        async def create_and_wait(name: str, value: int) -> None:
            waiter = watcher.waiters[name] = asyncio.Event()
            watcher.sent_at[name] = time.perf_counter()
            await transport.request("POST", path, _body(name, value))
            await asyncio.wait_for(waiter.wait(), 60)

        await create_and_wait("warmup", 1)  # the operator is up, synced and connected
        # Burst.
        watcher.target = len(watcher.done) + n
        before_req = server.counts()
        before_op, before_srv = cpu_seconds(operator.pid), cpu_seconds(server.proc.pid)
        before_drv = time.process_time()
        sem = asyncio.Semaphore(64)

        async def one(i: int) -> None:
            async with sem:
                await transport.request("POST", path, _body(f"item-{i:05d}", i))

        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        await asyncio.wait_for(watcher.all_done.wait(), 60 + n / 20)
        out["burst_s"] = time.perf_counter() - t0
        out["throughput"] = n / out["burst_s"]
        after_req = server.counts()
        out["op_cpu_ms"] = (cpu_seconds(operator.pid) - before_op) * 1000 / n
        out["srv_cpu_ms"] = (cpu_seconds(server.proc.pid) - before_srv) * 1000 / n
        out["drv_cpu_ms"] = (time.process_time() - before_drv) * 1000 / n
        out["requests"] = (after_req["total"] - before_req["total"]) / n
        for key in sorted(set(after_req) - {"total"}):
            out[f"req {key}"] = (after_req[key] - before_req.get(key, 0)) / n
        out["rss_mb"] = rss_mb(operator.pid)
        # Latency, one object at a time.
        for i in range(samples):
            await create_and_wait(f"lat-{i:04d}", i + 1)
        lat = [f"lat-{i:04d}" for i in range(samples)]
        out["handler_p50_ms"] = statistics.median(watcher.handled_at[k] for k in lat) * 1000
        out["e2e_p50_ms"] = statistics.median(watcher.done[k] - watcher.sent_at[k] for k in lat) * 1000
    finally:
        await watcher.stop()
        await transport.close()
    return out


def one_run(framework: str, n: int, samples: int) -> dict[str, float]:
    server = Server()
    operator = subprocess.Popen(
        [sys.executable, __file__, "--operator", framework, server.kubeconfig],
        stdout=subprocess.DEVNULL,
        stderr=None if os.environ.get("BENCH_VERBOSE") else subprocess.DEVNULL,
        env={**os.environ, "KUBECONFIG": server.kubeconfig},  # read when kubernetes is imported
    )
    try:
        # the operators' loop for the driver too (uvloop unless --loop asyncio): the load generator
        # shares the two cores with what it measures, so it should cost as little as it can
        from pyscaffold_op.runtime import loops

        return loops.run(drive(server, operator, n, samples))
    finally:
        operator.send_signal(signal.SIGTERM)
        try:
            operator.wait(15)
        except subprocess.TimeoutExpired:
            operator.kill()
            operator.wait()
        server.stop()


def cache_bytes_per_object(n: int) -> tuple[float, float]:
    """(JSON bytes, cache bytes) per object: a list of n objects as the server sends them, decoded
    into an informer store the way the runtime's informer fills it."""
    from pyscaffold_op.runtime.cache.informer import Informer
    from pyscaffold_op.runtime.objects.kinds import info_for

    BenchItem = bench_item_model()

    server = Server()

    async def fetch() -> bytes:
        from pyscaffold_op.runtime import load_config
        from pyscaffold_op.runtime.client.rest import RestTransport

        transport = RestTransport(load_config(server.kubeconfig), timeout=120)
        path = f"/apis/{GROUP}/{VERSION}/namespaces/{NAMESPACE}/{PLURAL}"
        sem = asyncio.Semaphore(64)

        async def one(i: int) -> None:
            async with sem:
                name = f"item-{i:05d}"
                await transport.request("POST", path, body=_body(name, i))
                patch = json.dumps({"status": {"observed": i, "handledAt": time.time()}}).encode()
                await transport.request(
                    "PATCH", f"{path}/{name}/status", body=patch, content_type="application/merge-patch+json"
                )

        try:
            await asyncio.gather(*(one(i) for i in range(n)))
            return await transport.request("GET", path)
        finally:
            await transport.close()

    try:
        data = asyncio.run(fetch())
    finally:
        server.stop()
    info = info_for(BenchItem)
    raws = msgspec.json.decode(data, type=dict[str, Any])["items"]
    json_size = sum(len(msgspec.json.encode(r)) for r in raws) / len(raws)
    informer = Informer(None, info)  # type: ignore[arg-type]  # no transport: only its store is used
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    raw_items, _rv, _cont = info.split_list(data)
    items = [(info.decode(raw), raw) for raw in raw_items]
    informer._replace(items)
    del items, raw_items, data
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return json_size, (after - before) / n


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


ROWS = [
    # key, label, format, better ("high"/"low")
    ("throughput", "burst throughput (objects/s)", "{:.0f}", "high"),
    ("handler_p50_ms", "event -> handler p50 (ms)", "{:.2f}", "low"),
    ("e2e_p50_ms", "end-to-end p50 (ms)", "{:.2f}", "low"),
    ("op_cpu_ms", "operator CPU per object (ms)", "{:.2f}", "low"),
    ("rss_mb", "operator RSS after the burst (MB)", "{:.0f}", "low"),
    ("requests", "server requests per object", "{:.2f}", "low"),
    ("srv_cpu_ms", "server CPU per object (ms)", "{:.2f}", "low"),
    ("drv_cpu_ms", "driver CPU per object (ms)", "{:.2f}", "low"),
]


def targets(n: int, pyop: dict[str, float], kopf: dict[str, float]) -> dict[str, tuple[str, bool]]:
    ratio = pyop["throughput"] / kopf["throughput"]
    want = 1.0 if n < 1000 else 5.0
    out = {
        "throughput": (f">= {want:g}x kopf", ratio >= want),
        "handler_p50_ms": ("<= 2 ms", pyop["handler_p50_ms"] <= 2.0),
    }
    if n >= 10_000:
        out["rss_mb"] = ("<= kopf", pyop["rss_mb"] <= kopf["rss_mb"])
    return out


def _has_uvloop() -> bool:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def only(framework: str, sizes: list[int], runs: int, samples: int, loop: str, json_out: Path | None) -> int:
    print(f"{framework} alone on {loop}: sizes {sizes}, {runs} run(s) each | load average {load_average()}")
    raw: dict[str, list[dict[str, float]]] = {}
    for n in sizes:
        for r in range(runs):
            result = one_run(framework, n, samples)
            raw.setdefault(f"{framework} {n}", []).append(result)
            figures = ", ".join(f"{key} {fmt.format(result[key])}" for key, _label, fmt, _ in ROWS)
            print(f"  n={n} run {r + 1}: {figures}, load {load_average()}", flush=True)
    if json_out:
        json_out.write_text(json.dumps(raw, indent=1))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000", help="burst sizes, comma-separated (add 10000)")
    parser.add_argument("--runs", type=int, default=2, help="runs per framework and size (alternating)")
    parser.add_argument("--latency-samples", type=int, default=50)
    parser.add_argument("--cache-objects", type=int, default=2000, help="objects for the cache-size row")
    parser.add_argument("--json", type=Path, help="write every run's raw figures here")
    parser.add_argument(
        "--only", choices=["pyop", "kopf"], help="run one framework (no ratios or targets: for profiling)"
    )
    parser.add_argument(
        "--loop",
        choices=["uvloop", "asyncio"],
        default="uvloop",
        help="both operators' loop (uvloop where installed, as `kopf run` and generated projects start)",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--operator", nargs=2, metavar=("FRAMEWORK", "KUBECONFIG"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return 0
    if args.operator:
        framework, kubeconfig = args.operator
        (run_pyop_operator if framework == "pyop" else run_kopf_operator)(kubeconfig)
        return 0
    if args.loop == "asyncio":
        os.environ["PYOP_RUNTIME_LOOP"] = "asyncio"  # inherited by both operator processes
    loop_name = "uvloop" if args.loop == "uvloop" and _has_uvloop() else "asyncio"
    if args.only:
        sizes = [int(s) for s in args.sizes.split(",") if s]
        return only(args.only, sizes, args.runs, args.latency_samples, loop_name, args.json)
    try:
        import kopf
    except ImportError:
        print("kopf is not installed: pip install -e '.[bench]' (or pip install kopf)", file=sys.stderr)
        return 2

    import pydantic

    sizes = [int(s) for s in args.sizes.split(",") if s]
    loads = [load_average()]
    print(
        f"pyop vs kopf {kopf.__version__ if hasattr(kopf, '__version__') else ''}: sizes {sizes}, "
        f"{args.runs} run(s) each, {args.latency_samples} latency samples"
    )
    print(
        f"{platform.node()} | {platform.processor() or platform.machine()} | {os.cpu_count()} CPUs | "
        f"Python {platform.python_version()} | pydantic {pydantic.VERSION} | operators on {loop_name} | "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC | load average {loads[0]}"
    )
    raw: dict[str, Any] = {"sizes": {}}
    ok = True
    for n in sizes:
        runs: dict[str, list[dict[str, float]]] = {"pyop": [], "kopf": []}
        for r in range(args.runs):
            order = ["pyop", "kopf"] if r % 2 == 0 else ["kopf", "pyop"]
            for fw in order:
                result = one_run(fw, n, args.latency_samples)
                runs[fw].append(result)
                print(
                    f"  n={n} run {r + 1} {fw}: {result['throughput']:.0f} obj/s, "
                    f"handler p50 {result['handler_p50_ms']:.2f} ms, RSS {result['rss_mb']:.0f} MB, "
                    f"load {load_average()}",
                    flush=True,
                )
        loads.append(load_average())
        med = {
            fw: {k: statistics.median(r[k] for r in rs if k in r) for k in {k for r in rs for k in r}}
            for fw, rs in runs.items()
        }
        raw["sizes"][str(n)] = runs
        goals = targets(n, med["pyop"], med["kopf"])
        print(f"\n{n} objects (median of {args.runs} runs)")
        width = max(len(label) for _k, label, _f, _b in ROWS)
        print(f"{'measure':<{width}}  {'pyop':>9}  {'kopf':>9}  {'pyop/kopf':>9}  target")
        for key, label, fmt, _better in ROWS:
            p, k = med["pyop"].get(key, float("nan")), med["kopf"].get(key, float("nan"))
            ratio = p / k if k else float("nan")
            goal, met = goals.get(key, ("", True))
            ok &= met
            mark = "" if not goal else (" (met)" if met else " (NOT MET)")
            print(f"{label:<{width}}  {fmt.format(p):>9}  {fmt.format(k):>9}  {ratio:>8.2f}x  {goal}{mark}")
        kinds = sorted({k for fw in med for k in med[fw] if k.startswith("req ")})
        for key in kinds:
            p, k = med["pyop"].get(key, 0.0), med["kopf"].get(key, 0.0)
            if p >= 0.005 or k >= 0.005:
                print(f"{'  ' + key[4:]:<{width}}  {p:>9.2f}  {k:>9.2f}")
    json_size, cache_size = cache_bytes_per_object(args.cache_objects)
    cache_ok = cache_size <= 2.5 * 1024
    ok &= cache_ok
    print(
        f"\ninformer cache: {cache_size / 1024:.2f} KB per object of {json_size:.0f} JSON bytes "
        f"({args.cache_objects} objects; target <= 2.5 KB: {'met' if cache_ok else 'NOT MET'})"
    )
    print(f"load average before/after each size: {' -> '.join(loads)}")
    raw.update(cache_kb=cache_size / 1024, json_bytes=json_size, loads=loads)
    if args.json:
        args.json.write_text(json.dumps(raw, indent=1))
    print("targets met" if ok else "TARGETS NOT MET")
    return 0 if ok else 1


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
