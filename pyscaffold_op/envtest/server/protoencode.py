"""The JSON form of a built-in object encoded as Kubernetes protobuf (`k8s\\0` + runtime.Unknown),
byte for byte as gogo-generated Go code writes it: what kube-apiserver answers a client that accepts
`application/vnd.kubernetes.protobuf` (protoanswer.py), and what a Go client sends (the corpus).

gogo's rules, which the real server's bytes confirm (tests/conformance/scenarios/protobuf_answers.py):
fields in field-number order; a non-pointer scalar or struct is written even when zero (`name: ""`
is `0a 00`), a nil pointer, slice, map or `[]byte` is not; map entries sorted by key; metav1.Time is
whole seconds with its zero `nanos` written, an IntOrString all three of its fields."""

from __future__ import annotations

import base64
import functools
import json
import re
import struct
from datetime import UTC, datetime
from typing import Any

from pyscaffold_op.envtest.server import protoschema as S
from pyscaffold_op.envtest.server.protobuf import MAGIC
from pyscaffold_op.envtest.server.protowire import FIXED32, FIXED64, VARINT, length_delimited, tag, varint

_DURATION_PART = re.compile(r"([0-9.]+)(ns|us|µs|ms|s|m|h)")
_UNIT_NANOS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "ms": 1_000_000,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
}


def encode(obj: dict[str, Any]) -> bytes:
    """`obj` (with apiVersion and kind) as a protobuf body, envelope included."""
    api_version, kind = obj["apiVersion"], obj["kind"]
    message = S.schema().message_for(api_version, kind)
    if message is None:
        raise ValueError(f"no protobuf message for {api_version}/{kind}")
    type_meta = length_delimited(1, api_version.encode()) + length_delimited(2, kind.encode())
    unknown = length_delimited(1, type_meta) + length_delimited(2, encode_message(message, obj))
    return MAGIC + unknown + _NO_ENCODING


_NO_ENCODING = length_delimited(3, b"") + length_delimited(4, b"")  # contentEncoding, contentType


def watch_frame(event_type: str, obj: dict[str, Any]) -> bytes:
    """One event of a protobuf watch: a 4-byte big-endian length, then a metav1.WatchEvent whose
    object (a RawExtension) holds the object's full protobuf body (`k8s\\0` + Unknown)."""
    raw = length_delimited(1, encode(obj))
    event = length_delimited(1, event_type.encode()) + length_delimited(2, raw)
    return struct.pack(">I", len(event)) + event


@functools.cache
def _ordered(message: str) -> tuple[S.Field, ...]:
    return tuple(sorted(S.schema().messages[message], key=lambda f: f.number))


def encode_message(message: str, value: Any) -> bytes:
    special = _SPECIAL.get(message)
    if special is not None:
        return special(message, value)
    if message in S.schema().slices:
        item = S.schema().by_number[message][1]
        return b"".join([_field(item, v) for v in value or ()])
    if value is None:
        value = {}
    out = []
    for f in _ordered(message):
        if f.inline:
            inner = encode_message(f.type, value)
            if inner or not f.pointer:
                out.append(length_delimited(f.number, inner))
            continue
        v = value.get(f.json)
        if f.map:
            if v:
                value_field = _map_value(f.type)
                for key in sorted(v):
                    entry = length_delimited(1, key.encode()) + _field(value_field, v[key])
                    out.append(length_delimited(f.number, entry))
        elif f.repeated:
            if v:
                out.extend([_field(f, item) for item in v])
        elif v is not None:
            out.append(_field(f, v))
        elif not f.pointer and f.type != "bytes":  # gogo writes a non-pointer field's zero value
            out.append(_field(f, _ZERO.get(f.type)))
    return b"".join(out)


_ZERO: dict[str, Any] = {
    "string": "",
    "bool": False,
    "int32": 0,
    "int64": 0,
    "uint32": 0,
    "uint64": 0,
    "double": 0.0,
    "float": 0.0,
}


@functools.cache
def _map_value(type_: str) -> S.Field:
    return S.Field(2, "", type_, False, False, False, False, False, False, "value")


def _field(f: S.Field, v: Any) -> bytes:
    t = f.type
    if t == "string":
        return length_delimited(f.number, str(v).encode())
    if t == "bytes":
        return length_delimited(f.number, base64.b64decode(v) if v else b"")
    if t == "bool":
        return tag(f.number, VARINT) + varint(int(bool(v)))
    if t in ("int32", "int64", "uint32", "uint64"):
        return tag(f.number, VARINT) + varint(int(v))
    if t == "double":
        return tag(f.number, FIXED64) + struct.pack("<d", float(v))
    if t == "float":
        return tag(f.number, FIXED32) + struct.pack("<f", float(v))
    return length_delimited(f.number, encode_message(t, v))


def _seconds(text: str) -> tuple[int, int]:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
    return int(moment.timestamp() // 1), moment.microsecond * 1000


def _time(_message: str, v: Any) -> bytes:
    """metav1.Time: nothing when zero (null), else a Timestamp of whole seconds (ProtoTime drops
    the nanos, and the Timestamp writes its zero `nanos`)."""
    if v is None:
        return b""
    seconds, _nanos = _seconds(v)
    return tag(1, VARINT) + varint(seconds) + _NO_NANOS


_NO_NANOS = tag(2, VARINT) + varint(0)


def _micro_time(_message: str, v: Any) -> bytes:
    if v is None:
        return b""
    seconds, nanos = _seconds(v)
    return tag(1, VARINT) + varint(seconds) + tag(2, VARINT) + varint(nanos)


def _duration(_message: str, v: Any) -> bytes:
    if not v:
        return tag(1, VARINT) + varint(0)
    sign = -1 if v.startswith("-") else 1
    nanos = sum(int(float(n) * _UNIT_NANOS[u]) for n, u in _DURATION_PART.findall(v))
    return tag(1, VARINT) + varint(sign * nanos)


def _quantity(_message: str, v: Any) -> bytes:
    return length_delimited(1, str("0" if v is None else v).encode())


def _int_or_string(_message: str, v: Any) -> bytes:
    """type, intVal and strVal, all three always (gogo's non-pointer fields)."""
    if isinstance(v, str):
        return tag(1, VARINT) + varint(1) + tag(2, VARINT) + varint(0) + length_delimited(3, v.encode())
    return tag(1, VARINT) + varint(0) + tag(2, VARINT) + varint(int(v or 0)) + length_delimited(3, b"")


def _raw_json(_message: str, v: Any) -> bytes:
    """RawExtension, FieldsV1, apiextensions' JSON: the JSON bytes (Go's compact encoding, which
    escapes `<`, `>` and `&`); a nil one (null) writes nothing."""
    if v is None:
        return b""
    text = json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in _GO_ESCAPES:
        text = text.replace(char, escaped)
    return length_delimited(1, text.encode())


_GO_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def _or_array(message: str, v: Any) -> bytes:
    props = message.replace("OrArray", "")
    if isinstance(v, list):
        return b"".join(length_delimited(2, encode_message(props, s)) for s in v)
    return length_delimited(1, encode_message(props, v))


def _or_bool(message: str, v: Any) -> bytes:
    if isinstance(v, bool):
        return tag(1, VARINT) + varint(int(v))
    return tag(1, VARINT) + varint(1) + length_delimited(2, encode_message(message.replace("OrBool", ""), v))


def _or_strings(message: str, v: Any) -> bytes:
    if isinstance(v, list):
        return b"".join(length_delimited(2, str(s).encode()) for s in v)
    return length_delimited(1, encode_message(message.replace("OrStringArray", ""), v))


_SPECIAL = {
    S.TIME: _time,
    S.MICRO_TIME: _micro_time,
    S.DURATION: _duration,
    S.QUANTITY: _quantity,
    S.QUANTITY_VALUE: _quantity,
    S.INT_OR_STRING: _int_or_string,
    S.RAW_EXTENSION: _raw_json,
    S.FIELDS_V1: _raw_json,
    **dict.fromkeys(S.EXT_JSON, _raw_json),
    **dict.fromkeys(S.EXT_OR_ARRAY, _or_array),
    **dict.fromkeys(S.EXT_OR_BOOL, _or_bool),
    **dict.fromkeys(S.EXT_OR_STRINGS, _or_strings),
}
