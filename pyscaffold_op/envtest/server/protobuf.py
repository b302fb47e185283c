"""Decoding of the Kubernetes protobuf envelope for a few simple built-in kinds.

kubectl's typed generators (`kubectl create namespace|configmap|secret|serviceaccount`) send
`application/vnd.kubernetes.protobuf`. The envelope is the magic `k8s\\0` then a `runtime.Unknown`
whose `raw` field holds the object. We decode the kinds whose messages are small enough to describe
here (field numbers from k8s.io/api and apimachinery generated.proto); anything else stays 415.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

MAGIC = b"k8s\x00"

# Schema: field number -> (json name, kind, sub-schema). Kinds: str, bytes, bool, int, msg, time,
# map_ss (map<string,string>), map_sb (map<string,bytes>), rep_str, rep_msg.
_TYPE_META = {1: ("apiVersion", "str", None), 2: ("kind", "str", None)}
_UNKNOWN = {
    1: ("typeMeta", "msg", _TYPE_META),
    2: ("raw", "raw", None),
    3: ("contentEncoding", "str", None),
    4: ("contentType", "str", None),
}
_OWNER_REF = {
    1: ("kind", "str", None),
    3: ("name", "str", None),
    4: ("uid", "str", None),
    5: ("apiVersion", "str", None),
    6: ("controller", "bool", None),
    7: ("blockOwnerDeletion", "bool", None),
}
_OBJECT_META = {
    1: ("name", "str", None),
    2: ("generateName", "str", None),
    3: ("namespace", "str", None),
    5: ("uid", "str", None),
    6: ("resourceVersion", "str", None),
    7: ("generation", "int", None),
    11: ("labels", "map_ss", None),
    12: ("annotations", "map_ss", None),
    13: ("ownerReferences", "rep_msg", _OWNER_REF),
    14: ("finalizers", "rep_str", None),
}
_LOCAL_REF = {1: ("name", "str", None)}
KINDS: dict[tuple[str, str], dict[int, tuple[str, str, Any]]] = {
    ("v1", "ConfigMap"): {
        1: ("metadata", "msg", _OBJECT_META),
        2: ("data", "map_ss", None),
        3: ("binaryData", "map_sb", None),
        4: ("immutable", "bool", None),
    },
    ("v1", "Secret"): {
        1: ("metadata", "msg", _OBJECT_META),
        2: ("data", "map_sb", None),
        3: ("type", "str", None),
        4: ("stringData", "map_ss", None),
        5: ("immutable", "bool", None),
    },
    ("v1", "Namespace"): {
        1: ("metadata", "msg", _OBJECT_META),
        2: ("spec", "msg", {1: ("finalizers", "rep_str", None)}),
    },
    ("v1", "ServiceAccount"): {
        1: ("metadata", "msg", _OBJECT_META),
        2: (
            "secrets",
            "rep_msg",
            {1: ("kind", "str", None), 2: ("namespace", "str", None), 3: ("name", "str", None)},
        ),
        3: ("imagePullSecrets", "rep_msg", _LOCAL_REF),
        4: ("automountServiceAccountToken", "bool", None),
    },
}


# authentication.k8s.io/v1 and authorization.k8s.io/v1 reviews (kubectl auth can-i sends protobuf)
_RESOURCE_ATTRIBUTES = {
    1: ("namespace", "str", None),
    2: ("verb", "str", None),
    3: ("group", "str", None),
    4: ("version", "str", None),
    5: ("resource", "str", None),
    6: ("subresource", "str", None),
    7: ("name", "str", None),
}
_NON_RESOURCE_ATTRIBUTES = {1: ("path", "str", None), 2: ("verb", "str", None)}
_ACCESS_ATTRIBUTES = {
    1: ("resourceAttributes", "msg", _RESOURCE_ATTRIBUTES),
    2: ("nonResourceAttributes", "msg", _NON_RESOURCE_ATTRIBUTES),
}
KINDS.update(
    {
        ("authentication.k8s.io/v1", "TokenReview"): {
            1: ("metadata", "msg", _OBJECT_META),
            2: ("spec", "msg", {1: ("token", "str", None), 2: ("audiences", "rep_str", None)}),
        },
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): {
            1: ("metadata", "msg", _OBJECT_META),
            2: ("spec", "msg", _ACCESS_ATTRIBUTES),
        },
        ("authorization.k8s.io/v1", "SubjectAccessReview"): {
            1: ("metadata", "msg", _OBJECT_META),
            2: (
                "spec",
                "msg",
                {
                    **_ACCESS_ATTRIBUTES,
                    3: ("user", "str", None),
                    4: ("groups", "rep_str", None),
                    6: ("uid", "str", None),
                },
            ),
        },
    }
)


# subresource bodies: kubectl create token (TokenRequest), evictions and bindings
_DELETE_OPTIONS = {
    1: ("gracePeriodSeconds", "int", None),
    3: ("orphanDependents", "bool", None),
    4: ("propagationPolicy", "str", None),
    5: ("dryRun", "rep_str", None),
}
_OBJECT_REFERENCE = {
    1: ("kind", "str", None),
    2: ("namespace", "str", None),
    3: ("name", "str", None),
    4: ("uid", "str", None),
    5: ("apiVersion", "str", None),
}
KINDS.update(
    {
        ("authentication.k8s.io/v1", "TokenRequest"): {
            1: ("metadata", "msg", _OBJECT_META),
            2: (
                "spec",
                "msg",
                {
                    1: ("audiences", "rep_str", None),
                    3: (
                        "boundObjectRef",
                        "msg",
                        {
                            1: ("kind", "str", None),
                            2: ("apiVersion", "str", None),
                            3: ("name", "str", None),
                            4: ("uid", "str", None),
                        },
                    ),
                    4: ("expirationSeconds", "int", None),
                },
            ),
        },
        ("policy/v1", "Eviction"): {
            1: ("metadata", "msg", _OBJECT_META),
            2: ("deleteOptions", "msg", _DELETE_OPTIONS),
        },
        ("v1", "Binding"): {1: ("metadata", "msg", _OBJECT_META), 2: ("target", "msg", _OBJECT_REFERENCE)},
    }
)


class ProtobufError(ValueError):
    pass


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("truncated varint")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ProtobufError("varint too long")


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) triples; value is an int or bytes."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        num, wt = key >> 3, key & 7
        val: int | bytes
        if wt == 0:
            val, pos = _varint(data, pos)
        elif wt == 2:
            n, pos = _varint(data, pos)
            if pos + n > len(data):
                raise ProtobufError("truncated field")
            val, pos = data[pos : pos + n], pos + n
        elif wt == 1:
            val, pos = data[pos : pos + 8], pos + 8
        elif wt == 5:
            val, pos = data[pos : pos + 4], pos + 4
        else:
            raise ProtobufError(f"unsupported wire type {wt}")
        out.append((num, wt, val))
    return out


def _message(data: bytes, schema: dict[int, tuple[str, str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for num, wt, val in _fields(data):
        if num not in schema:
            continue
        name, kind, sub = schema[num]
        if (wt == 0) != (kind in ("bool", "int")) or wt not in (0, 2):
            raise ProtobufError(f"field {num} ({name}) has wire type {wt}")
        if kind == "str":
            if val:  # Go marshals empty strings; their JSON form omits them (omitempty)
                obj[name] = bytes(val).decode()
        elif kind == "raw":
            obj[name] = bytes(val)
        elif kind == "bool":
            obj[name] = bool(val)
        elif kind == "int":
            if val:
                obj[name] = int(val)
        elif kind == "msg":
            obj[name] = _message(val, sub)
        elif kind == "rep_str":
            obj.setdefault(name, []).append(bytes(val).decode())
        elif kind == "rep_msg":
            obj.setdefault(name, []).append(_message(val, sub))
        elif kind in ("map_ss", "map_sb"):
            entry = {n: v for n, w, v in _fields(val) if w == 2}
            key = bytes(entry.get(1, b"")).decode()
            raw = bytes(entry.get(2, b""))
            obj.setdefault(name, {})[key] = (
                raw.decode() if kind == "map_ss" else base64.b64encode(raw).decode()
            )
        elif kind == "time":
            f = {n: v for n, _w, v in _fields(val)}
            obj[name] = datetime.fromtimestamp(int(f.get(1, 0)), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return obj


def decode(body: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded object; ProtobufError for kinds we cannot describe."""
    if not body.startswith(MAGIC):
        raise ProtobufError("missing the k8s protobuf envelope")
    try:
        unknown = _message(body[len(MAGIC) :], _UNKNOWN)
        tm = unknown.get("typeMeta", {})
        av, kind = tm.get("apiVersion", ""), tm.get("kind", "")
        schema = KINDS.get((av, kind))
        if schema is None:
            raise ProtobufError(f"protobuf bodies of {av}/{kind} are not supported by the envtest emulator")
        obj = _message(unknown.get("raw", b""), schema)
    except UnicodeDecodeError as err:
        raise ProtobufError(f"invalid UTF-8 in a string field: {err}") from None
    return {"apiVersion": av, "kind": kind, **obj}
