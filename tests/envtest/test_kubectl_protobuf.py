"""kubectl's typed generators against the emulator: they send protobuf bodies
(`application/vnd.kubernetes.protobuf`). Each object the emulator stores must hold everything the same
command prints with `--dry-run=client -o json` (the JSON of the very Go object kubectl encodes)."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pyscaffold_op.envtest import Environment

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

# (generator arguments, the object's `kubectl get` arguments); in creation order (later ones use earlier)
GENERATORS: list[tuple[list[str], list[str]]] = [
    (["create", "deployment", "web", "--image=nginx", "--port=8080", "--replicas=2"], ["deployment", "web"]),
    (["create", "job", "once", "--image=busybox", "--", "echo", "hi"], ["job", "once"]),
    (["create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *"], ["cronjob", "tick"]),
    (["create", "job", "tick-now", "--from=cronjob/tick"], ["job", "tick-now"]),
    (["create", "service", "clusterip", "svc", "--tcp=80:8080"], ["service", "svc"]),
    (["create", "service", "nodeport", "np", "--tcp=80:8080", "--node-port=30080"], ["service", "np"]),
    (["create", "role", "reader", "--verb=get,list", "--resource=pods,deployments.apps"], ["role", "reader"]),
    (
        ["create", "rolebinding", "reader", "--role=reader", "--user=alice", "--group=devs"],
        ["rolebinding", "reader"],
    ),
    (
        ["create", "clusterrole", "pb-reader", "--verb=get", "--resource=nodes", "--non-resource-url=/logs"],
        ["clusterrole", "pb-reader"],
    ),
    (["create", "clusterrole", "pb-aggregated", "--aggregation-rule=a=b"], ["clusterrole", "pb-aggregated"]),
    (
        [
            "create",
            "clusterrolebinding",
            "pb-reader",
            "--clusterrole=pb-reader",
            "--serviceaccount=default:default",
        ],
        ["clusterrolebinding", "pb-reader"],
    ),
    (
        ["create", "priorityclass", "pb-high", "--value=1000", "--description=high"],
        ["priorityclass", "pb-high"],
    ),
    (["create", "quota", "q", "--hard=pods=10,requests.cpu=1500m,requests.memory=1Gi"], ["quota", "q"]),
    (["create", "poddisruptionbudget", "pdb", "--selector=app=web", "--min-available=50%"], ["pdb", "pdb"]),
    (["create", "ingress", "ing", "--rule=foo.com/bar*=svc:80,tls=cert"], ["ingress", "ing"]),
    (
        ["autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=80"],
        ["horizontalpodautoscalers.v1.autoscaling", "web"],
    ),
    (
        ["expose", "deployment", "web", "--port=80", "--target-port=8080", "--name=web-exposed"],
        ["service", "web-exposed"],
    ),
]


def kubectl(env: Environment, *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run(
        ["kubectl", "--kubeconfig", str(env.kubeconfig_path), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, f"kubectl {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def missing(stored: Any, sent: Any, path: str = "") -> list[str]:
    """Where `stored` lacks or changes what `sent` holds (nulls sent are Go's empty values)."""
    if sent is None:
        return []
    if isinstance(sent, dict) and isinstance(stored, dict):
        return [m for k, v in sent.items() for m in missing(stored.get(k), v, f"{path}.{k}")]
    if isinstance(sent, list) and isinstance(stored, list) and len(sent) == len(stored):
        return [
            m
            for i, (a, b) in enumerate(zip(stored, sent, strict=True))
            for m in missing(a, b, f"{path}[{i}]")
        ]
    return [] if stored == sent else [f"{path}: stored {stored!r}, sent {sent!r}"]


def test_generators_store_what_kubectl_sends(thread_env: Environment) -> None:
    for args, get in GENERATORS:
        cut = args.index("--") if "--" in args else len(args)
        dry_run = [*args[:cut], "--dry-run=client", "-o", "json", *args[cut:]]
        sent = json.loads(kubectl(thread_env, *dry_run))
        kubectl(thread_env, *args)
        stored = json.loads(kubectl(thread_env, "get", *get, "-o", "json"))
        assert stored["metadata"]["uid"], args
        assert missing(stored, sent) == [], args


def test_create_token_is_a_working_credential(thread_env: Environment) -> None:
    kubectl(thread_env, "create", "serviceaccount", "pb-robot")
    token = kubectl(thread_env, "create", "token", "pb-robot", "--duration=15m", "--audience=pyop").strip()
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert claims["aud"] == ["pyop"]
    assert claims["exp"] - claims["iat"] == 900
    assert claims["sub"] == "system:serviceaccount:default:pb-robot"


RBAC = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: pb-reconciled}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: pb-reconciled, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: pb-reconciled}
subjects:
- {kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}
"""


def test_auth_reconcile_creates_then_adds_rules(thread_env: Environment, tmp_path: Path) -> None:
    manifest = tmp_path / "rbac.yaml"
    manifest.write_text(RBAC)
    kubectl(thread_env, "auth", "reconcile", "-f", str(manifest))
    manifest.write_text(
        RBAC.replace("verbs: [get]", "verbs: [get, watch]").replace("name: alice", "name: bob")
    )
    kubectl(thread_env, "auth", "reconcile", "-f", str(manifest))
    role = json.loads(kubectl(thread_env, "get", "clusterrole", "pb-reconciled", "-o", "json"))
    verbs = sorted(v for rule in role["rules"] for v in rule["verbs"])
    assert verbs == ["get", "watch"]
    binding = json.loads(kubectl(thread_env, "get", "rolebinding", "pb-reconciled", "-o", "json"))
    assert sorted(s["name"] for s in binding["subjects"]) == ["alice", "bob"]
