"""Server CPU per request of two emulator checkouts, side by side under the same load.

    python benchmarks/bench_envtest_ab.py --base /tmp/main [--rounds 10] [--batch 500]
    python benchmarks/bench_envtest_ab.py --base . --base-env PYOP_ENVTEST_LOOP=asyncio  # uvloop or not

On a shared machine the CPU a request costs moves with the other processes' load by ±30% within a
minute, so comparing two runs made one after the other says little. This starts `pyop envtest serve`
(`--no-kubelet --no-workloads`, the benchmark CRD) from this checkout and from `--base` at the same
time and sends them alternating batches of the same requests (16 in flight); each batch's server CPU
(/proc utime+stime of that server) is divided by its requests. Prints, per request kind, the median
and quartiles over the rounds for each checkout and the median of the per-round ratios new/base.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_envtest import CRD, ITEMS, cpu_seconds, item, rate  # noqa: E402


def start(root: Path, extra_env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-ab-"))
    (tmp / "crd.yaml").write_text(CRD)
    kc = tmp / "kubeconfig"
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "pyscaffold_op", "envtest", "serve", "--no-kubelet", "--no-workloads"),
            *("--no-tls", "--crds", str(tmp / "crd.yaml"), "--kubeconfig-out", str(kc)),
        ],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root), **extra_env},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    proc.stdout.readline()
    return proc, yaml.safe_load(kc.read_text())["clusters"][0]["cluster"]["server"]


KINDS = {
    "get": lambda i: ("GET", f"{ITEMS}/s{i % 100}", None),
    "status PATCH": lambda i: (
        "PATCH",
        f"{ITEMS}/s{i % 100}/status?fieldManager=bench",
        {"status": {"observed": i, "handledAt": time.time()}},
        "application/merge-patch+json",
    ),
    "create": lambda i: ("POST", ITEMS, item(f"c{i}-{time.monotonic_ns()}")),
}


async def main(base: Path, rounds: int, batch: int, base_env: dict[str, str]) -> None:
    servers = {"new": start(HERE.parent, {}), "base": start(base, base_env)}
    per: dict[tuple[str, str], list[float]] = {}
    try:
        for _proc, url in servers.values():
            await rate(url, 100, 16, lambda i: ("POST", ITEMS, item(f"s{i}")))
            for make in KINDS.values():
                await rate(url, 200, 16, make)  # warm-up
        for r in range(rounds):
            for kind, make in KINDS.items():
                order = ["new", "base"] if r % 2 == 0 else ["base", "new"]
                for name in order:
                    proc, url = servers[name]
                    c0 = cpu_seconds(proc.pid)
                    await rate(url, batch, 16, make)
                    per.setdefault((kind, name), []).append((cpu_seconds(proc.pid) - c0) / batch * 1e6)
    finally:
        for proc, _url in servers.values():
            proc.terminate()
            proc.wait(10)
    print(
        f"server CPU µs/request, {rounds} rounds of {batch} requests per kind and checkout, alternating; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.1f}"
    )
    print(f"{'request':<14} {'base p50 (p25-p75)':>22} {'new p50 (p25-p75)':>22} {'new/base p50':>13}")
    for kind in KINDS:
        b, n = per[(kind, "base")], per[(kind, "new")]

        def q(v: list[float]) -> str:
            qs = statistics.quantiles(v, n=4)
            return f"{statistics.median(v):.0f} ({qs[0]:.0f}-{qs[2]:.0f})"

        ratio = statistics.median(x / y for x, y in zip(n, b, strict=True))
        print(f"{kind:<14} {q(b):>22} {q(n):>22} {ratio:>12.2f}x")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", type=Path, required=True, help="the other checkout's root")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--batch", type=int, default=500)
    ap.add_argument(
        "--base-env", action="append", default=[], metavar="NAME=VALUE", help="environment of the base server"
    )
    args = ap.parse_args()
    extra = dict(kv.split("=", 1) for kv in args.base_env)
    asyncio.run(main(args.base, args.rounds, args.batch, extra))
