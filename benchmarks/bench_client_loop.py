"""The runtime client's CPU per request on the standard loop and on uvloop, interleaved (issue 18).

    python benchmarks/bench_client_loop.py [--rounds 6] [--requests 2400]

A minimal aiohttp server in a child process answers every request with a 150-byte object; in this
process `RestTransport` sends status-PATCH-like requests, then GETs, 8 at a time, alternately on
`asyncio.new_event_loop()` and on `runtime.loops.new_event_loop()` (uvloop when installed), and the
process CPU per request is reported (the server's CPU is not counted). Rounds alternate so both loops
see the same machine load. To compare two versions of the runtime, run it once per version with
`PYTHONPATH` pointing at each, alternating.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time

SERVER = """
import sys
from aiohttp import web
BODY = b'{"apiVersion":"bench.pyop.io/v1","kind":"BenchItem","metadata":{"name":"a","resourceVersion":"5"}}'
async def handle(request):
    await request.read()
    return web.Response(body=BODY, content_type="application/json")
app = web.Application()
app.router.add_route("*", "/{tail:.*}", handle)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None)
"""
PATH = "/apis/bench.pyop.io/v1/namespaces/default/benchitems/item-{}/status"
BODY = b'{"status":{"observed":1,"handledAt":2.5}}'


async def requests(port: int, n: int, method: str) -> float:
    """CPU µs per request for n requests, 8 in flight, after a warm-up."""
    from pyscaffold_op.runtime.client.rest import RestTransport
    from pyscaffold_op.runtime.client.restconfig import RestConfig

    transport = RestTransport(RestConfig(server=f"http://127.0.0.1:{port}"))
    merge = "application/merge-patch+json"
    body = BODY if method == "PATCH" else None
    try:
        for i in range(100):
            await transport.request(method, PATH.format(i), body=body, content_type=merge)
        started = time.process_time()

        async def worker(w: int) -> None:
            for i in range(n // 8):
                await transport.request(method, PATH.format(w * 100_000 + i), body=body, content_type=merge)

        await asyncio.gather(*(worker(w) for w in range(8)))
        return (time.process_time() - started) / (n // 8 * 8) * 1e6
    finally:
        await transport.close()


def main() -> int:
    from pyscaffold_op.runtime.loops import new_event_loop

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--requests", type=int, default=2400)
    args = parser.parse_args()
    port = 18000 + os.getpid() % 1000
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)])
    loops = {"asyncio": asyncio.new_event_loop, "runtime.loops": new_event_loop}
    per_request: dict[str, list[float]] = {f"{m} {name}": [] for m in ("PATCH", "GET") for name in loops}
    try:
        time.sleep(1.0)  # the server's start
        for _ in range(args.rounds):
            for method in ("PATCH", "GET"):
                for name, factory in loops.items():
                    with asyncio.Runner(loop_factory=factory) as runner:
                        cpu = runner.run(requests(port, args.requests, method))
                        per_request[f"{method} {name}"].append(cpu)
    finally:
        server.terminate()
        server.wait()
    kind = type(new_event_loop()).__module__
    for name, values in per_request.items():
        print(
            f"{name:<20} client CPU per request: median {statistics.median(values):.1f} µs, "
            f"min {min(values):.1f} µs  ({', '.join(f'{v:.0f}' for v in values)})"
        )
    print(f"(runtime.loops runs on {kind})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
