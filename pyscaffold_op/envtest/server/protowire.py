"""The protobuf wire format: varints, tagged fields, and the errors gogo-generated Go code gives.

Kubernetes' Go types are (un)marshalled by gogo-protobuf generated code; its error texts are what
kube-apiserver reports for a malformed body, so they are reproduced here word for word.
"""

from __future__ import annotations

from collections.abc import Iterator

VARINT, FIXED64, BYTES, START_GROUP, END_GROUP, FIXED32 = 0, 1, 2, 3, 4, 5

UNEXPECTED_EOF = "unexpected EOF"
INT_OVERFLOW = "proto: integer overflow"
NEGATIVE_LENGTH = "proto: negative length found during unmarshaling"


class ProtobufError(ValueError):
    """A body that cannot be decoded; the message is the Go decoder's."""


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at `pos` and the position after it (Go: at most 10 bytes, else integer overflow)."""
    result = shift = 0
    while True:
        if shift >= 64:
            raise ProtobufError(INT_OVERFLOW)
        if pos >= len(data):
            raise ProtobufError(UNEXPECTED_EOF)
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, pos
        shift += 7


def fields(data: bytes, message: str) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) for each field: an int for varints, bytes otherwise."""
    pos, end = 0, len(data)
    while pos < end:
        key, pos = read_varint(data, pos)
        num, wire = key >> 3, key & 7
        if wire == END_GROUP:
            raise ProtobufError(f"proto: {message}: wiretype end group for non-group")
        if num <= 0:
            raise ProtobufError(f"proto: {message}: illegal tag {num} (wire type {wire})")
        value: int | bytes
        if wire == VARINT:
            value, pos = read_varint(data, pos)
        elif wire == BYTES:
            length, pos = read_varint(data, pos)
            if length >= 1 << 63:
                raise ProtobufError(NEGATIVE_LENGTH)
            if pos + length > end:
                raise ProtobufError(UNEXPECTED_EOF)
            value, pos = data[pos : pos + length], pos + length
        elif wire in (FIXED64, FIXED32):
            size = 8 if wire == FIXED64 else 4
            if pos + size > end:
                raise ProtobufError(UNEXPECTED_EOF)
            value, pos = data[pos : pos + size], pos + size
        elif wire == START_GROUP:
            pos = _skip_group(data, pos, num)
            continue
        else:
            raise ProtobufError(f"proto: illegal wireType {wire}")
        yield num, wire, value


def _skip_group(data: bytes, pos: int, num: int) -> int:
    """Past a (deprecated) group of unknown fields, as gogo's skipGenerated does."""
    depth = 1
    while depth:
        key, pos = read_varint(data, pos)
        wire = key & 7
        if wire == VARINT:
            _, pos = read_varint(data, pos)
        elif wire == BYTES:
            length, pos = read_varint(data, pos)
            pos += length
        elif wire == FIXED64:
            pos += 8
        elif wire == FIXED32:
            pos += 4
        elif wire == START_GROUP:
            depth += 1
        elif wire == END_GROUP:
            depth -= 1
        else:
            raise ProtobufError(f"proto: illegal wireType {wire}")
        if pos > len(data):
            raise ProtobufError(UNEXPECTED_EOF)
    return pos


def signed(value: int, bits: int) -> int:
    """A varint as Go's intN: truncated to `bits`, two's complement."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def varint(value: int) -> bytes:
    """The varint encoding of `value` (negative numbers as 64-bit two's complement, as Go does)."""
    value &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def tag(num: int, wire: int) -> bytes:
    return varint(num << 3 | wire)


def length_delimited(num: int, payload: bytes) -> bytes:
    return tag(num, BYTES) + varint(len(payload)) + payload
