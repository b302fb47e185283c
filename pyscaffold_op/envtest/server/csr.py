"""What the server adds to CertificateSigningRequests beyond their registry (registry/certificates.py):
the requester's identity for a create, and the CertificateApproval admission plugin's check that
whoever writes `/approval` may `approve` on the request's signer."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.registry import certificates
from pyscaffold_op.envtest.server.auth import Attributes, UserInfo, impersonation
from pyscaffold_op.envtest.server.protocol import HttpRequest, Target

if TYPE_CHECKING:
    from pyscaffold_op.envtest.server.handlers import Api

APPROVAL = "approval"


def is_csr(t: Target) -> bool:
    return t.info.group_resource == certificates.GROUP_RESOURCE


def is_approval(t: Target) -> bool:
    """The /approval subresource, served by the generic verbs (GET, PUT, PATCH) with its own strategy."""
    return is_csr(t) and t.subresource == APPROVAL and t.name is not None


def requester_filler(api: Api, req: HttpRequest, t: Target) -> Callable[[dict[str, Any]], None] | None:
    """For a CSR create: what sets spec.username/uid/groups from the requesting user."""
    if not is_csr(t):
        return None
    who = api.reviews.requester(req)

    def fill(obj: dict[str, Any]) -> None:
        certificates.set_requester(obj, who.username, who.uid, who.groups, {})

    return fill


def check_approver(api: Api, req: HttpRequest, t: Target) -> None:
    """CertificateApproval admission: a write to /approval needs `approve` on
    signers/<signerName> (or signers/<domain>/*) in certificates.k8s.io, besides the RBAC of the
    request itself. Checked when requests are authorized at all (RBAC mode, or impersonation)."""
    who = _authorized_user(api, req)
    if who is None:
        return
    stored = api.store.get(t.info, "", t.name or "")
    signer = str(((stored.get("spec") or {}).get("signerName")) or "")
    domain = signer.split("/", 1)[0]
    for name in (signer, f"{domain}/*"):
        attrs = Attributes(
            who.username,
            who.groups,
            "approve",
            api_group=certificates.GROUP_RESOURCE[0],
            resource="signers",
            name=name,
        )
        if api.policy.authorize(attrs)[0]:
            return
    raise E.forbidden(
        t.info.group,
        t.info.plural,
        t.name or "",
        f'user not permitted to approve requests with signerName "{signer}"',
    )


def _authorized_user(api: Api, req: HttpRequest) -> UserInfo | None:
    if api.access.enforce:
        return req.user
    return impersonation(req.headers)
