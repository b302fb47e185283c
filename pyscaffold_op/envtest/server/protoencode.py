"""The JSON form of a built-in object encoded as Kubernetes protobuf (`k8s\\0` + runtime.Unknown),
as a Go client would send it: the inverse of protobuf.decode, for tests and the conformance corpus.

Only the fields present (and not null) are written, in field-number order as gogo writes them; an
absent field decodes to Go's zero value, which is what the JSON without it means too."""

from __future__ import annotations

import base64
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
    """`obj` (with apiVersion and kind) as a protobuf request body."""
    api_version, kind = obj["apiVersion"], obj["kind"]
    message = S.schema().message_for(api_version, kind)
    if message is None:
        raise ValueError(f"no protobuf message for {api_version}/{kind}")
    type_meta = length_delimited(1, api_version.encode()) + length_delimited(2, kind.encode())
    unknown = length_delimited(1, type_meta) + length_delimited(2, encode_message(message, obj))
    return MAGIC + unknown + length_delimited(3, b"") + length_delimited(4, b"")


def encode_message(message: str, value: Any) -> bytes:
    special = _SPECIAL.get(message)
    if special is not None:
        return special(message, value)
    if message in S.schema().slices:
        item = S.schema().by_number[message][1]
        return b"".join(_field(item, v) for v in value or [])
    out = []
    for f in sorted(S.schema().messages[message], key=lambda f: f.number):
        if f.inline:
            inner = encode_message(f.type, value)
            if inner or not f.pointer:
                out.append(length_delimited(f.number, inner))
            continue
        v = value.get(f.json)
        if v is None:
            continue
        if f.map:
            value_field = S.Field(2, "", f.type, False, False, False, False, False, False, "value")
            for key in sorted(v):
                entry = length_delimited(1, key.encode()) + _field(value_field, v[key])
                out.append(length_delimited(f.number, entry))
        elif f.repeated:
            out.extend(_field(f, item) for item in v)
        else:
            out.append(_field(f, v))
    return b"".join(out)


def _field(f: S.Field, v: Any) -> bytes:
    t = f.type
    if t == "string":
        return length_delimited(f.number, str(v).encode())
    if t == "bytes":
        return length_delimited(f.number, base64.b64decode(v))
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
    seconds, _nanos = _seconds(v)
    return tag(1, VARINT) + varint(seconds)


def _micro_time(_message: str, v: Any) -> bytes:
    seconds, nanos = _seconds(v)
    return tag(1, VARINT) + varint(seconds) + (tag(2, VARINT) + varint(nanos) if nanos else b"")


def _duration(_message: str, v: Any) -> bytes:
    sign = -1 if v.startswith("-") else 1
    nanos = sum(int(float(n) * _UNIT_NANOS[u]) for n, u in _DURATION_PART.findall(v))
    return tag(1, VARINT) + varint(sign * nanos)


def _quantity(_message: str, v: Any) -> bytes:
    return length_delimited(1, str(v).encode())


def _int_or_string(_message: str, v: Any) -> bytes:
    if isinstance(v, str):
        return tag(1, VARINT) + varint(1) + length_delimited(3, v.encode())
    return tag(1, VARINT) + varint(0) + tag(2, VARINT) + varint(int(v))


def _raw_json(_message: str, v: Any) -> bytes:
    return length_delimited(1, json.dumps(v, separators=(",", ":")).encode())


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
