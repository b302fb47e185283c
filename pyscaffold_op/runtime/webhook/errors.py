"""Field errors a validating webhook raises, shaped like k8s.io/apimachinery's `field.Error` and
`apierrors.NewInvalid`, so the API server relays them to clients exactly as for built-in validation."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pyscaffold_op.apimachinery.fielderrors import reason_of

_OMIT = object()


def _go_value(value: Any) -> str:
    # field.Error formats strings quoted, numbers and booleans bare, like Go's %#v for those types
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, separators=(",", ":"), default=str)


@dataclass(frozen=True)
class FieldError:
    """One invalid field: `path` like `spec.schedule` or `spec.ports[0].name`; `message` the body the
    server shows after the path (`Invalid value: "x": why`)."""

    path: str
    message: str

    @property
    def reason(self) -> str:
        return reason_of(self.message)

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    @classmethod
    def invalid(cls, path: str, value: Any, detail: str = "") -> FieldError:
        body = f"Invalid value: {_go_value(value)}"
        return cls(path, f"{body}: {detail}" if detail else body)

    @classmethod
    def required(cls, path: str, detail: str = "") -> FieldError:
        return cls(path, f"Required value: {detail}" if detail else "Required value")

    @classmethod
    def forbidden(cls, path: str, detail: str) -> FieldError:
        return cls(path, f"Forbidden: {detail}")

    @classmethod
    def not_supported(cls, path: str, value: Any, valid: list[str]) -> FieldError:
        quoted = ", ".join(json.dumps(v) for v in valid)
        return cls(path, f"Unsupported value: {_go_value(value)}: supported values: {quoted}")

    @classmethod
    def too_long(cls, path: str, max_length: int) -> FieldError:
        return cls(path, f"Too long: may not be more than {max_length} bytes")


class Denied(Exception):
    """Refuse the request with a plain message (403 Forbidden, like controller-runtime's `Denied`)."""

    def __init__(self, message: str, code: int = 403, reason: str = "Forbidden") -> None:
        super().__init__(message)
        self.message, self.code, self.reason = message, code, reason

    def status(self) -> dict[str, Any]:
        return {"code": self.code, "reason": self.reason, "message": self.message}


class ValidationError(Denied):
    """`apierrors.NewInvalid(groupKind, name, errors)`: 422 Invalid, one cause per field error.

    raise ValidationError(CronJob, obj.metadata.name, [FieldError.invalid("spec.schedule", s, why)])
    """

    def __init__(self, kind: type | tuple[str, str], name: str, errors: list[FieldError]) -> None:
        if not errors:
            raise ValueError("ValidationError needs at least one FieldError")
        if isinstance(kind, tuple):
            group, kind_name = kind
        else:
            gvk = kind.gvk  # type: ignore[attr-defined]
            group, kind_name = gvk.group, gvk.kind
        qualified = f"{kind_name}.{group}" if group else kind_name
        parts = [str(e) for e in errors]
        joined = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
        super().__init__(f'{qualified} "{name}" is invalid: {joined}', 422, "Invalid")
        self.group, self.kind, self.name, self.errors = group, kind_name, name, list(errors)

    def status(self) -> dict[str, Any]:
        details: dict[str, Any] = {}
        if self.name:
            details["name"] = self.name
        if self.group:
            details["group"] = self.group
        details["kind"] = self.kind
        details["causes"] = [{"reason": e.reason, "message": e.message, "field": e.path} for e in self.errors]
        return {**super().status(), "details": details}
