"""Typed API errors, mapped from HTTP status codes (and the Status body's reason when there is one).

A response body is not always a JSON Status (a proxy's HTML page, an empty body), so everything here
keys on the status code first, as client-go's `apierrors` does.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pyscaffold_op.errors import PyopError

T = TypeVar("T")


class ConfigError(PyopError):
    """No usable cluster configuration (kubeconfig or in-cluster service account)."""


class ApiError(Exception):
    """An error answer from the API server. `code` is the HTTP status, `reason` the Status reason."""

    code: int = 0
    default_reason: str = ""

    def __init__(
        self,
        message: str = "",
        *,
        code: int | None = None,
        reason: str | None = None,
        details: dict[str, Any] | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message or (reason or self.default_reason))
        if code is not None:
            self.code = code
        self.reason = reason or self.default_reason
        self.message = message
        self.details = details or {}
        self.body = body

    def __str__(self) -> str:
        return f"{self.code} {self.reason}: {self.message}" if self.message else f"{self.code} {self.reason}"


class BadRequest(ApiError):
    code, default_reason = 400, "BadRequest"


class Unauthorized(ApiError):
    code, default_reason = 401, "Unauthorized"


class Forbidden(ApiError):
    code, default_reason = 403, "Forbidden"


class NotFound(ApiError):
    code, default_reason = 404, "NotFound"


class MethodNotAllowed(ApiError):
    code, default_reason = 405, "MethodNotAllowed"


class Conflict(ApiError):
    """409 Conflict: the object changed since it was read (stale resourceVersion). Re-read and retry."""

    code, default_reason = 409, "Conflict"


class AlreadyExists(ApiError):
    """409 AlreadyExists: a create named an object that exists. Not a subclass of Conflict on purpose:
    `except Conflict` (retry on stale reads) must not swallow it."""

    code, default_reason = 409, "AlreadyExists"


class Gone(ApiError):
    """410 Gone: the resourceVersion asked for is compacted away; informers relist."""

    code, default_reason = 410, "Expired"


class Invalid(ApiError):
    code, default_reason = 422, "Invalid"


class TooManyRequests(ApiError):
    code, default_reason = 429, "TooManyRequests"


class ServerError(ApiError):
    code, default_reason = 500, "InternalError"


class ServerTimeout(ServerError):
    code, default_reason = 504, "Timeout"


# AlreadyExists shares 409 with Conflict (told apart by reason); other 5xx are ServerError.
_BY_CODE: dict[int, type[ApiError]] = {
    cls.code: cls
    for cls in (
        BadRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        MethodNotAllowed,
        Conflict,
        Gone,
        Invalid,
        TooManyRequests,
        ServerTimeout,
    )
}


def error_for(code: int, body: bytes | str | dict[str, Any] | None = None) -> ApiError:
    """The typed error for an HTTP status and (optionally) a Status body."""
    status: dict[str, Any] = {}
    if isinstance(body, dict):
        status = body
    elif body:
        try:
            parsed = json.loads(body)
            if isinstance(parsed, dict):
                status = parsed
        except ValueError:
            status = {"message": body.decode(errors="replace") if isinstance(body, bytes) else body}
    reason = status.get("reason") or None
    # A Status body's own code wins (watch ERROR events carry one without an HTTP status).
    code = int(status.get("code") or code)
    cls: type[ApiError]
    if code == 409 and reason == "AlreadyExists":
        cls = AlreadyExists
    elif code in _BY_CODE:
        cls = _BY_CODE[code]
    elif code >= 500:
        cls = ServerError
    else:
        cls = ApiError
    message = str(status.get("message") or "").strip()
    return cls(message, code=code, reason=reason, details=status.get("details"), body=status or body)


def is_too_large_resource_version(err: BaseException) -> bool:
    """The server has not reached the resourceVersion asked for (client-go's
    isTooLargeResourceVersionError): a cause whose reason is `ResourceVersionTooLarge`, or, from
    servers before 1.19, a Timeout whose cause or message says "Too large resource version". Seen
    when a server restarted with fresh state, or from a lagging watch cache.

    Go's `StatusCause.Type` is written as `reason` on the wire (its JSON tag): the real server sends
    `{"reason": "ResourceVersionTooLarge", ...}`; there is no `type` key."""
    if not isinstance(err, ApiError):
        return False
    causes = (err.details or {}).get("causes") or []
    if any(isinstance(c, dict) and c.get("reason") == _TOO_LARGE_CAUSE for c in causes):
        return True
    if not isinstance(err, ServerTimeout):
        return False
    if any(isinstance(c, dict) and c.get("message") == _TOO_LARGE_MESSAGE for c in causes):
        return True
    return _TOO_LARGE_MESSAGE in err.message


_TOO_LARGE_CAUSE = "ResourceVersionTooLarge"  # metav1.CauseTypeResourceVersionTooLarge
_TOO_LARGE_MESSAGE = "Too large resource version"


def is_not_found(err: BaseException) -> bool:
    return isinstance(err, NotFound)


def is_conflict(err: BaseException) -> bool:
    return isinstance(err, Conflict)


def is_already_exists(err: BaseException) -> bool:
    return isinstance(err, AlreadyExists)


def ignore_not_found(err: BaseException | None) -> BaseException | None:
    """`None` for a NotFound (or no error), the error otherwise, like client.IgnoreNotFound.

    Typical use: `except ApiError as e: if ignore_not_found(e): raise`.
    """
    if err is None or isinstance(err, NotFound):
        return None
    return err
