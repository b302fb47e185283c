"""kube-controller-manager's `kubernetes.io/kube-apiserver-client` signer, simulated when the emulator
serves HTTPS (`Environment(tls=True)`, `pyop envtest serve --tls`): an approved
CertificateSigningRequest for that signer gets a client certificate from the emulator's CA in
status.certificate, which the emulator then accepts as the CSR's subject (CN user, O groups).

As the real signer (pkg/controller/certificates/signer): requests it may not sign (usages other than
client auth, digital signature and key encipherment; DNS, IP, email or URI names) get a Failed
condition instead; the certificate lives expirationSeconds (at least 10 minutes), at most a year."""

from __future__ import annotations

import base64
import datetime
import secrets
from typing import TYPE_CHECKING

from pyscaffold_op.envtest.controllers.base import SimulatedController
from pyscaffold_op.envtest.registry import certificates
from pyscaffold_op.envtest.types import Obj

if TYPE_CHECKING:
    from cryptography import x509

    from pyscaffold_op.envtest.server.pki import Authority

CSRS = ("certificates.k8s.io", "v1", "certificatesigningrequests")
SIGNER = "kubernetes.io/kube-apiserver-client"
_ALLOWED_USAGES = {"client auth", "digital signature", "key encipherment"}
MAX_SECONDS = 365 * 24 * 3600  # --cluster-signing-duration's default
_SKEW = datetime.timedelta(minutes=5)  # backdated like the real signer: clocks drift


class ClientSigner(SimulatedController):
    primary = CSRS

    def __init__(self, authority: Authority) -> None:
        super().__init__()
        self.authority = authority

    def reconcile(self, namespace: str, name: str) -> None:
        csr = self.live(namespace, name)
        if csr is None or not _wants_certificate(csr):
            return
        spec = csr.get("spec") or {}
        try:
            request = _load_request(str(spec.get("request") or ""))
        except ValueError as err:
            self._fail(csr, f"unable to parse csr: {err}")
            return
        problem = _unsignable(request, list(spec.get("usages") or []))
        if problem:
            self._fail(csr, problem)
            return
        pem = self._sign(request, spec.get("expirationSeconds"))
        status = {**(csr.get("status") or {}), "certificate": base64.b64encode(pem).decode()}
        self.write_status(CSRS, csr, status)

    def _sign(self, request: x509.CertificateSigningRequest, expiration: object) -> bytes:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.x509.oid import ExtendedKeyUsageOID

        seconds = expiration if isinstance(expiration, int) else MAX_SECONDS
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(request.subject)
            .issuer_name(self.authority.cert.subject)
            .public_key(request.public_key())
            .serial_number(int.from_bytes(secrets.token_bytes(16), "big") >> 1)
            .not_valid_before(now - _SKEW)
            .not_valid_after(now + datetime.timedelta(seconds=min(max(seconds, 600), MAX_SECONDS)))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(self.authority.key, hashes.SHA256())
        )
        return cert.public_bytes(serialization.Encoding.PEM)

    def _fail(self, csr: Obj, message: str) -> None:
        failed = {"type": "Failed", "status": "True", "reason": "SignerValidationFailure", "message": message}
        status = csr.get("status") or {}
        conditions = [*(status.get("conditions") or []), failed]
        self.write_status(CSRS, csr, {**status, "conditions": conditions})


def _wants_certificate(csr: Obj) -> bool:
    status = csr.get("status") or {}
    failed = any(c.get("type") == "Failed" for c in status.get("conditions") or [] if isinstance(c, dict))
    return (
        (csr.get("spec") or {}).get("signerName") == SIGNER
        and certificates.decision(csr) == certificates.APPROVED
        and not status.get("certificate")
        and not failed
    )


def _load_request(b64: str) -> x509.CertificateSigningRequest:
    from cryptography import x509

    try:
        return x509.load_pem_x509_csr(base64.b64decode(b64))
    except (ValueError, TypeError) as err:
        raise ValueError(str(err)) from None


def _unsignable(request: x509.CertificateSigningRequest, usages: list[str]) -> str:
    """Why the kube-apiserver-client signer refuses the request ("" when it signs it)."""
    from cryptography import x509

    if "client auth" not in usages or set(usages) - _ALLOWED_USAGES:
        return f"invalid usage for client certificate: {', '.join(sorted(set(usages) - _ALLOWED_USAGES))}"
    try:
        names = request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return ""
    return "SAN entries are not allowed for client certificates" if len(names) else ""
