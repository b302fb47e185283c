"""The `[]byte` fields of built-in kinds, base64 in JSON, and Go's encoding/base64 verdict on them: a
value Go cannot decode makes the whole body undecodable (400 `illegal base64 data at input byte N`)."""

from __future__ import annotations

import string
from typing import Any

# (group, kind) -> top-level maps whose values are []byte
_BYTE_MAPS: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "ConfigMap"): ("binaryData",),
    ("", "Secret"): ("data",),
}
_ALPHABET = frozenset(string.ascii_letters + string.digits + "+/")


def illegal_base64(group: str, kind: str, obj: dict[str, Any]) -> str | None:
    """Go's error for the first value of a []byte map that StdEncoding cannot decode, or None."""
    for field in _BYTE_MAPS.get((group, kind), ()):
        values = obj.get(field)
        if not isinstance(values, dict):
            continue
        for value in values.values():
            if isinstance(value, str) and (at := corrupt_at(value)) is not None:
                return f"illegal base64 data at input byte {at}"
    return None


def corrupt_at(src: str) -> int | None:
    """encoding/base64 StdEncoding.Decode's CorruptInputError offset (None when it decodes): newlines
    are skipped, each quantum is 4 characters, padding ends the input."""
    si, n = 0, len(src)
    while si < n:
        j = 0
        while j < 4:
            if si == n:
                return None if j == 0 else si - j
            c = src[si]
            si += 1
            if c in "\r\n":
                continue
            if c == "=":
                if j in (0, 1):
                    return si - 1
                if j == 2:
                    while si < n and src[si] in "\r\n":
                        si += 1
                    if si == n:
                        return n
                    if src[si] != "=":
                        return si - 1
                    si += 1
                while si < n and src[si] in "\r\n":
                    si += 1
                return si if si < n else None
            if c not in _ALPHABET:
                return si - 1
            j += 1
    return None
