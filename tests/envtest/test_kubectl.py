"""kubectl against the emulator: create -f, get (table), get -o json, apply --server-side, delete."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from pyscaffold_op.envtest import Environment

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

AT_YAML = """\
apiVersion: cnat.programming-kubernetes.info/v1alpha1
kind: At
metadata:
  name: kubectl-at
spec:
  schedule: "2026-12-02T15:00:00Z"
  command: echo hello
"""


def kubectl(
    env: Environment,
    *args: str,
    stdin: str | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        ["kubectl", "--kubeconfig", str(env.kubeconfig_path), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
    return proc


def test_kubectl_scenarios(thread_env: Environment, tmp_path: Path) -> None:
    manifest = tmp_path / "at.yaml"
    manifest.write_text(AT_YAML)
    out = kubectl(thread_env, "create", "-f", str(manifest)).stdout
    assert "at.cnat.programming-kubernetes.info/kubectl-at created" in out
    table = kubectl(thread_env, "get", "ats").stdout.splitlines()
    assert table[0].split() == ["NAME", "SCHEDULE", "PHASE", "AGE"]
    assert table[1].split()[:2] == ["kubectl-at", "2026-12-02T15:00:00Z"]
    obj = json.loads(kubectl(thread_env, "get", "at", "kubectl-at", "-o", "json").stdout)
    assert obj["spec"]["replicas"] == 1 and obj["metadata"]["uid"]
    applied = AT_YAML.replace("echo hello", "echo applied")
    out = kubectl(thread_env, "apply", "--server-side", "--force-conflicts", "-f", "-", stdin=applied).stdout
    assert "serverside-applied" in out
    obj = json.loads(
        kubectl(
            thread_env,
            "get",
            "ats.cnat.programming-kubernetes.info",
            "kubectl-at",
            "-o",
            "json",
            "--show-managed-fields",
        ).stdout
    )
    assert obj["spec"]["command"] == "echo applied"
    assert {m["manager"] for m in obj["metadata"]["managedFields"]} >= {"kubectl"}
    # invalid objects: kubectl shows the server's field errors
    bad = AT_YAML.replace('"2026-12-02T15:00:00Z"', "soon").replace("kubectl-at", "bad-at")
    proc = kubectl(thread_env, "create", "-f", "-", stdin=bad, check=False)
    assert proc.returncode != 0
    assert 'spec.schedule: Invalid value: "soon"' in proc.stderr
    out = kubectl(thread_env, "delete", "at", "kubectl-at").stdout
    assert 'at.cnat.programming-kubernetes.info "kubectl-at" deleted' in out
    proc = kubectl(thread_env, "get", "at", "kubectl-at", check=False)
    assert proc.returncode != 0 and "NotFound" in proc.stderr


CM_YAML = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: kc
data:
  a: "1"
"""


def test_kubectl_builtins(thread_env: Environment) -> None:
    kubectl(thread_env, "create", "-f", "-", stdin=CM_YAML)
    assert "kc" in kubectl(thread_env, "get", "configmaps").stdout
    out = kubectl(thread_env, "get", "ns").stdout
    assert "default" in out and "Active" in out
    kubectl(thread_env, "label", "configmap", "kc", "team=a")
    assert "kc" in kubectl(thread_env, "get", "cm", "-l", "team=a", "-o", "name").stdout
    kubectl(thread_env, "run", "bb", "--image=busybox", "--restart=Never")
    assert "bb" in kubectl(thread_env, "get", "pods").stdout
    kubectl(thread_env, "delete", "configmap", "kc")
    kubectl(thread_env, "delete", "pod", "bb")
    names = kubectl(thread_env, "api-resources", "-o", "name").stdout.split()
    assert "ats.cnat.programming-kubernetes.info" in names and "leases.coordination.k8s.io" in names
    # typed kubectl generators send protobuf (tests/envtest/test_kubectl_protobuf.py: every generator)
    kubectl(thread_env, "create", "namespace", "team-a")
    kubectl(thread_env, "create", "configmap", "proto", "-n", "team-a", "--from-literal=a=1")
    kubectl(thread_env, "create", "secret", "generic", "pw", "-n", "team-a", "--from-literal=pw=hunter2")
    cm = json.loads(kubectl(thread_env, "get", "cm", "proto", "-n", "team-a", "-o", "json").stdout)
    assert cm["data"] == {"a": "1"}
    secret = json.loads(kubectl(thread_env, "get", "secret", "pw", "-n", "team-a", "-o", "json").stdout)
    assert secret["data"] == {"pw": "aHVudGVyMg=="}, secret
    assert secret["type"] == "Opaque", secret


POD_YAML = """\
apiVersion: v1
kind: Pod
metadata:
  name: hello
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: ["/bin/sh", "-c", "echo hello world"]
"""

EVENT_YAML = """\
apiVersion: v1
kind: Event
metadata:
  name: hello.1
involvedObject: {kind: Pod, name: hello, namespace: default}
reason: Started
message: started the container
type: Normal
"""


def test_kubectl_logs_and_events() -> None:
    import time

    from pyscaffold_op.envtest import KubeletSimulator

    env = Environment(kubelet=KubeletSimulator(pending_seconds=0.01, run_seconds=0.01)).start_in_thread()
    try:
        kubectl(env, "create", "-f", "-", stdin=POD_YAML)
        deadline = time.monotonic() + 10
        while "Completed" not in kubectl(env, "get", "pod", "hello").stdout:
            assert time.monotonic() < deadline, "pod did not complete"
            time.sleep(0.1)
        assert kubectl(env, "logs", "hello").stdout == "hello world\n"
        kubectl(env, "create", "-f", "-", stdin=EVENT_YAML)
        table = kubectl(env, "get", "events").stdout.splitlines()
        assert table[0].split()[:3] == ["LAST", "SEEN", "TYPE"]
        assert "pod/hello" in table[1] and "started the container" in table[1]
        assert "Started" in kubectl(env, "describe", "pod", "hello").stdout
    finally:
        env.stop()


UNDEPLOY_YAML = """\
apiVersion: v1
kind: Namespace
metadata:
  name: undeploy-me
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: controller-manager
  namespace: undeploy-me
spec:
  selector:
    matchLabels: {app: manager}
  template:
    metadata:
      labels: {app: manager}
    spec:
      containers:
      - name: manager
        image: controller:latest
---
apiVersion: v1
kind: Service
metadata:
  name: controller-manager-metrics-service
  namespace: undeploy-me
spec:
  selector: {app: manager}
  ports:
  - name: https
    port: 8443
    targetPort: 8443
"""


def test_kubectl_delete_namespace_then_contents(thread_env: Environment, tmp_path: Path) -> None:
    """`make undeploy`: kustomize lists the Namespace first and kubectl deletes in that order, so the
    contents must still be there when their DELETEs come (namespace deletion is asynchronous)."""
    manifest = tmp_path / "undeploy.yaml"
    manifest.write_text(UNDEPLOY_YAML)
    out = kubectl(thread_env, "apply", "-f", str(manifest)).stdout
    assert "namespace/undeploy-me created" in out and "service/controller-manager-metrics-service" in out
    proc = kubectl(thread_env, "delete", "--ignore-not-found=false", "-f", str(manifest), check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()  # newer kubectl versions add "from <ns> namespace"
    assert [line.split(" deleted")[0] for line in lines] == [
        'namespace "undeploy-me"',
        'deployment.apps "controller-manager"',
        'service "controller-manager-metrics-service"',
    ], proc.stdout
    # kubectl waited for them all to be gone, the Namespace too
    proc = kubectl(thread_env, "get", "namespace", "undeploy-me", check=False)
    assert proc.returncode != 0 and "not found" in proc.stderr
