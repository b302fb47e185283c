"""kubectl against `pyop envtest serve` (kubelet and workload controllers on by default): rollouts,
tokens, graceful pod deletion, following logs."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: x
spec:
  replicas: 2
  selector:
    matchLabels: {app: x}
  template:
    metadata:
      labels: {app: x}
    spec:
      containers:
      - name: web
        image: nginx:1.25
"""


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    kc = tmp_path_factory.mktemp("serve") / "kubeconfig"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pyscaffold_op", "envtest", "serve", "--kubeconfig-out", str(kc)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == str(kc)
        yield kc
    finally:
        proc.terminate()
        proc.wait(10)


def kubectl(kc: Path, *args: str, stdin: str | None = None, timeout: float = 30) -> str:
    proc = subprocess.run(
        ["kubectl", "--kubeconfig", str(kc), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, f"kubectl {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def test_rollout_status_completes(kubeconfig: Path) -> None:
    kubectl(kubeconfig, "apply", "-f", "-", stdin=DEPLOYMENT)
    out = kubectl(kubeconfig, "rollout", "status", "deployment/x", "--timeout=20s")
    assert out.strip().endswith('deployment "x" successfully rolled out')
    kubectl(kubeconfig, "set", "image", "deployment/x", "web=nginx:1.26")
    out = kubectl(kubeconfig, "rollout", "status", "deployment/x", "--timeout=20s")
    assert 'deployment "x" successfully rolled out' in out
    history = kubectl(kubeconfig, "get", "rs", "-l", "app=x", "-o", "json")
    images = sorted(
        (rs["spec"]["replicas"], rs["spec"]["template"]["spec"]["containers"][0]["image"])
        for rs in json.loads(history)["items"]
    )
    assert images == [(0, "nginx:1.25"), (2, "nginx:1.26")]
    kubectl(kubeconfig, "scale", "deployment/x", "--replicas=3")
    kubectl(kubeconfig, "rollout", "status", "deployment/x", "--timeout=20s")
    d = json.loads(kubectl(kubeconfig, "get", "deployment", "x", "-o", "json"))
    assert d["status"]["readyReplicas"] == 3 and d["status"]["availableReplicas"] == 3
    ready = kubectl(kubeconfig, "get", "deployment", "x").splitlines()[1].split()
    assert ready[:4] == ["x", "3/3", "3", "3"]


def test_create_token_for_the_default_service_account(kubeconfig: Path) -> None:
    kubectl(kubeconfig, "create", "namespace", "tokens")
    token = kubectl(kubeconfig, "-n", "tokens", "create", "token", "default", "--duration=20m").strip()
    header, claims, _sig = token.split(".")
    payload = json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))
    assert json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))["alg"] == "RS256"
    assert payload["sub"] == "system:serviceaccount:tokens:default"
    assert payload["exp"] - payload["iat"] == 1200
    assert payload["kubernetes.io"]["serviceaccount"]["name"] == "default"
    review = json.loads(
        kubectl(
            kubeconfig,
            "create",
            "-o",
            "json",
            "-f",
            "-",
            stdin=json.dumps(
                {
                    "apiVersion": "authentication.k8s.io/v1",
                    "kind": "TokenReview",
                    "spec": {"token": token},
                }
            ),
        )
    )
    user = review["status"]["user"]
    assert review["status"]["authenticated"] is True
    assert user["username"] == "system:serviceaccount:tokens:default"
    assert "system:serviceaccounts:tokens" in user["groups"]


def test_delete_pod_is_graceful_and_force_is_immediate(kubeconfig: Path) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "sleeper"},
        "spec": {"containers": [{"name": "c", "image": "busybox", "command": ["sleep", "300"]}]},
    }
    kubectl(kubeconfig, "apply", "-f", "-", stdin=json.dumps(pod))
    kubectl(kubeconfig, "wait", "--for=condition=Ready", "pod/sleeper", "--timeout=20s")
    p = json.loads(kubectl(kubeconfig, "get", "pod", "sleeper", "-o", "json"))
    tolerations = {t["key"]: t for t in p["spec"]["tolerations"]}
    assert tolerations["node.kubernetes.io/not-ready"]["tolerationSeconds"] == 300
    # kubectl delete waits until the kubelet has stopped the pod and removed it
    out = kubectl(kubeconfig, "delete", "pod", "sleeper", "--timeout=20s")
    assert 'pod "sleeper" deleted' in out
    assert "sleeper" not in kubectl(kubeconfig, "get", "pods", "-o", "name")
    kubectl(kubeconfig, "apply", "-f", "-", stdin=json.dumps(pod))
    kubectl(kubeconfig, "wait", "--for=condition=Ready", "pod/sleeper", "--timeout=20s")
    out = kubectl(kubeconfig, "delete", "pod", "sleeper", "--grace-period=0", "--force", "--wait=false")
    assert "force deleted" in out or "deleted" in out
    assert "sleeper" not in kubectl(kubeconfig, "get", "pods", "-o", "name")


def test_default_kubernetes_service_and_node(kubeconfig: Path) -> None:
    svc = json.loads(kubectl(kubeconfig, "get", "service", "kubernetes", "-o", "json"))
    assert svc["spec"]["clusterIP"] == "10.96.0.1" and svc["spec"]["ports"][0]["port"] == 443
    nodes = json.loads(kubectl(kubeconfig, "get", "nodes", "-o", "json"))["items"]
    labels = nodes[0]["metadata"]["labels"]
    assert labels["kubernetes.io/os"] == "linux" and labels["beta.kubernetes.io/arch"] == "amd64"
    # the node IPAM controller's range, as on a kind or kubeadm cluster
    assert nodes[0]["spec"] == {"podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24"]}
    assert "default" in kubectl(kubeconfig, "get", "serviceaccounts", "-o", "name")


SETS = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s}
spec:
  replicas: 2
  serviceName: s
  selector: {matchLabels: {app: s}}
  template:
    metadata: {labels: {app: s}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: d}
spec:
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, command: [sh, -c, "echo hi from the job"]}]
"""


def test_rollout_status_of_sets_and_waiting_for_a_job(kubeconfig: Path) -> None:
    kubectl(kubeconfig, "apply", "-f", "-", stdin=SETS)
    out = kubectl(kubeconfig, "rollout", "status", "statefulset/s", "--timeout=20s")
    assert "partitioned roll out complete: 2 new pods have been updated" in out  # partition: 0
    out = kubectl(kubeconfig, "rollout", "status", "daemonset/d", "--timeout=20s")
    assert 'daemon set "d" successfully rolled out' in out
    kubectl(kubeconfig, "wait", "--for=condition=complete", "job/j", "--timeout=20s")
    assert kubectl(kubeconfig, "logs", "job/j") == "hi from the job\n"
