"""The parts of a custom resource's validation around its schema, in the order the server's
customResourceStrategy.Validate runs them (apiextensions-apiserver `pkg/registry/customresource`):
the scale subresource's replica paths (`ValidateScaleSpec`, `ValidateScaleStatus`), then the CEL rules,
which do not run when an earlier error blocks them (a wrong type, a missing required field, an
unsupported enum value, too many items, a string too long): the server says so in a cause with no
field instead.
"""

from __future__ import annotations

from typing import Any

from pyscaffold_op.apiextensions.rules import MISSING, has_rules, validate_rules
from pyscaffold_op.apiextensions.validation import validate
from pyscaffold_op.apimachinery.fielderrors import Cause, cause
from pyscaffold_op.apimachinery.gofmt import go_type, go_value

__all__ = ["BLOCKING", "rules_or_blocked", "scale_causes", "status_causes"]

Schema = dict[str, Any]

# hasBlockingErr: the error types that stop the CEL rules
BLOCKING = frozenset(
    {
        "FieldValueNotSupported",
        "FieldValueRequired",
        "FieldValueTooLong",
        "FieldValueTooMany",
        "FieldValueTypeInvalid",
    }
)
_NOT_CHECKED = (
    "Invalid value: null: some validation rules were not checked because the object was invalid; "
    "correct the existing errors to complete validation"
)


def rules_or_blocked(causes: list[Cause], obj: Any, schema: Schema | None, old: Any = MISSING) -> list[Cause]:
    """The CEL rules' causes, or the one cause saying they were not checked when `causes` (the
    object's errors so far) hold a blocking one. Nothing for a schema without rules."""
    if not has_rules(schema):
        return []
    if any(c.get("reason") in BLOCKING for c in causes):
        return [cause("FieldValueInvalid", "<nil>", _NOT_CHECKED)]
    return validate_rules(obj, schema, old)


def status_causes(obj: dict[str, Any], schema: Schema | None) -> list[Cause]:
    """A status write's schema causes: the server validates the status against its own schema
    (the messages name `ready`) under the field path `status` (the causes name `status.ready`)."""
    status_schema = ((schema or {}).get("properties") or {}).get("status")
    if status_schema is None or "status" not in obj:
        return []
    out: list[Cause] = []
    for c in validate(obj["status"], status_schema):
        field = c.get("field", "")
        if field == "<root>":
            field = "status"
        elif field != "<nil>":
            field = f"status.{field}"
        out.append(cause(c["reason"], field, c["message"]))
    return out


def scale_causes(obj: dict[str, Any], scale: dict[str, str] | None, *, status: bool = False) -> list[Cause]:
    """The scale subresource's checks of the object: its replica counts are integers (0 when
    missing) and not negative, its label selector a string; of a `status` write only the status's."""
    if not scale:
        return []
    out = [] if status else _replicas_causes(obj, scale.get("specReplicasPath") or "")
    out += _replicas_causes(obj, scale.get("statusReplicasPath") or "")
    selector = scale.get("labelSelectorPath") or ""
    if selector:
        _, error = _nested(obj, selector, "string")
        if error is not None:
            out.append(cause("FieldValueInvalid", selector, f'Invalid value: "": {error}'))
    return out


def _replicas_causes(obj: dict[str, Any], path: str) -> list[Cause]:
    if not path:
        return []
    value, error = _nested(obj, path, "int64")
    if error is not None:
        return [cause("FieldValueInvalid", path, f"Invalid value: 0: {error}")]
    if value < 0:
        return [cause("FieldValueInvalid", path, f"Invalid value: {value}: should be a non-negative integer")]
    return []


def _nested(obj: dict[str, Any], path: str, want: str) -> tuple[Any, str | None]:
    """unstructured.NestedInt64/NestedString: the value at a `.a.b` path (zero when missing), or the
    accessor error."""
    fields = path.lstrip(".").split(".")
    node: Any = obj
    for i, name in enumerate(fields):
        if node is None:
            return _zero(want), None
        if not isinstance(node, dict):
            shown = ".".join(fields[: i + 1])
            return _zero(want), (
                f".{shown} accessor error: {go_value(node)} is of the type {go_type(node)}, "
                "expected map[string]interface{}"
            )
        if name not in node:
            return _zero(want), None
        node = node[name]
    if node is None:
        return _zero(want), None
    if want == "int64":  # whole floats decode as int64 (apimachinery's JSON)
        fits = (isinstance(node, int) and not isinstance(node, bool)) or (
            isinstance(node, float) and node.is_integer()
        )
        node = int(node) if fits else node
    else:
        fits = isinstance(node, str)
    if not fits:
        return _zero(want), (
            f"{path if path.startswith('.') else '.' + path} accessor error: {go_value(node)} "
            f"is of the type {go_type(node)}, expected {want}"
        )
    return node, None


def _zero(want: str) -> Any:
    return 0 if want == "int64" else ""
