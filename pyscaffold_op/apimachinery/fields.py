"""Kubernetes-specific field shapes as annotated pydantic types.

Each type validates in Python like the API server validates on the wire, and carries the JSON schema
keywords (`x-kubernetes-*`) that `pyop generate` turns into the CRD's structural schema:

    ports: Annotated[list[Port], ListType.map("name", "protocol")]
    target_port: IntOrString
    memory: Quantity
    replicas: Int32                  # `format: int32`, range-checked
    timeout: Duration                # metav1.Duration: `1h30m` on the wire, a timedelta in Python
    config: FreeForm
    template: EmbeddedResource
    spec: Annotated[Spec, XValidation("self.min <= self.max", message="min must not exceed max")]

Pure pydantic: importing this module stays cheap.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, PlainSerializer

if TYPE_CHECKING:  # pydantic.json_schema is slow to import; only the generator needs it at run time
    from pydantic import GetJsonSchemaHandler
    from pydantic_core import core_schema

JsonSchemaValue = dict[str, Any]

__all__ = [
    "QUANTITY_PATTERN",
    "Duration",
    "EmbeddedResource",
    "FreeForm",
    "Int32",
    "Int64",
    "IntOrString",
    "ListType",
    "MapType",
    "MicroTime",
    "Nullable",
    "PreserveUnknownFields",
    "Quantity",
    "Time",
    "XValidation",
    "format_duration",
    "parse_duration",
]

# The pattern controller-gen emits for resource.Quantity (apimachinery's quantity grammar).
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)"
    r"|(\.[0-9]+))))?$"
)
_QUANTITY = re.compile(QUANTITY_PATTERN)


def _check_quantity(value: int | str) -> int | str:
    if isinstance(value, str) and not _QUANTITY.fullmatch(value):
        raise ValueError(f"{value!r} is not a Kubernetes quantity (for example 500m, 1Gi, 2)")
    return value


class _Schema:
    """Annotated metadata replacing the JSON schema of a type (like pydantic's WithJsonSchema,
    which lives in the slow-to-import pydantic.json_schema)."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema

    def __get_pydantic_json_schema__(
        self, core: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return copy.deepcopy(self.schema)


IntOrString = Annotated[
    int | str,
    _Schema({"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}),
]
"""intstr.IntOrString: an integer or a string (ports by number or name, `25%` surges)."""

Quantity = Annotated[
    int | str,
    AfterValidator(_check_quantity),
    _Schema(
        {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": QUANTITY_PATTERN,
            "x-kubernetes-int-or-string": True,
        }
    ),
]
"""resource.Quantity: `500m`, `1Gi`, `2` - an int or a string matching the quantity grammar."""

FreeForm = Annotated[
    dict[str, Any],
    _Schema({"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
]
"""Free-form JSON object (apiextensionsv1.JSON / `map[string]interface{}`): kept as is, never pruned."""

EmbeddedResource = Annotated[
    dict[str, Any],
    _Schema(
        {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
        }
    ),
]
"""A whole Kubernetes object (runtime.RawExtension with EmbeddedResource): apiVersion, kind, metadata."""


class _SchemaPatch:
    """Annotated metadata that adds keywords to the field's JSON schema (and changes nothing else)."""

    def _patch(self, schema: JsonSchemaValue) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def __get_pydantic_json_schema__(
        self, core: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = dict(handler(core))
        self._patch(schema)
        return schema


@dataclass(frozen=True)
class ListType(_SchemaPatch):
    """`x-kubernetes-list-type` (and `x-kubernetes-list-map-keys` for `map`): how lists merge.

    `ListType("atomic")`, `ListType("set")`, `ListType.map("name")`.
    """

    type: Literal["atomic", "set", "map"]
    keys: tuple[str, ...] = ()

    @classmethod
    def map(cls, *keys: str) -> ListType:
        return cls("map", tuple(keys))

    def _patch(self, schema: JsonSchemaValue) -> None:
        schema["x-kubernetes-list-type"] = self.type
        if self.keys:
            schema["x-kubernetes-list-map-keys"] = list(self.keys)


@dataclass(frozen=True)
class MapType(_SchemaPatch):
    """`x-kubernetes-map-type`: `granular` (default) or `atomic` (replaced as a whole on apply)."""

    type: Literal["granular", "atomic"]

    def _patch(self, schema: JsonSchemaValue) -> None:
        schema["x-kubernetes-map-type"] = self.type


@dataclass(frozen=True)
class XValidation(_SchemaPatch):
    """A CEL rule (`x-kubernetes-validations`), checked by the API server on every write."""

    rule: str
    message: str | None = None
    message_expression: str | None = None
    reason: str | None = None
    field_path: str | None = None
    optional_old_self: bool | None = None

    def as_rule(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rule": self.rule}
        for key, value in (
            ("message", self.message),
            ("messageExpression", self.message_expression),
            ("reason", self.reason),
            ("fieldPath", self.field_path),
            ("optionalOldSelf", self.optional_old_self),
        ):
            if value is not None:
                out[key] = value
        return out

    def _patch(self, schema: JsonSchemaValue) -> None:
        schema["x-kubernetes-validations"] = [*schema.get("x-kubernetes-validations", []), self.as_rule()]


@dataclass(frozen=True)
class _Flag(_SchemaPatch):
    key: str

    def _patch(self, schema: JsonSchemaValue) -> None:
        schema[self.key] = True


Nullable = _Flag("nullable")
"""Opt in to `nullable: true` (like the `+nullable` marker): the API server keeps explicit nulls."""

PreserveUnknownFields = _Flag("x-kubernetes-preserve-unknown-fields")
"""Keep fields the schema does not name (like `+kubebuilder:pruning:PreserveUnknownFields`)."""


@dataclass(frozen=True)
class _Format(_SchemaPatch):
    format: str

    def _patch(self, schema: JsonSchemaValue) -> None:
        schema["format"] = self.format


def _int_range(bits: int) -> AfterValidator:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def check(value: int) -> int:
        if not low <= value <= high:
            raise ValueError(f"{value} does not fit in an int{bits} ({low} to {high})")
        return value

    return AfterValidator(check)


Int32 = Annotated[int, _int_range(32), _Format("int32")]
"""Go's int32 (`format: int32` in the CRD, like controller-gen writes it); values out of range fail."""

Int64 = Annotated[int, _int_range(64), _Format("int64")]
"""Go's int64 (`format: int64` in the CRD); values out of range fail."""


def parse_duration(value: Any) -> Any:
    """A Go duration string (`1h30m`, `1.5s`, `-2m`) -> timedelta; other values pass to pydantic."""
    if isinstance(value, str):
        import durationpy

        try:
            return durationpy.from_str(value)
        except (durationpy.DurationError, ValueError) as err:
            raise ValueError(f"{value!r} is not a Go duration (for example 1h30m, 45s, 1.5s)") from err
    return value


def format_duration(value: timedelta) -> str:
    """timedelta -> Go's duration string, as metav1.Duration marshals it (`1h30m`, `0s`)."""
    import durationpy

    text: str = durationpy.to_str(value)
    return "0s" if text == "0" else text


Duration = Annotated[
    timedelta,
    BeforeValidator(parse_duration),
    PlainSerializer(format_duration, return_type=str, when_used="json"),
    _Schema({"type": "string"}),
]
"""metav1.Duration: a timedelta in Python, Go's `1h30m` on the wire, `type: string` in the CRD (as
controller-gen writes it). A plain `timedelta` field of a KubeModel behaves the same."""

Time = Annotated[datetime, _Schema({"type": "string", "format": "date-time"})]
"""metav1.Time: an RFC 3339 `date-time` string on the wire (a plain `datetime` field is the same)."""


def format_micro_time(value: datetime) -> str:
    """datetime -> metav1.MicroTime's wire form: UTC with exactly six fractional digits (Go's
    `RFC3339Micro`). kube-apiserver parses a MicroTime with that layout alone, so the plain ISO form of a
    whole second (`...:05Z`, which pydantic writes when microsecond is 0) is refused with a 400."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


MicroTime = Annotated[
    datetime,
    PlainSerializer(format_micro_time, return_type=str, when_used="json"),
    _Schema({"type": "string", "format": "date-time"}),
]
"""metav1.MicroTime (a Lease's `renewTime`, an Event's `eventTime`): a `datetime` in Python, always six
fractional digits on the wire."""
