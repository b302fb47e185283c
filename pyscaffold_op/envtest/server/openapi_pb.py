"""An OpenAPI v2 document as gnostic's `openapi_v2.Document` protobuf
(github.com/google/gnostic-models openapiv2/OpenAPIv2.proto), what kube-apiserver answers to
`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf` and what kubectl reads to
validate the items of a `kind: List` before sending them (`unknown field "x" in io.k8s...`).

Written: `swagger`, `info` and every definition (kubectl's kube-openapi `proto` package reads only
the definitions). Not written: `paths`, `securityDefinitions` and `security`. Values gnostic keeps as
`Any` (defaults, enums, examples, `x-` extensions) carry their YAML text, as gnostic does; JSON is
YAML, so their JSON is written."""

from __future__ import annotations

import json
import struct
from typing import Any

from pyscaffold_op.envtest.server.protowire import FIXED64, VARINT, length_delimited, tag, varint

# Schema's fields (OpenAPIv2.proto): JSON name -> (number, how it is written)
_STRING, _DOUBLE, _BOOL, _INT, _ANY, _STRINGS, _ANYS = "s", "d", "b", "i", "a", "S", "A"
_SCHEMA_FIELDS: dict[str, tuple[int, str]] = {
    "$ref": (1, _STRING),
    "format": (2, _STRING),
    "title": (3, _STRING),
    "description": (4, _STRING),
    "default": (5, _ANY),
    "multipleOf": (6, _DOUBLE),
    "maximum": (7, _DOUBLE),
    "exclusiveMaximum": (8, _BOOL),
    "minimum": (9, _DOUBLE),
    "exclusiveMinimum": (10, _BOOL),
    "maxLength": (11, _INT),
    "minLength": (12, _INT),
    "pattern": (13, _STRING),
    "maxItems": (14, _INT),
    "minItems": (15, _INT),
    "uniqueItems": (16, _BOOL),
    "maxProperties": (17, _INT),
    "minProperties": (18, _INT),
    "required": (19, _STRINGS),
    "enum": (20, _ANYS),
    "discriminator": (26, _STRING),
    "readOnly": (27, _BOOL),
    "example": (30, _ANY),
}
_ADDITIONAL_PROPERTIES, _TYPE, _ITEMS, _ALL_OF, _PROPERTIES, _EXTERNAL_DOCS, _VENDOR_EXTENSION = (
    21,
    22,
    23,
    24,
    25,
    29,
    31,
)


def document(doc: dict[str, Any]) -> bytes:
    """The protobuf of a v2 document (swagger = 1, info = 2, definitions = 9)."""
    info = doc.get("info", {})
    encoded_info = _string(1, info.get("title", "")) + _string(2, info.get("version", ""))
    definitions = b"".join(
        length_delimited(1, _string(1, name) + length_delimited(2, schema(value)))
        for name, value in doc.get("definitions", {}).items()
    )
    return (
        _string(1, doc.get("swagger", ""))
        + length_delimited(2, encoded_info)
        + length_delimited(9, definitions)
    )


def schema(s: dict[str, Any]) -> bytes:
    out = []
    for key, value in s.items():
        known = _SCHEMA_FIELDS.get(key)
        if known is not None:
            out.append(_scalar(*known, value))
        elif key == "additionalProperties":
            inner = (
                tag(2, VARINT) + varint(int(value))
                if isinstance(value, bool)
                else length_delimited(1, schema(value))
            )
            out.append(length_delimited(_ADDITIONAL_PROPERTIES, inner))
        elif key == "type":
            types = value if isinstance(value, list) else [value]
            out.append(length_delimited(_TYPE, b"".join(_string(1, t) for t in types)))
        elif key == "items":
            items = value if isinstance(value, list) else [value]
            out.append(length_delimited(_ITEMS, b"".join(length_delimited(1, schema(i)) for i in items)))
        elif key == "allOf":
            out.extend(length_delimited(_ALL_OF, schema(i)) for i in value)
        elif key == "properties":
            named = b"".join(
                length_delimited(1, _string(1, name) + length_delimited(2, schema(v)))
                for name, v in value.items()
            )
            out.append(length_delimited(_PROPERTIES, named))
        elif key == "externalDocs":
            docs = _string(1, value.get("description", "")) + _string(2, value.get("url", ""))
            out.append(length_delimited(_EXTERNAL_DOCS, docs))
        elif key.startswith("x-"):
            out.append(
                length_delimited(_VENDOR_EXTENSION, _string(1, key) + length_delimited(2, _any(value)))
            )
    return b"".join(out)


def _scalar(num: int, how: str, value: Any) -> bytes:
    if how == _STRING:
        return _string(num, value)
    if how == _DOUBLE:
        return tag(num, FIXED64) + struct.pack("<d", float(value)) if value else b""
    if how in (_BOOL, _INT):
        return tag(num, VARINT) + varint(int(value)) if value else b""
    if how == _STRINGS:
        return b"".join(length_delimited(num, str(v).encode()) for v in value)
    if how == _ANYS:
        return b"".join(length_delimited(num, _any(v)) for v in value)
    return length_delimited(num, _any(value))


def _any(value: Any) -> bytes:
    """gnostic's Any: its YAML text (field 2)."""
    return _string(2, json.dumps(value, separators=(",", ":")))


def _string(num: int, value: str) -> bytes:
    return length_delimited(num, value.encode()) if value else b""  # proto3: empty is absent
