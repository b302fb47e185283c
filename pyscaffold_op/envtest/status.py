"""`Status` error bodies, shaped as kube-apiserver writes them (k8s.io/apimachinery/pkg/api/errors)."""

from __future__ import annotations

from typing import Any

# re-exported: handlers build 422 causes through this module
from pyscaffold_op.apimachinery.fielderrors import Cause as Cause
from pyscaffold_op.apimachinery.fielderrors import cause as cause


class StatusError(Exception):
    """An API failure: HTTP code plus the `Status` object sent as the body."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        # preformatted Warning header values the request earned before it failed (unknown fields):
        # the server sends them with the error too
        self.warnings: list[str] = []

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:  # omitempty: errors the server does not classify carry no reason
            body["reason"] = self.reason
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body


def _details(name: str, group: str, kind: str, **extra: Any) -> dict[str, Any]:
    # Field order and omission of empty values follow the Go struct's `omitempty` tags.
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    if group:
        d["group"] = group
    if kind:  # omitempty
        d["kind"] = kind
    d.update({k: v for k, v in extra.items() if v})
    return d


def qualified(resource: str, group: str) -> str:
    """`pods`, `deployments.apps`: how messages name a group-resource."""
    return f"{resource}.{group}" if group else resource


def not_found(group: str, resource: str, name: str) -> StatusError:
    return StatusError(
        404, "NotFound", f'{qualified(resource, group)} "{name}" not found', _details(name, group, resource)
    )


def not_found_path() -> StatusError:
    return StatusError(404, "NotFound", "the server could not find the requested resource", {})


def already_exists(group: str, resource: str, name: str) -> StatusError:
    return StatusError(
        409,
        "AlreadyExists",
        f'{qualified(resource, group)} "{name}" already exists',
        _details(name, group, resource),
    )


def conflict(group: str, resource: str, name: str, why: str) -> StatusError:
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {why}',
        _details(name, group, resource),
    )


STALE = "the object has been modified; please apply your changes to the latest version and try again"


def invalid(group: str, kind: str, name: str, causes: list[Cause]) -> StatusError:
    """422 Invalid. `causes` items: {"reason", "message", "field"}; message joins `field: message`."""
    parts = [f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes]
    joined = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return StatusError(
        422,
        "Invalid",
        f'{qualified(kind, group)} "{name}" is invalid: {joined}',
        _details(name, group, kind, causes=causes),
    )


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def gone(message: str) -> StatusError:
    return StatusError(410, "Expired", message)


def too_large_resource_version(requested: int, current: int) -> StatusError:
    """The watch cache's answer to a resourceVersion it has not reached (k8s.io/apiserver's
    storage.NewTooLargeResourceVersionError: a Timeout Status with a ResourceVersionTooLarge cause)."""
    return StatusError(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {requested}, current: {current}",
        {
            # Go's StatusCause.Type has the JSON name `reason`
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": 1,
        },
    )


def method_not_allowed(method: str) -> StatusError:
    return StatusError(
        405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {}
    )


def too_large(limit: int) -> StatusError:
    return StatusError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")


def unsupported_media(message: str) -> StatusError:
    return StatusError(415, "UnsupportedMediaType", message)


def forbidden(group: str, resource: str, name: str, why: str) -> StatusError:
    q = qualified(resource, group)
    head = f'{q} "{name}" is forbidden' if name else f"{q} is forbidden"
    return StatusError(403, "Forbidden", f"{head}: {why}", _details(name, group, resource))


def namespace_terminating(group: str, resource: str, name: str, namespace: str) -> StatusError:
    """The NamespaceLifecycle admission plugin's refusal of a create in a terminating namespace."""
    err = forbidden(
        group,
        resource,
        name,
        f"unable to create new content in namespace {namespace} because it is being terminated",
    )
    err.details = {
        **(err.details or {}),
        "causes": [
            {
                "reason": "NamespaceTerminating",
                "message": f"namespace {namespace} is being terminated",
                "field": "metadata.namespace",
            }
        ],
    }
    return err


def internal(message: str) -> StatusError:
    return StatusError(
        500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]}
    )


def success(name: str, group: str, resource: str, uid: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": _details(name, group, resource, uid=uid),
    }
