"""Field errors as the API server reports them: the `causes` of a 422 Status (metav1.StatusCause).

`message` is what k8s.io/apimachinery's `field.Error.ErrorBody()` gives (`Invalid value: "x": why`,
`Required value`, `Forbidden: why`); `field` the path (`spec.replicas`, `spec.ports[0].name`).
"""

from __future__ import annotations

from typing import TypedDict

__all__ = ["Cause", "cause", "reason_of"]


class Cause(TypedDict):
    reason: str
    message: str
    field: str


def cause(reason: str, field: str, message: str) -> Cause:
    return {"reason": reason, "message": message, "field": field}


_REASONS = (
    ("Required value", "FieldValueRequired"),
    ("Forbidden", "FieldValueForbidden"),
    ("Unsupported value", "FieldValueNotSupported"),
    ("Duplicate value", "FieldValueDuplicate"),
    ("Too long", "FieldValueTooLong"),
    ("Too many", "FieldValueTooMany"),
    ("Invalid value", "FieldValueInvalid"),
)


def reason_of(message: str) -> str:
    """The StatusCause reason of a `field.Error` body, from the type it starts with."""
    return next((reason for prefix, reason in _REASONS if message.startswith(prefix)), "FieldValueInvalid")
