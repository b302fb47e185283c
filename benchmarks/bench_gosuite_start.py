"""Start time of an envtest suite for Go: controller-runtime's envtest starting its real binaries
(kube-apiserver + etcd, KUBEBUILDER_ASSETS) against `pyop envtest serve --bare` (USE_EXISTING_CLUSTER).

One round runs controller-runtime's `pkg/client` suite binary (`make oracles`) twice: once as envtest
does by default, its BeforeSuite starting the binaries and installing the suite's CRDs; once against
a bare emulator started for it, timed from the command's start to its kubeconfig on stdout, plus the
suite's BeforeSuite (installing the CRDs into it). Ginkgo's JSON report gives the BeforeSuite's time.

    python benchmarks/bench_gosuite_start.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pyscaffold_op.dev.oracles import oracle_bin  # noqa: E402

SUITE = "gosuites/controller-runtime/pkg/client/client.test"


def _before_suite(exe: Path, env: dict[str, str]) -> tuple[float, float]:
    """(BeforeSuite seconds, whole suite seconds) of one run of `exe`."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "r.json"
        start = time.monotonic()
        subprocess.run(
            [str(exe), f"-ginkgo.json-report={report}", "-ginkgo.no-color"],
            cwd=exe.parent,
            env=env,
            capture_output=True,
            check=True,
            timeout=900,
        )
        total = time.monotonic() - start
        for suite in json.loads(report.read_text()):
            for spec in suite["SpecReports"]:
                if spec["LeafNodeType"] == "BeforeSuite":
                    return spec["RunTime"] / 1e9, total
    raise RuntimeError("no BeforeSuite in the report")


def _emulator(exe: Path, base: dict[str, str]) -> tuple[float, float, float]:
    """(emulator start, BeforeSuite, whole suite) with a fresh `pyop envtest serve --bare`."""
    start = time.monotonic()
    proc = subprocess.Popen(
        # plain HTTP, as measured before serve's default became a cluster's TLS
        [sys.executable, "-m", "pyscaffold_op.cli", "envtest", "serve", "--bare", "--no-tls"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        kubeconfig = proc.stdout.readline().strip()
        started = time.monotonic() - start
        before, total = _before_suite(exe, {**base, "USE_EXISTING_CLUSTER": "true", "KUBECONFIG": kubeconfig})
        return started, before, total
    finally:
        proc.terminate()
        proc.wait(10)


def _summary(label: str, values: list[float]) -> str:
    spread = f"range {min(values):.2f}-{max(values):.2f}, n={len(values)}"
    return f"{label}: median {statistics.median(values):.2f} s ({spread})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    exe = oracle_bin(SUITE)
    assets = oracle_bin("kube-apiserver")
    if exe is None or assets is None:
        sys.exit(f"{SUITE} or kube-apiserver is not installed: make oracles")
    base = {k: v for k, v in os.environ.items() if k not in ("USE_EXISTING_CLUSTER", "KUBECONFIG")}
    real_before, real_total, emu_start, emu_before, emu_total = [], [], [], [], []
    for _ in range(args.runs):
        before, total = _before_suite(exe, {**base, "KUBEBUILDER_ASSETS": str(assets.parent)})
        real_before.append(before)
        real_total.append(total)
        started, before, total = _emulator(exe, base)
        emu_start.append(started)
        emu_before.append(before)
        emu_total.append(total + started)
    print(f"load average {os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d')}")
    print(_summary("envtest + kube-apiserver/etcd: BeforeSuite (start, CRDs)", real_before))
    print(_summary("envtest + kube-apiserver/etcd: whole pkg/client suite", real_total))
    print(_summary("pyop envtest serve --bare: start", emu_start))
    print(
        _summary(
            "pyop envtest serve --bare: start + BeforeSuite",
            [a + b for a, b in zip(emu_start, emu_before, strict=True)],
        )
    )
    print(_summary("pyop envtest serve --bare: start + whole pkg/client suite", emu_total))


if __name__ == "__main__":
    main()
