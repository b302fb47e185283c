"""The simulated kube-apiserver-client signer of `Environment(tls=True)`: an approved CSR gets a
certificate from the emulator's CA, which then authenticates its subject; a request that signer may
not sign gets a Failed condition instead."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from pyscaffold_op.envtest import Environment
from pyscaffold_op.testing import eventually
from tests.envtest.test_tls_rbac import _admin, _call, _ssl

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"


def _request(user: str, group: str) -> tuple[str, bytes]:
    """A PEM certificate request for CN=user, O=group (base64, as spec.request holds it) and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [x509.NameAttribute(NameOID.ORGANIZATION_NAME, group), x509.NameAttribute(NameOID.COMMON_NAME, user)]
    )
    csr = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode(), key_pem


async def _create_and_approve(env: Environment, name: str, request: str, usages: list[str]) -> None:
    body = {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {
            "request": request,
            "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": usages,
            "expirationSeconds": 3600,
        },
    }
    created = await _admin(env, "POST", CSRS, body)
    approved = {"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}
    await _admin(env, "PUT", f"{CSRS}/{name}/approval", {**created, "status": {"conditions": [approved]}})


async def test_an_approved_csr_gets_a_client_certificate_that_authenticates(tmp_path: Path) -> None:
    async with Environment(tls=True) as env:
        request, key_pem = _request("carol", "devs")
        await _create_and_approve(env, "carol", request, ["client auth", "digital signature"])

        async def issued() -> Any:
            csr = await _admin(env, "GET", f"{CSRS}/carol", None)
            return csr.get("status", {}).get("certificate")

        cert_pem = base64.b64decode(await eventually(issued))
        cert = x509.load_pem_x509_certificate(cert_pem)
        assert env.ca_pem is not None
        cert.verify_directly_issued_by(x509.load_pem_x509_certificate(env.ca_pem))
        lifetime = cert.not_valid_after_utc - cert.not_valid_before_utc
        assert lifetime.total_seconds() <= 3600 + 5 * 60  # expirationSeconds, backdated 5 minutes

        status, review = await _call(
            env,
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
            ctx=_ssl(env, (cert_pem, key_pem), tmp_path),
        )
        assert status == 201
        assert review["status"]["userInfo"]["username"] == "carol"
        assert "devs" in review["status"]["userInfo"]["groups"]


async def test_a_request_the_signer_may_not_sign_fails() -> None:
    async with Environment(tls=True) as env:
        request, _key = _request("dave", "devs")
        await _create_and_approve(env, "dave", request, ["client auth", "server auth"])

        async def failed() -> Any:
            csr = await _admin(env, "GET", f"{CSRS}/dave", None)
            conditions = csr.get("status", {}).get("conditions", [])
            return [c for c in conditions if c["type"] == "Failed"]

        [condition] = await eventually(failed)
        assert condition["reason"] == "SignerValidationFailure"
        assert "server auth" in condition["message"]
        csr = await _admin(env, "GET", f"{CSRS}/dave", None)
        assert "certificate" not in csr["status"]
