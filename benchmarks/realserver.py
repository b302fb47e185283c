"""The real kube-apiserver + etcd for the benchmarks (bench_vs_go, bench_cost_curve): envtest's
ControlPlane (the binaries of `make oracles`, or PYOP_ENVTEST_ASSETS), with the benchmark's CRDs
installed and a kubeconfig carrying its CA and bearer token.

The server's figures: CPU of kube-apiserver and etcd together, and requests from kube-apiserver's
own `apiserver_request_total` (every request it answered, the scrape itself included)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from pyscaffold_op.envtest.controlplane import ControlPlane


def assets() -> Path:
    for var in ("PYOP_ENVTEST_ASSETS", "KUBEBUILDER_ASSETS", "PYOP_ORACLES_BIN"):
        if os.environ.get(var):
            return Path(os.environ[var])
    return Path(__file__).resolve().parents[1] / "bin"


class RealServer:
    """kube-apiserver + etcd on loopback, serving `crds` (YAML documents), until `stop`."""

    def __init__(self, crds: list[str]) -> None:
        self.cp = ControlPlane(assets=assets()).start()
        try:
            self.cp.install_crds([yaml.safe_load(doc) for doc in crds])
            self._dir = Path(tempfile.mkdtemp(prefix="bench-real-"))
            self.kubeconfig = str(self._dir / "kubeconfig")
            Path(self.kubeconfig).write_text(json.dumps(self.cp.kubeconfig_dict()))
            self.url, self.token, self.ca_pem = self.cp.url, self.cp.token, self.cp.ca_pem
            self.pids = [p.pid for p in self.cp._procs]  # etcd, kube-apiserver
            self._ssl = ssl.create_default_context(cadata=self.ca_pem.decode())
            for doc in crds:
                self._wait_listable(yaml.safe_load(doc))
        except BaseException:
            self.cp.stop()
            raise

    def _get(self, path: str) -> bytes:
        req = urllib.request.Request(self.url + path)
        req.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(req, context=self._ssl, timeout=30) as resp:
            return bytes(resp.read())

    def _wait_listable(self, crd: dict[str, Any], timeout: float = 30.0) -> None:
        """Until the custom resources list: a new CRD's storage answers 429 while it initialises."""
        spec = crd["spec"]
        version = next(v["name"] for v in spec["versions"] if v.get("storage"))
        self.wait_served(f"/apis/{spec['group']}/{version}/{spec['names']['plural']}?limit=1", timeout)

    def wait_served(self, path: str, timeout: float = 120.0) -> None:
        """Until `path` answers 200 (a 429 or 5xx while storage or a watch cache initialises)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._get(path)
                return
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def counts(self) -> dict[str, int]:
        """Requests answered so far, as kube-apiserver's metrics count them."""
        text = self._get("/metrics").decode()
        total = 0.0
        for line in text.splitlines():
            if line.startswith("apiserver_request_total{"):
                total += float(line.rsplit(" ", 1)[1])
        return {"total": int(total)}

    def pin(self, cores: str) -> None:
        """Every thread of kube-apiserver and etcd onto `cores` (a taskset list)."""
        for pid in self.pids:
            subprocess.run(["taskset", "-a", "-p", "-c", cores, str(pid)], check=True, capture_output=True)

    def stop(self) -> None:
        self.cp.stop()
        shutil.rmtree(self._dir, ignore_errors=True)


async def settled_cpu(read: Any, window: float = 0.5, tick: float = 0.011, limit: float = 15.0) -> float:
    """`read()` (CPU seconds) once it has stopped moving: less than one clock tick over `window`
    seconds. The work an event set off (an owned object's watch event, a status update's echo) is
    counted whenever it finishes; an idle process's housekeeping does not keep the wait going."""
    deadline = time.monotonic() + limit
    samples = [(time.monotonic(), read())]
    while time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        now, value = time.monotonic(), read()
        samples.append((now, value))
        old = [v for t, v in samples if now - t >= window]
        if old and value - old[-1] < tick:
            return value
    return samples[-1][1]
