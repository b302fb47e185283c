"""Protobuf request bodies (`application/vnd.kubernetes.protobuf`) decoded into the JSON a Go client
would have sent for the same object.

kubectl's typed generators (`kubectl create deployment|job|role|...`, `expose`, `autoscale`, `auth
reconcile`) send protobuf. The envelope is the magic `k8s\\0` then a `runtime.Unknown` whose `raw`
field holds the object, whose message is found from the envelope's apiVersion and kind in the schema
captured from the pinned modules (protoschema.py). The JSON follows Go's encoding/json over the
decoded Go struct: fields in declaration order, an absent pointer, slice or map is `null` unless
`omitempty`, a zero non-pointer scalar is written unless `omitempty`, `,inline` structs are merged,
and the types with their own JSON form (Time, MicroTime, Duration, Quantity, IntOrString,
RawExtension, FieldsV1, apiextensions' JSON and JSONSchemaPropsOr*) are written as they write
themselves.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from datetime import UTC, datetime, timedelta
from typing import Any

from pyscaffold_op.apiextensions import celquantity
from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.server import protoschema as S
from pyscaffold_op.envtest.server.decode import summarize
from pyscaffold_op.envtest.server.protowire import (
    BYTES,
    FIXED32,
    FIXED64,
    UNEXPECTED_EOF,
    VARINT,
    ProtobufError,
    fields,
    read_varint,
    signed,
)
from pyscaffold_op.envtest.server.quantity import canonical

MAGIC = b"k8s\x00"

__all__ = ["MAGIC", "EnvelopeError", "ProtobufError", "decode", "decode_message", "unwrap"]


class EnvelopeError(ProtobufError):
    """The `k8s\\0` + runtime.Unknown envelope itself is unreadable (the server calls the body
    unrecognized); other ProtobufErrors are about the object inside it."""


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_GO_ZERO_TIME = -62135596800  # time.Time{}.Unix(): January 1, year 1


def unwrap(body: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, raw object) from the `k8s\\0` + runtime.Unknown envelope."""
    if not body:
        raise EnvelopeError("empty data")
    if not body.startswith(MAGIC):
        raise EnvelopeError(
            "provided data does not appear to be a protobuf message, expected prefix "
            + str(list(MAGIC)).replace(",", "")
        )
    if len(body) == len(MAGIC):
        raise EnvelopeError("empty body")
    try:
        return _unknown(body[len(MAGIC) :])
    except EnvelopeError:
        raise
    except ProtobufError as err:
        raise EnvelopeError(str(err)) from None


def _unknown(data: bytes) -> tuple[str, str, bytes]:
    api_version = kind = ""
    raw = b""
    for num, wire, value in fields(data, "Unknown"):
        if num == 1:  # typeMeta
            _expect(wire, BYTES, "TypeMeta")
            for n, w, v in fields(bytes(value), "TypeMeta"):
                if n in (1, 2):
                    _expect(w, BYTES, "APIVersion" if n == 1 else "Kind")
                    text = bytes(v).decode(errors="replace")
                    api_version, kind = (text, kind) if n == 1 else (api_version, text)
        elif num == 2:
            _expect(wire, BYTES, "Raw")
            raw = bytes(value)
        elif num in (3, 4):
            _expect(wire, BYTES, "ContentEncoding" if num == 3 else "ContentType")
    return api_version, kind, raw


def decode(body: bytes, default_api_version: str = "", default_kind: str = "") -> dict[str, Any]:
    """The JSON form of a protobuf-encoded object. An envelope without apiVersion or kind takes the
    defaults (the endpoint's), as the API server does. EnvelopeError when the envelope is unreadable,
    ProtobufError when the object is (or has no protobuf message: custom resources)."""
    api_version, kind, raw = unwrap(body)
    kind = kind or default_kind
    api_version = api_version or default_api_version
    message = S.schema().message_for(api_version, kind)
    if message is None:
        raise ProtobufError(
            f'no kind "{kind}" is registered for version "{api_version}" '
            'in scheme "pkg/runtime/scheme.go:111"'
        )
    try:
        obj = decode_message(message, raw)
    except RecursionError:  # JSONSchemaProps and embedded objects nest without bound; Python's stack does not
        raise ProtobufError("exceeded max depth") from None
    return {"kind": kind, "apiVersion": api_version, **obj}


def decode_request(body: bytes, api_version: str, kind: str, check_kind: bool = True) -> dict[str, Any]:
    """A protobuf request body for an endpoint serving `api_version`/`kind`, or kube-apiserver's 400
    (the texts of its transformDecodeError). With `check_kind` (not for subresources, whose bodies
    are other kinds), an envelope without a kind is the endpoint's, and another kind is refused as
    the server's conversion refuses it."""
    try:
        got_version, got_kind, _raw = unwrap(body)
    except EnvelopeError as err:
        raise E.bad_request(
            f"the object provided is unrecognized (must be of type {kind}): {err} ({summarize(body)})"
        ) from None
    if check_kind:
        got_version, got_kind = got_version or api_version, got_kind or kind
    prefix = f'{got_kind} in version "{got_version.rsplit("/", 1)[-1]}" cannot be handled as a {kind}: '
    try:
        obj = decode(body, got_version, got_kind)
    except ProtobufError as err:
        raise E.bad_request(prefix + str(err)) from None
    if check_kind and (got_kind != kind or _group(got_version) != _group(api_version)):
        internal = _group(api_version).split(".")[0] or "core"
        version = got_version.rsplit("/", 1)[-1]
        raise E.bad_request(
            f"{prefix}converting ({version}.{got_kind}) to ({internal}.{kind}): unknown conversion"
        )
    return obj


def delete_options(body: bytes) -> dict[str, Any]:
    """A DELETE's protobuf body: meta/v1 DeleteOptions (ProtobufError, a ValueError, when unreadable)."""
    return decode(body, "meta.k8s.io/v1", "DeleteOptions")


def _group(api_version: str) -> str:
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def _expect(wire: int, want: int, go_name: str, packed_ok: bool = False) -> None:
    if wire != want and not (packed_ok and wire == BYTES):
        raise ProtobufError(f"proto: wrong wireType = {wire} for field {go_name}")


def decode_message(message: str, data: bytes) -> Any:
    """A message's JSON value: an object for a struct, the special types' own forms."""
    special = _SPECIAL.get(message)
    if special is not None:
        return special(message, data)
    if message in S.schema().slices:
        items = _collect(message, data).get(1, [])
        return [_scalar(S.schema().by_number[message][1], v) for v in items] if items else None
    return _struct(message, data)


def _collect(message: str, data: bytes) -> dict[int, list[int | bytes]]:
    """Each known field's occurrences, wire types checked (unknown fields are skipped, as Go does)."""
    known = S.schema().by_number[message]
    short = message.rsplit(".", 1)[-1]
    got: dict[int, list[int | bytes]] = {}
    for num, wire, value in fields(data, short):
        f = known.get(num)
        if f is None:
            continue
        if f.repeated and f.scalar and f.type != "string" and f.type != "bytes" and wire == BYTES:
            got.setdefault(num, []).extend(_unpack(f.type, bytes(value)))
            continue
        _expect(wire, _wire_of(f), f.go_name)
        got.setdefault(num, []).append(value)
    return got


def _wire_of(f: S.Field) -> int:
    if f.map or not f.scalar or f.type in ("string", "bytes"):
        return BYTES
    if f.type == "double":
        return FIXED64
    if f.type == "float":
        return FIXED32
    return VARINT


def _unpack(ftype: str, data: bytes) -> list[int | bytes]:
    """A packed repeated scalar's values."""
    out: list[int | bytes] = []
    pos = 0
    while pos < len(data):
        if ftype in ("double", "float"):
            size = 8 if ftype == "double" else 4
            if pos + size > len(data):
                raise ProtobufError(UNEXPECTED_EOF)
            out.append(data[pos : pos + size])
            pos += size
        else:
            value, pos = read_varint(data, pos)
            out.append(value)
    return out


def _scalar(f: S.Field, value: int | bytes) -> Any:
    t = f.type
    if t == "string":
        return bytes(value).decode(errors="replace")
    if t == "bytes":
        return base64.b64encode(bytes(value)).decode()
    if t == "bool":
        return bool(value)
    if t == "int32":
        return signed(int(value), 32)
    if t == "int64":
        return signed(int(value), 64)
    if t == "uint32":
        return int(value) & 0xFFFFFFFF
    if t == "uint64":
        return int(value)
    number = struct.unpack("<d" if t == "double" else "<f", bytes(value))[0]
    if not math.isfinite(number):
        raise ProtobufError(f"json: unsupported value: {number}")
    return int(number) if number.is_integer() and abs(number) < 1e21 else number  # Go writes 1, not 1.0


def _zero(f: S.Field) -> Any:
    """The JSON of an absent field: Go's zero value."""
    if f.repeated or f.map or f.pointer:
        return None
    if f.scalar:
        return {"string": "", "bytes": None, "bool": False}.get(f.type, 0)
    return decode_message(f.type, b"")


def _empty(f: S.Field, value: Any) -> bool:
    """Go's isEmptyValue for `omitempty`: a nil pointer, a zero scalar, a nil or empty slice or map;
    never a struct (a non-pointer Time, Quantity or IntOrString is written even when zero)."""
    if f.pointer:
        return value is None
    if f.repeated or f.map or f.type in S.schema().slices:
        return not value
    if f.scalar:
        return value is None or value in ("", 0) or value is False
    return False


def _struct(message: str, data: bytes) -> dict[str, Any]:
    got = _collect(message, data)
    out: dict[str, Any] = {}
    for f in S.schema().messages[message]:
        values = got.get(f.number)
        if values is None:
            if f.inline and f.pointer:
                continue  # a nil embedded pointer adds no fields
            value = _zero(f)
        elif f.map:
            value = _map(f, values)
        elif f.repeated:
            value = [_scalar(f, v) if f.scalar else decode_message(f.type, bytes(v)) for v in values]
        elif f.scalar:
            value = _scalar(f, values[-1])
        else:
            value = decode_message(f.type, bytes(values[-1]))
        if f.inline:
            out.update(value if isinstance(value, dict) else {})
        elif (f.omitzero and (values is None or value is None)) or (f.omitempty and _empty(f, value)):
            continue
        else:
            out[f.json] = value
    return out


def _map(f: S.Field, entries: list[int | bytes]) -> dict[str, Any]:
    """map<string, V> entries (key = 1, value = 2), keys sorted as Go writes them."""
    value_field = S.Field(2, "", f.type, False, False, False, False, False, False, "value")
    out: dict[str, Any] = {}
    for entry in entries:
        key, raw_value = "", None
        for num, wire, value in fields(bytes(entry), f.go_name + "Entry"):
            if num == 1:
                _expect(wire, BYTES, "key")
                key = bytes(value).decode(errors="replace")
            elif num == 2:
                _expect(wire, _wire_of(value_field), "value")
                raw_value = value
        if raw_value is None:
            out[key] = _zero(value_field) if f.type != "bytes" else ""
        elif value_field.scalar:
            out[key] = _scalar(value_field, raw_value)
        else:
            out[key] = decode_message(f.type, bytes(raw_value))
    return dict(sorted(out.items()))


# the types with their own protobuf and JSON forms


def _numbered(message: str, data: bytes) -> dict[int, int | bytes]:
    """Each field's last value, wire types checked against the message's schema."""
    return {num: values[-1] for num, values in _collect(message, data).items()}


def _time(message: str, data: bytes) -> str | None:
    """metav1.Time: whole seconds (its Unmarshal drops nanos), RFC 3339 in UTC; zero is null."""
    if not data:
        return None
    seconds = signed(int(_numbered(message, data).get(1, 0)), 64)
    if seconds == _GO_ZERO_TIME:
        return None
    return _format(seconds, 0, micro=False)


def _micro_time(message: str, data: bytes) -> str | None:
    """metav1.MicroTime: seconds and nanos truncated to microseconds, RFC3339Micro in UTC."""
    if not data:
        return None
    f = _numbered(message, data)
    seconds = signed(int(f.get(1, 0)), 64)
    nanos = signed(int(f.get(2, 0)), 32)
    if seconds == _GO_ZERO_TIME and nanos == 0:
        return None
    return _format(seconds, nanos // 1000, micro=True)


def _format(seconds: int, micros: int, micro: bool) -> str:
    try:
        moment = _EPOCH + timedelta(seconds=seconds, microseconds=micros)
    except OverflowError:
        raise ProtobufError(f"Time.MarshalJSON: year outside of range [0,9999] ({seconds}s)") from None
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    return text + (f".{moment.microsecond:06d}Z" if micro else "Z")


def _duration(message: str, data: bytes) -> str:
    """metav1.Duration: nanoseconds, written as Go's time.Duration.String()."""
    return go_duration(signed(int(_numbered(message, data).get(1, 0)), 64))


def go_duration(nanos: int) -> str:
    """time.Duration.String(): "1h2m3.5s", "1.5ms", "0s"."""
    if nanos == 0:
        return "0s"
    sign, u = ("-", -nanos) if nanos < 0 else ("", nanos)
    if u < 1_000_000_000:
        for limit, prec, unit in ((1_000, 0, "ns"), (1_000_000, 3, "µs"), (1_000_000_000, 6, "ms")):
            if u < limit:
                whole, frac = _fraction(u, prec)
                return f"{sign}{whole}{frac}{unit}"
    seconds, frac = _fraction(u, 9)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    text = f"{seconds}{frac}s"
    if minutes or hours:
        text = f"{minutes}m{text}"
    if hours:
        text = f"{hours}h{text}"
    return sign + text


def _fraction(value: int, prec: int) -> tuple[int, str]:
    if prec == 0:
        return value, ""
    whole, digits = divmod(value, 10**prec)
    frac = f"{digits:0{prec}d}".rstrip("0")
    return whole, "." + frac if frac else ""


def _quantity(message: str, data: bytes) -> str:
    """resource.Quantity: its string, parsed as Go's Unmarshal does and written back canonical
    (`0.25` is `250m`), as the server then stores it."""
    text = bytes(_numbered(message, data).get(1, b"")).decode(errors="replace")
    if not text:
        return "0"
    try:
        return canonical(text)
    except celquantity.QuantityError as err:
        raise ProtobufError(str(err)) from None


def _int_or_string(message: str, data: bytes) -> int | str:
    f = _numbered(message, data)
    if signed(int(f.get(1, 0)), 64):
        return bytes(f.get(3, b"")).decode(errors="replace")
    return signed(int(f.get(2, 0)), 32)


def _raw_json(message: str, data: bytes) -> Any:
    """RawExtension, FieldsV1 and apiextensions' JSON: field 1 holds JSON bytes; none is null."""
    raw = bytes(_numbered(message, data).get(1, b""))
    if not raw:
        return None
    if raw.startswith(MAGIC):  # an embedded object in protobuf
        return decode(raw)
    try:
        return json.loads(raw)
    except RecursionError:
        raise ProtobufError(f"{message.rsplit('.', 1)[-1]}: exceeded max depth") from None
    except ValueError as err:
        if message == S.FIELDS_V1:
            return None  # the server accepts it: managedFields are its own to write
        short = message.rsplit(".", 1)[-1]
        raise ProtobufError(f"json: error calling MarshalJSON for type {short}: {err}") from None


def _or_array(message: str, data: bytes) -> Any:
    schemas = _collect(message, data).get(2, [])
    props = message.replace("OrArray", "")
    if schemas:
        return [decode_message(props, bytes(v)) for v in schemas]
    schema = _numbered(message, data).get(1)
    return None if schema is None else decode_message(props, bytes(schema))


def _or_bool(message: str, data: bytes) -> Any:
    f = _numbered(message, data)
    if 2 in f:
        return decode_message(message.replace("OrBool", ""), bytes(f[2]))
    return bool(f.get(1, 0))


def _or_strings(message: str, data: bytes) -> Any:
    strings = [bytes(v).decode(errors="replace") for v in _collect(message, data).get(2, [])]
    if strings:
        return strings
    schema = _numbered(message, data).get(1)
    if schema is None:
        return None
    return decode_message(message.replace("OrStringArray", ""), bytes(schema))


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
