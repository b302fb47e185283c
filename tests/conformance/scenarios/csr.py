"""CertificateSigningRequests (issue 25 follow-up): create's defaulting and validation, the
`/approval` subresource `kubectl certificate approve|deny` writes, `/status` for the signer's
certificate, and the approval's RBAC (update on certificatesigningrequests/approval plus approve on
the signer). CSRs are cluster-scoped: each scenario names its own after its namespace."""

from __future__ import annotations

import base64
import datetime
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.conformance.harness import Ctx, Scenario, Step
from tests.conformance.scenarios.steps import apply, get, patch, post, put, setup

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
NAME = "csr-{ns}"
CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews"


def _pem_request() -> str:
    """A PEM certificate request for CN=alice, O=devs (one key for the session: both servers get
    the same bytes)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, "alice"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "devs"),
        ]
    )
    request = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    return base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode()


def _pem_certificate() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "alice")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    return base64.b64encode(cert.public_bytes(serialization.Encoding.PEM)).decode()


REQUEST = _pem_request()
CERTIFICATE = _pem_certificate()


def _csr(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "request": REQUEST,
        "signerName": CLIENT_SIGNER,
        "usages": ["client auth"],
        **spec,
    }
    return {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": NAME},
        "spec": {k: v for k, v in body.items() if v is not None},
    }


def _create(**spec: Any) -> Step:
    return post(CSRS, _csr(**spec))


def _condition(kind: str, reason: str = "ByTest") -> dict[str, str]:
    return {"type": kind, "status": "True", "reason": reason, "message": f"{kind} by the corpus"}


def _with_conditions(at: int, *conditions: dict[str, str]) -> Any:
    """The CSR of response `at` with these status.conditions (what kubectl sends to /approval)."""

    def body(ctx: Ctx) -> dict[str, Any]:
        csr = dict(ctx[at])
        csr["status"] = {**(csr.get("status") or {}), "conditions": list(conditions)}
        return csr

    return body


def _with_certificate(at: int) -> Any:
    def body(ctx: Ctx) -> dict[str, Any]:
        csr = dict(ctx[at])
        csr["status"] = {**(csr.get("status") or {}), "certificate": CERTIFICATE}
        return csr

    return body


def _approval(at: int, *conditions: dict[str, str], **kw: Any) -> Step:
    return put(f"{CSRS}/{NAME}/approval", _with_conditions(at, *conditions), **kw)


def _user_may(user: str, rules: list[dict[str, Any]]) -> list[Step]:
    """A ClusterRole and its binding for `user`, then a SubjectAccessReview sent until the real
    authorizer sees them."""
    role = f"csr-{user}-{{ns}}"
    sar = setup(
        post(
            SAR,
            {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SubjectAccessReview",
                "spec": {
                    "user": user,
                    "resourceAttributes": {
                        "group": "certificates.k8s.io",
                        "resource": "certificatesigningrequests",
                        "verb": "get",
                    },
                },
            },
        )
    )
    sar.until = lambda r: r.body["status"].get("allowed", False) is True
    return [
        setup(post(f"{RBAC}/clusterroles", {"metadata": {"name": role}, "rules": rules})),
        setup(
            post(
                f"{RBAC}/clusterrolebindings",
                {
                    "metadata": {"name": role},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                    "subjects": [{"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}],
                },
            )
        ),
        sar,
    ]


_APPROVER_BASE = [
    {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"], "verbs": ["get"]},
    {
        "apiGroups": ["certificates.k8s.io"],
        "resources": ["certificatesigningrequests/approval"],
        "verbs": ["update"],
    },
]
_APPROVE_CLIENT_SIGNER = {
    "apiGroups": ["certificates.k8s.io"],
    "resources": ["signers"],
    "resourceNames": [CLIENT_SIGNER],
    "verbs": ["approve"],
}


def scenarios() -> list[Scenario]:
    approved = _condition("Approved", "KubectlApprove")
    denied = _condition("Denied", "KubectlDeny")
    failed = _condition("Failed")
    seqs: dict[str, list[Step]] = {
        "create": [_create(), get(f"{CSRS}/{NAME}")],
        "create-with-expiration": [_create(expirationSeconds=3600)],
        "create-short-expiration": [_create(expirationSeconds=60)],
        "create-no-signer": [_create(signerName=None)],
        "create-bad-signer": [_create(signerName="no-slash")],
        "create-no-usages": [_create(usages=None)],
        "create-bad-usage": [_create(usages=["client auth", "bogus"])],
        "create-duplicate-usage": [_create(usages=["client auth", "client auth"])],
        "create-bad-request": [_create(request=base64.b64encode(b"not a pem").decode())],
        "create-no-request": [_create(request=None)],
        "create-signer-no-domain": [_create(signerName="/path")],
        "create-signer-no-path": [_create(signerName="example.com/")],
        "create-signer-uppercase": [_create(signerName="Example.com/signer")],
        "create-signer-deep-path": [_create(signerName="example.com/a/b")],
        "create-signer-legacy": [_create(signerName="kubernetes.io/legacy-unknown")],
        "create-custom-signer": [_create(signerName="example.com/signer", usages=["server auth"])],
        "create-kubelet-serving-signer": [
            _create(signerName="kubernetes.io/kubelet-serving", usages=["server auth"])
        ],
        "create-garbled-request": [
            _create(
                request=base64.b64encode(
                    b"-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n"
                ).decode()
            )
        ],
        "create-several-errors": [_create(signerName=None, usages=["bogus"], request=None)],
        "create-generate-name": [
            post(CSRS, {**_csr(), "metadata": {"generateName": "csr-{ns}-"}}, view=lambda b: b.get("spec"))
        ],
        "create-ignores-user-fields": [
            _create(username="mallory", groups=["system:masters"], uid="u-1", extra={"k": ["v"]})
        ],
        "create-ignores-status": [
            post(CSRS, {**_csr(), "status": {"conditions": [_condition("Approved")]}}),
        ],
        "approve": [setup(_create()), _approval(0, approved), get(f"{CSRS}/{NAME}")],
        "deny": [setup(_create()), _approval(0, denied)],
        "approval-get": [setup(_create()), get(f"{CSRS}/{NAME}/approval")],
        "approval-patch": [
            setup(_create()),
            patch(f"{CSRS}/{NAME}/approval", {"status": {"conditions": [approved]}}),
        ],
        "approval-strategic-patch": [
            setup(_create()),
            patch(f"{CSRS}/{NAME}/approval", {"status": {"conditions": [denied]}}, kind="strategic"),
        ],
        "approval-json-patch": [
            setup(_create()),
            patch(
                f"{CSRS}/{NAME}/approval",
                [{"op": "add", "path": "/status/conditions", "value": [approved]}],
                kind="json",
            ),
        ],
        "approval-keeps-labels": [
            setup(_create()),
            put(
                f"{CSRS}/{NAME}/approval",
                lambda ctx: {
                    **_with_conditions(0, approved)(ctx),
                    "metadata": {**ctx[0]["metadata"], "labels": {"a": "b"}},
                },
            ),
        ],
        "status-keeps-labels": [
            setup(_create()),
            put(
                f"{CSRS}/{NAME}/status",
                lambda ctx: {**ctx[0], "metadata": {**ctx[0]["metadata"], "labels": {"a": "b"}}},
            ),
        ],
        "approval-dry-run": [
            setup(_create()),
            put(f"{CSRS}/{NAME}/approval?dryRun=All", _with_conditions(0, approved)),
            get(f"{CSRS}/{NAME}"),
        ],
        "approve-then-deny": [
            setup(_create()),
            setup(_approval(0, approved)),
            _approval(1, approved, denied, messages=True),
        ],
        "approval-twice-keeps-condition": [
            setup(_create()),
            setup(_approval(0, approved)),
            put(f"{CSRS}/{NAME}/approval", lambda ctx: ctx[1]),
        ],
        "update-labels": [
            setup(_create()),
            put(
                f"{CSRS}/{NAME}",
                lambda ctx: {**ctx[0], "metadata": {**ctx[0]["metadata"], "labels": {"a": "b"}}},
            ),
        ],
        "status-patch-certificate": [
            setup(_create()),
            setup(_approval(0, approved)),
            patch(f"{CSRS}/{NAME}/status", {"status": {"certificate": CERTIFICATE}}),
        ],
        "status-removes-approval": [
            setup(_create()),
            setup(_approval(0, approved)),
            put(f"{CSRS}/{NAME}/status", lambda ctx: {**ctx[1], "status": {}}, messages=True),
        ],
        "apply-csr": [
            apply(CSRS + "/" + NAME, _csr(), manager="m1", status_only=True),
        ],
        "list-and-table": [
            setup(_create()),
            setup(_approval(0, approved)),
            get(
                f"{CSRS}?fieldSelector=metadata.name={NAME}",
                headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
                view=lambda b: [r["cells"][:1] + r["cells"][2:] for r in b.get("rows", [])],
            ),
        ],
        "approval-keeps-spec": [
            setup(_create()),
            put(
                f"{CSRS}/{NAME}/approval",
                lambda ctx: {
                    **_with_conditions(0, approved)(ctx),
                    "spec": {**ctx[0]["spec"], "usages": ["digital signature"]},
                },
            ),
        ],
        "approve-and-deny": [setup(_create()), _approval(0, approved, denied, messages=True)],
        "approve-twice-in-one": [setup(_create()), _approval(0, approved, approved, messages=True)],
        "approval-bad-status": [
            setup(_create()),
            _approval(0, {**approved, "status": "Maybe"}, messages=True),
        ],
        "approval-no-type": [setup(_create()), _approval(0, {"status": "True"}, messages=True)],
        "approval-failed-condition": [setup(_create()), _approval(0, failed)],
        "approval-remove": [
            setup(_create()),
            setup(_approval(0, approved)),
            _approval(1, messages=True),
        ],
        "approval-stale": [
            setup(_create()),
            setup(_approval(0, approved)),
            _approval(0, denied, messages=True),
        ],
        "approval-missing": [put(f"{CSRS}/{NAME}/approval", _csr(), messages=True)],
        "approval-post": [setup(_create()), post(f"{CSRS}/{NAME}/approval", _csr(), status_only=True)],
        "status-certificate": [
            setup(_create()),
            setup(_approval(0, approved)),
            put(f"{CSRS}/{NAME}/status", _with_certificate(1)),
        ],
        "status-certificate-unapproved": [
            setup(_create()),
            put(f"{CSRS}/{NAME}/status", _with_certificate(0)),
        ],
        "status-bad-certificate": [
            setup(_create()),
            setup(_approval(0, approved)),
            put(
                f"{CSRS}/{NAME}/status",
                lambda ctx: {**ctx[1], "status": {**ctx[1]["status"], "certificate": REQUEST}},
                messages=True,
            ),
        ],
        "status-adds-approval": [
            setup(_create()),
            put(f"{CSRS}/{NAME}/status", _with_conditions(0, approved), messages=True),
        ],
        "status-failed-condition": [
            setup(_create()),
            put(f"{CSRS}/{NAME}/status", _with_conditions(0, failed)),
        ],
        "update-spec-immutable": [
            setup(_create()),
            put(
                f"{CSRS}/{NAME}",
                lambda ctx: {**ctx[0], "spec": {**ctx[0]["spec"], "usages": ["digital signature"]}},
                messages=True,
            ),
        ],
        "update-ignores-approval": [
            setup(_create()),
            put(f"{CSRS}/{NAME}", _with_conditions(0, approved)),
        ],
        "approve-without-signer-permission": [
            setup(_create()),
            *_user_may("csr-approver-a", _APPROVER_BASE),
            _approval(0, approved, headers={"Impersonate-User": "csr-approver-a"}, messages=True),
        ],
        "approve-with-signer-permission": [
            setup(_create()),
            *_user_may("csr-approver-b", [*_APPROVER_BASE, _APPROVE_CLIENT_SIGNER]),
            _approval(0, approved, headers={"Impersonate-User": "csr-approver-b"}),
        ],
        "approve-without-approval-update": [
            setup(_create()),
            *_user_may("csr-approver-c", [_APPROVER_BASE[0], _APPROVE_CLIENT_SIGNER]),
            _approval(0, approved, headers={"Impersonate-User": "csr-approver-c"}, messages=True),
        ],
        "create-as-user": [
            *_user_may(
                "csr-requester",
                [
                    {
                        "apiGroups": ["certificates.k8s.io"],
                        "resources": ["certificatesigningrequests"],
                        "verbs": ["get", "create"],
                    }
                ],
            ),
            post(
                CSRS,
                _csr(),
                headers={"Impersonate-User": "csr-requester", "Impersonate-Group": "devs"},
            ),
        ],
    }
    return [Scenario(f"csr/{name}", "csr", steps) for name, steps in seqs.items()]


SCENARIOS = scenarios()
