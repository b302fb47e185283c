"""Cluster mode: kube-apiserver, kube-controller-manager, kube-scheduler and kwok behind the same
`Environment`, fixtures and `pyop envtest serve`; judged by those real processes (`make oracles`).

The workload corpus (tests/workloads) compares what the cluster and the emulator converge to; these
tests check that pyop's test API reaches the cluster faithfully: its kubeconfig is kind's, its Pods
get a ServiceAccount's token volume, kwok's node runs them to the end the command says, the at
example passes every test, and `serve --cluster` serves it.
"""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from pyscaffold_op.dev.oracles import REPO_ROOT, missing_reason, oracle_bin
from pyscaffold_op.envtest import Environment
from pyscaffold_op.testing import eventually

pytestmark = [pytest.mark.oracle, pytest.mark.slow, pytest.mark.timeout(900)]

TOOLS = ("kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler", "kwok")
MISSING = [t for t in TOOLS if oracle_bin(t) is None]
if MISSING:
    pytestmark.append(pytest.mark.skip(reason=missing_reason(MISSING[0])))
ASSETS = oracle_bin("kube-apiserver").parent if not MISSING else None  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Environment]:
    began = time.monotonic()
    env = Environment(mode="cluster", assets=ASSETS).start_in_thread(timeout=180)
    print(f"cluster up in {time.monotonic() - began:.1f}s")
    try:
        yield env
    finally:
        env.stop(timeout=60)


def _pod(name: str, command: list[str], restart: str = "Never") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": restart,
            "containers": [{"name": "c", "image": "busybox", "command": command}],
        },
    }


async def test_the_kubeconfig_is_kinds(cluster: Environment) -> None:
    from cryptography import x509

    config = yaml.safe_load(cluster.kubeconfig_path.read_text())
    user = config["users"][0]["user"]
    cert = x509.load_pem_x509_certificate(base64.b64decode(user["client-certificate-data"]))
    assert cert.subject.rfc4514_string() == "CN=kubernetes-admin,O=system:masters"
    assert config["clusters"][0]["cluster"]["certificate-authority-data"]
    if shutil.which("kubectl"):
        who = await asyncio.to_thread(
            subprocess.run,
            [
                "kubectl",
                "--kubeconfig",
                str(cluster.kubeconfig_path),
                "auth",
                "whoami",
                "-o",
                "jsonpath={.status.userInfo.username}",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert who.stdout == "kubernetes-admin", who.stderr


async def test_pods_run_to_the_end_their_command_says(cluster: Environment) -> None:
    """kwok's stages follow the emulator's default rule: exit codes from the command; restartPolicy
    Never ends the Pod, Always restarts the container; a server runs on."""
    from pyscaffold_op.models.core_v1 import Pod
    from pyscaffold_op.runtime import new_client

    client = new_client(cluster.config)
    cases = {
        "exit-3": (["sh", "-c", "echo x; exit 3"], "Never", ("Failed", "terminated", 3)),
        "false": (["false"], "Never", ("Failed", "terminated", 1)),
        "echo": (["sh", "-c", "echo hi"], "Never", ("Succeeded", "terminated", 0)),
        "on-failure-ok": (["echo", "hi"], "OnFailure", ("Succeeded", "terminated", 0)),
        "server": (["sh", "-c", "sleep 3600"], "Never", ("Running", "running", None)),
        "crash": (["sh", "-c", "exit 2"], "Always", ("Running", "waiting|running", "restarted")),
    }
    try:
        for name, (command, restart, _) in cases.items():
            await client.create(Pod.model_validate(_pod(name, command, restart)))

        for name, (_, _, (phase, state, code)) in cases.items():

            async def ended(
                name: str = name, phase: str = phase, state: str = state, code: Any = code
            ) -> bool:
                pod = await client.get(Pod, name, namespace="default")
                status = pod.status
                if status is None or status.phase != phase or not status.container_statuses:
                    return False
                c = status.container_statuses[0]
                now = next(k for k in ("running", "waiting", "terminated") if getattr(c.state, k) is not None)
                if code == "restarted":
                    return c.restart_count > 0 and now in state.split("|")
                exit_code = c.state.terminated.exit_code if c.state.terminated else None
                return now == state and exit_code == code

            assert await eventually(ended, timeout=60), name
        pod = await client.get(Pod, "echo", namespace="default")
        assert pod.spec.service_account_name == "default"
        assert any(v.name.startswith("kube-api-access-") for v in pod.spec.volumes or [])
        assert pod.spec.node_name == "envtest-node"
    finally:
        await client.close()


def _pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYOP_ENVTEST"},
        "PYOP_ENVTEST": "cluster",
        "PYOP_ENVTEST_ASSETS": str(ASSETS),
    }
    env["PYTHONPATH"] = ":".join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )


def test_the_at_example_passes_every_test_in_cluster_mode(tmp_path: Path) -> None:
    """The three tests real mode skips (a kubelet runs the Pod, the garbage collector deletes it) run
    against kwok and kube-controller-manager here."""
    root = tmp_path / "at"
    shutil.copytree(REPO_ROOT / "testdata" / "at", root, ignore=shutil.ignore_patterns("wheels", ".venv"))
    run = _pytest(root)
    assert run.returncode == 0, run.stdout + run.stderr
    summary = run.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "skipped" not in summary and "failed" not in summary, run.stdout


def test_serve_cluster_prints_a_kubeconfig_kubectl_uses(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    crds = REPO_ROOT / "testdata" / "at" / "config" / "crd" / "bases"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pyscaffold_op",
            "envtest",
            "serve",
            "--cluster",
            "--assets",
            str(ASSETS),
            "--crds",
            str(crds),
            "--kubeconfig-out",
            str(kubeconfig),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == str(kubeconfig)
        if shutil.which("kubectl"):
            got = subprocess.run(
                ["kubectl", "--kubeconfig", str(kubeconfig), "get", "nodes,crd", "-o", "name"],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert got.stdout.split() == [
                "node/envtest-node",
                "customresourcedefinition.apiextensions.k8s.io/ats.programming-kubernetes.viper.run",
            ], got.stderr
    finally:
        proc.terminate()
        proc.wait(60)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--no-kubelet"], "--no-kubelet: --cluster runs kwok's fake node"),
        (["--no-tls"], "--no-tls: --cluster serves HTTPS"),
        (["--assets", "/nonexistent"], "--assets /nonexistent: no such folder"),
    ],
)
def test_serve_cluster_refuses_what_it_cannot_do(flags: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pyscaffold_op", "envtest", "serve", "--cluster", *flags],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
