"""`kubectl certificate approve|deny` against the emulator (issue 25 follow-up): kubectl writes the
CSR's /approval subresource, which the emulator serves as kube-apiserver does."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from pyscaffold_op.envtest import Environment

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


def csr_manifest(name: str) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    pem = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    request = base64.b64encode(pem.public_bytes(serialization.Encoding.PEM)).decode()
    return json.dumps(
        {
            "apiVersion": "certificates.k8s.io/v1",
            "kind": "CertificateSigningRequest",
            "metadata": {"name": name},
            "spec": {
                "request": request,
                "signerName": "kubernetes.io/kube-apiserver-client",
                "usages": ["client auth"],
            },
        }
    )


def kubectl(env: Environment, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(env.kubeconfig_path), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
    )


def conditions(env: Environment, name: str) -> list[dict[str, Any]]:
    proc = kubectl(env, "get", "csr", name, "-o", "json")
    assert proc.returncode == 0, proc.stderr
    return list(json.loads(proc.stdout).get("status", {}).get("conditions", []))


def test_kubectl_certificate_approve_and_deny(thread_env: Environment) -> None:
    for name in ("to-approve", "to-deny"):
        created = kubectl(thread_env, "create", "-f", "-", stdin=csr_manifest(name))
        assert created.returncode == 0, created.stderr
    spec = json.loads(kubectl(thread_env, "get", "csr", "to-approve", "-o", "json").stdout)["spec"]
    assert spec["username"] == "envtest-admin" and "system:masters" in spec["groups"]

    approved = kubectl(thread_env, "certificate", "approve", "to-approve")
    assert approved.returncode == 0, approved.stderr
    assert "certificatesigningrequest.certificates.k8s.io/to-approve approved" in approved.stdout
    [cond] = conditions(thread_env, "to-approve")
    assert (cond["type"], cond["status"], cond["reason"]) == ("Approved", "True", "KubectlApprove")
    assert cond["lastUpdateTime"] and cond["lastTransitionTime"]

    denied = kubectl(thread_env, "certificate", "deny", "to-deny")
    assert denied.returncode == 0, denied.stderr
    assert [c["type"] for c in conditions(thread_env, "to-deny")] == ["Denied"]
    table = kubectl(thread_env, "get", "csr").stdout
    rows = {line.split()[0]: line.split()[-1] for line in table.splitlines()[1:]}
    assert rows == {"to-approve": "Approved", "to-deny": "Denied"}

    # a decision is final: kubectl refuses to approve what is denied, the server to add Approved
    again = kubectl(thread_env, "certificate", "approve", "to-deny")
    assert again.returncode != 0
    assert [c["type"] for c in conditions(thread_env, "to-deny")] == ["Denied"]


def test_approval_needs_approve_on_the_signer(thread_env: Environment) -> None:
    created = kubectl(thread_env, "create", "-f", "-", stdin=csr_manifest("needs-signer"))
    assert created.returncode == 0, created.stderr
    rules = [
        {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"], "verbs": ["get"]},
        {
            "apiGroups": ["certificates.k8s.io"],
            "resources": ["certificatesigningrequests/approval"],
            "verbs": ["update"],
        },
    ]
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "csr-approver"},
        "rules": rules,
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "csr-approver"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "csr-approver"},
        "subjects": [{"kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io"}],
    }
    for obj in (role, binding):
        assert kubectl(thread_env, "create", "-f", "-", stdin=json.dumps(obj)).returncode == 0
    refused = kubectl(thread_env, "certificate", "approve", "needs-signer", "--as", "bob")
    assert refused.returncode != 0
    assert 'user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"' in (
        refused.stderr
    )
    assert conditions(thread_env, "needs-signer") == []

    role["rules"] = [
        *rules,
        {
            "apiGroups": ["certificates.k8s.io"],
            "resources": ["signers"],
            "resourceNames": ["kubernetes.io/*"],
            "verbs": ["approve"],
        },
    ]
    assert kubectl(thread_env, "replace", "-f", "-", stdin=json.dumps(role)).returncode == 0
    allowed = kubectl(thread_env, "certificate", "approve", "needs-signer", "--as", "bob")
    assert allowed.returncode == 0, allowed.stderr
    assert [c["type"] for c in conditions(thread_env, "needs-signer")] == ["Approved"]
