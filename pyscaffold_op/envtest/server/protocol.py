"""The framework-independent request and response the verbs work on, and small helpers they share."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.jsonutil import dumps
from pyscaffold_op.envtest.registry.resources import ServedResource

if TYPE_CHECKING:
    from pyscaffold_op.envtest.server.auth import UserInfo
    from pyscaffold_op.envtest.storage.watch import Watcher

JSON = "application/json"
PROTOBUF = "application/vnd.kubernetes.protobuf"
PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)


@dataclass
class HttpRequest:
    method: str
    path: str
    query: dict[str, list[str]] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names
    body: bytes = b""
    # the client's TLS certificate (DER), as the HTTPS front received it; judged by `access`
    client_cert: bytes | None = None
    # who sent it, once `access` has authenticated it (RBAC mode); the reviews answer for this user
    user: UserInfo | None = None
    # the answer is to be protobuf (`protoanswer.negotiate` settled a protobuf-naming Accept)
    protobuf_answer: bool = False

    @classmethod
    def build(
        cls, method: str, path: str, query_string: str, headers: dict[str, str], body: bytes
    ) -> HttpRequest:
        return cls(
            method.upper(),
            path,
            parse_qs(query_string, keep_blank_values=True),
            {k.lower(): v for k, v in headers.items()},
            body,
        )

    def q(self, name: str, default: str | None = None) -> str | None:
        vals = self.query.get(name)
        return vals[0] if vals else default

    def flag(self, name: str) -> bool:
        return (self.q(name) or "").lower() in ("true", "1")


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = JSON
    stream: AsyncGenerator[bytes, None] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # the watch behind `stream`, whose lines a front may take straight from the store's fan-out
    watcher: Watcher | None = None


def json_response(status: int, obj: Any) -> Response:
    return Response(status, dumps(obj) + b"\n")  # Go's json.Encoder ends every document with one


def error_response(err: E.StatusError) -> Response:
    resp = json_response(err.code, err.status())
    retry = (err.details or {}).get("retryAfterSeconds")
    if isinstance(retry, int) and retry > 0:  # responsewriters.ErrorNegotiated does the same
        resp.headers["Retry-After"] = str(retry)
    if err.warnings:
        resp.headers["Warning"] = ", ".join(err.warnings)
    return resp


@dataclass
class Target:
    info: ServedResource
    namespace: str | None  # None: all namespaces (or cluster-scoped)
    name: str | None
    subresource: str


def to_storage(info: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
    return info.to_storage(obj) if info.to_storage is not None else obj


def parse_rv(value: str | None) -> str:
    """A resourceVersion query parameter, parsed as the storage layer does (`strconv.ParseUint`).

    The real server answers a malformed one with a bare 500 (no reason), kubernetes#101350."""
    if not value:
        raise E.bad_request("resourceVersion is required")
    if not value.isascii() or not value.isdigit():
        why = "invalid syntax"
    elif int(value) >= 2**64:
        why = "value out of range"
    else:
        return value
    raise E.StatusError(
        500, "", f'resourceVersion: Invalid value: "{value}": strconv.ParseUint: parsing "{value}": {why}'
    )


def _go_strings(values: list[str]) -> str:
    return "[]string{" + ", ".join(f'"{v}"' for v in values) + "}"


def check_write_options(req: HttpRequest, kind: str, dry_run: list[str] | None = None) -> None:
    """ValidateCreate/Update/Patch/DeleteOptions: `dryRun` may only be All, `fieldValidation` one of
    Ignore, Warn, Strict (or empty); otherwise 422 on the options kind, before anything is written."""
    causes = []
    dry = req.query.get("dryRun", []) if dry_run is None else dry_run
    if any(v != "All" for v in dry):
        causes.append(
            E.cause(
                "FieldValueNotSupported",
                "dryRun",
                f'Unsupported value: {_go_strings(dry)}: supported values: "All"',
            )
        )
    validation = req.q("fieldValidation", "") or ""
    if kind != "DeleteOptions" and validation not in ("", "Ignore", "Warn", "Strict"):
        causes.append(
            E.cause(
                "FieldValueNotSupported",
                "fieldValidation",
                f'Unsupported value: "{validation}": supported values: "", "Ignore", "Strict", "Warn"',
            )
        )
    if kind != "DeleteOptions":
        manager = req.q("fieldManager", "") or ""
        if manager:
            causes.extend(_field_manager_causes(manager))
    if causes:
        raise E.invalid("meta.k8s.io", kind, "", causes)


def _field_manager_causes(manager: str) -> list[Any]:
    """ValidateFieldManager: at most 128 bytes, every character printable (Go's unicode.IsPrint)."""
    if len(manager) > 128 and len(manager.encode()) > 128:
        return [E.cause("FieldValueTooLong", "fieldManager", "Too long: may not be more than 128 bytes")]
    if manager.isprintable():
        return []
    for i, ch in enumerate(manager):
        if not ch.isprintable() and ch != " ":
            quoted = json.dumps(manager, ensure_ascii=False)
            return [
                E.cause(
                    "FieldValueInvalid",
                    "fieldManager",
                    f"Invalid value: {quoted}: invalid character U+{ord(ch):04X} (at position {i})",
                )
            ]
    return []


def media_type(req: HttpRequest) -> str:
    """The Content-Type without parameters, lower-case; JSON when missing (as the server assumes)."""
    return (req.headers.get("content-type") or JSON).split(";")[0].strip().lower()


def wants_table(req: HttpRequest) -> bool:
    accept = req.headers.get("accept", "")
    return "as=Table" in accept


async def once(data: bytes) -> AsyncGenerator[bytes, None]:
    yield data
