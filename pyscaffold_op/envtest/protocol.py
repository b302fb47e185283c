"""The framework-independent request and response the verbs work on, and small helpers they share."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from pyscaffold_op.envtest import errors as E
from pyscaffold_op.envtest.jsonutil import dumps
from pyscaffold_op.envtest.resources import ResourceInfo

MAX_BODY = 3 * 1024 * 1024  # kube-apiserver's maxRequestBodyBytes
JSON = "application/json"
PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names
    body: bytes = b""

    @classmethod
    def build(
        cls, method: str, path: str, query_string: str, headers: dict[str, str], body: bytes
    ) -> Request:
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
    stream: AsyncIterator[bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)


def json_response(status: int, obj: Any) -> Response:
    return Response(status, dumps(obj) + b"\n")  # Go's json.Encoder ends every document with one


def error_response(err: E.ApiError) -> Response:
    return json_response(err.code, err.status())


@dataclass
class Target:
    info: ResourceInfo
    namespace: str | None  # None: all namespaces (or cluster-scoped)
    name: str | None
    subresource: str


def to_storage(info: ResourceInfo, obj: dict[str, Any]) -> dict[str, Any]:
    return info.to_storage(obj) if info.to_storage is not None else obj


def parse_rv(value: str | None) -> str:
    if value is None or not value.isdigit():
        raise (
            E.bad_request(f'invalid resource version: "{value}"')
            if value
            else E.bad_request("resourceVersion is required")
        )
    return value


def wants_table(req: Request) -> bool:
    accept = req.headers.get("accept", "")
    return "as=Table" in accept


async def once(data: bytes) -> AsyncIterator[bytes]:
    yield data
