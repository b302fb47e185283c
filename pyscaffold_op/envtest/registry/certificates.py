"""certificates.k8s.io/v1 CertificateSigningRequests as kube-apiserver's registry treats them
(pkg/registry/certificates/certificates/strategy.go and pkg/apis/certificates/validation):
create fills spec.username/uid/groups/extra from the requester and validates the request, usages
and signer; a plain update keeps spec and status; `/approval` writes only status.conditions, `/status`
everything of the status but the Approved/Denied conditions; condition timestamps filled in."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from pyscaffold_op.apimachinery.validation import is_dns1123_label, is_dns1123_subdomain
from pyscaffold_op.envtest.jsonutil import json_copy
from pyscaffold_op.envtest.status import Cause, cause
from pyscaffold_op.envtest.types import Obj

GROUP_RESOURCE = ("certificates.k8s.io", "certificatesigningrequests")
APPROVED, DENIED = "Approved", "Denied"
LEGACY_SIGNER = "kubernetes.io/legacy-unknown"
_DECISIONS = (APPROVED, DENIED)
MIN_EXPIRATION_SECONDS = 600

# certificates.KeyUsage values, in the order the server lists them (sorted)
USAGES = (
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
)
_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n(.*?)-----END \1-----", re.S)


def set_requester(obj: Obj, username: str, uid: str, groups: tuple[str, ...], extra: Obj) -> None:
    """csrStrategy.PrepareForCreate: who asked is the authenticated user, whatever the body says."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    for key in ("username", "uid", "groups", "extra"):
        spec.pop(key, None)
    if username:
        spec["username"] = username
    if uid:
        spec["uid"] = uid
    if groups:
        spec["groups"] = list(groups)
    if extra:
        spec["extra"] = json_copy(extra)


def prepare_create(obj: Obj) -> None:
    """Status is never set by a create (the server answers with an empty one)."""
    obj["status"] = {}


def create_causes(obj: Obj) -> list[Cause]:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    # validateCertificateSigningRequest's order: request, usages, signer, expiration, conditions
    out = _request_causes(spec.get("request"))
    out += _usage_causes(spec.get("usages"))
    out += _signer_causes(spec.get("signerName"))
    seconds = spec.get("expirationSeconds")
    if isinstance(seconds, int) and seconds < MIN_EXPIRATION_SECONDS:
        out.append(
            cause(
                "FieldValueInvalid",
                "spec.expirationSeconds",
                f"Invalid value: {seconds}: may not specify a duration less than 600 seconds (10 minutes)",
            )
        )
    return out + condition_causes(obj)


def _signer_causes(signer: Any) -> list[Cause]:
    """ValidateSignerName: `<domain>/<path>`, the domain's labels DNS-1123 labels (two at least),
    the path a DNS-1123 subdomain (the server says "validating label" for both)."""
    where = "spec.signerName"
    if not signer:
        return [cause("FieldValueRequired", where, "Required value")]
    signer = str(signer)
    if signer == LEGACY_SIGNER:
        return [
            cause(
                "FieldValueInvalid",
                where,
                f'Invalid value: "{signer}": the legacy signerName is not allowed via this API version',
            )
        ]
    segments = signer.split("/")
    if len(segments) != 2:
        return [
            cause(
                "FieldValueInvalid",
                where,
                f'Invalid value: "{signer}": must be a fully qualified domain and path of the form '
                "'example.com/signer-name'",
            )
        ]
    domain, path = segments
    out = [
        cause("FieldValueInvalid", where, f'Invalid value: "{domain}": validating label "{label}": {problem}')
        for label in domain.split(".")
        for problem in is_dns1123_label(label)
    ]
    if len(domain.split(".")) < 2:
        out.append(
            cause(
                "FieldValueInvalid",
                where,
                f'Invalid value: "{domain}": should be a domain with at least two segments separated by dots',
            )
        )
    out += [
        cause("FieldValueInvalid", where, f'Invalid value: "{path}": validating label "{path}": {problem}')
        for problem in is_dns1123_subdomain(path)
    ]
    return out


def _usage_causes(usages: Any) -> list[Cause]:
    if not usages:
        return [cause("FieldValueRequired", "spec.usages", "Required value")]
    out: list[Cause] = []
    seen: set[str] = set()
    supported = ", ".join(f'"{u}"' for u in USAGES)
    for i, usage in enumerate(usages if isinstance(usages, list) else []):
        where = f"spec.usages[{i}]"
        if usage not in USAGES:
            out.append(
                cause(
                    "FieldValueNotSupported",
                    where,
                    f'Unsupported value: "{usage}": supported values: {supported}',
                )
            )
        elif usage in seen:
            out.append(cause("FieldValueDuplicate", where, f'Duplicate value: "{usage}"'))
        seen.add(str(usage))
    return out


def _request_causes(request: Any) -> list[Cause]:
    """The request must be PEM with a CERTIFICATE REQUEST block first; the value is shown as the
    Go []byte is marshalled (base64), null when missing."""
    shown = f'"{request}"' if isinstance(request, str) and request else "null"
    if _first_block(request) != "CERTIFICATE REQUEST":
        problem = "PEM block type must be CERTIFICATE REQUEST"
    else:
        problem = _parse_problem(str(request))
        if not problem:
            return []
    return [cause("FieldValueInvalid", "spec.request", f"Invalid value: {shown}: {problem}")]


def _parse_problem(b64: str) -> str:
    """Why the request does not parse as a signed PKCS#10 request ("" when it does): the server
    gives Go's x509 error, worded otherwise."""
    from cryptography import x509

    try:
        request = x509.load_pem_x509_csr(base64.b64decode(b64))
    except ValueError as err:
        return f"x509: {err}"
    return "" if request.is_signature_valid else "x509: ECDSA verification failure"


def _first_block(data: Any) -> str | None:
    blocks = _block_types(data)
    return blocks[0] if blocks else None


def _block_types(data: Any) -> list[str]:
    if not isinstance(data, str):
        return []
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return []
    return [m.group(1).decode() for m in _PEM_BLOCK.finditer(raw)]


def condition_causes(obj: Obj) -> list[Cause]:
    """validateConditions: a type once, Approved/Denied only True and not both."""
    out: list[Cause] = []
    seen: set[str] = set()
    for i, cond in enumerate(_conditions(obj)):
        kind = cond.get("type") or ""
        where = f"status.conditions[{i}]"
        if not kind:
            out.append(cause("FieldValueRequired", f"{where}.type", "Required value"))
        elif kind in seen:
            out.append(cause("FieldValueDuplicate", f"{where}.type", f'Duplicate value: "{kind}"'))
        seen.add(kind)
        status = cond.get("status") or ""
        allowed = ("True",) if kind in _DECISIONS else ("False", "True", "Unknown")
        if not status:
            out.append(cause("FieldValueRequired", f"{where}.status", "Required value"))
        elif status not in allowed:
            listed = ", ".join(f'"{a}"' for a in allowed)
            out.append(
                cause(
                    "FieldValueNotSupported",
                    f"{where}.status",
                    f'Unsupported value: "{status}": supported values: {listed}',
                )
            )
    if APPROVED in seen and DENIED in seen:
        both = 'conditions[{"type": "Approved"}], conditions[{"type": "Denied"}]'
        shown = "{" + both.replace('"', '\\"') + "}"
        out.append(
            cause(
                "FieldValueInvalid",
                "status.conditions",
                f'Invalid value: "{shown}": must specify at most one of: '
                '`conditions[{"type": "Approved"}]`, `conditions[{"type": "Denied"}]`',
            )
        )
    return out


def _conditions(obj: Obj) -> list[dict[str, Any]]:
    status = obj.get("status")
    conds = status.get("conditions") if isinstance(status, dict) else None
    return [c for c in conds if isinstance(c, dict)] if isinstance(conds, list) else []


def keep_spec_and_status(old: Obj, new: Obj) -> None:
    """A plain update changes metadata only: spec and status stay as stored."""
    new["spec"] = json_copy(old.get("spec") or {})
    new["status"] = json_copy(old.get("status") or {})


def merge_subresource(old: Obj, sent: Obj, subresource: str, now: str) -> tuple[Obj, list[Cause]]:
    """The stored object a write of `sent` to /approval (status.conditions only) or /status (the
    status) gives, and its validation causes."""
    new = json_copy(old)
    if subresource == "approval":
        new.setdefault("status", {})["conditions"] = json_copy(_conditions(sent))
    else:
        status = sent.get("status")
        new["status"] = json_copy(status) if isinstance(status, dict) else {}
    _stamp_conditions(new, old, now)
    causes = condition_causes(new) + _decision_causes(old, new, may_add=subresource == "approval")
    if subresource == "status":
        causes += _certificate_causes(new)
    return new, causes


def _stamp_conditions(new: Obj, old: Obj, now: str) -> None:
    """populateConditionTimestamps: lastUpdateTime when missing; lastTransitionTime when missing, or
    when the status changed from the old condition of that type."""
    before = {c.get("type"): c for c in _conditions(old)}
    for cond in _conditions(new):
        if not cond.get("lastUpdateTime"):
            cond["lastUpdateTime"] = now
        prior = before.get(cond.get("type"))
        if not cond.get("lastTransitionTime"):
            if prior is not None and prior.get("status") == cond.get("status"):
                cond["lastTransitionTime"] = prior.get("lastTransitionTime") or now
            else:
                cond["lastTransitionTime"] = now


def _decision_causes(old: Obj, new: Obj, *, may_add: bool) -> list[Cause]:
    """An Approved or Denied condition is never removed; only /approval adds one."""
    had = {c.get("type") for c in _conditions(old)}
    has = {c.get("type") for c in _conditions(new)}
    out: list[Cause] = []
    for kind in _DECISIONS:
        if kind in had and kind not in has:
            out.append(
                cause(
                    "FieldValueForbidden",
                    "status.conditions",
                    f'Forbidden: updates may not remove a condition of type "{kind}"',
                )
            )
        elif kind in has and kind not in had and not may_add:
            out.append(
                cause(
                    "FieldValueForbidden",
                    "status.conditions",
                    f'Forbidden: updates may not add a condition of type "{kind}"',
                )
            )
    return out


def _certificate_causes(obj: Obj) -> list[Cause]:
    status = obj.get("status")
    certificate = status.get("certificate") if isinstance(status, dict) else None
    if not certificate:
        return []
    for kind in _block_types(certificate) or ["<none>"]:
        if kind != "CERTIFICATE":
            found = f'found "{kind}"' if kind != "<none>" else "found none"
            return [
                cause(
                    "FieldValueInvalid",
                    "status.certificate",
                    'Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, ' + found,
                )
            ]
    return []


def decision(obj: Obj) -> str:
    """Approved, Denied or "" (pending): what a signer looks at."""
    kinds = {c.get("type") for c in _conditions(obj) if c.get("status") == "True"}
    return next((k for k in _DECISIONS if k in kinds), "")
