"""The Kubernetes protobuf schema captured by pyscaffold_op/dev/proto_capture.py: every message of
k8s.io/api, apimachinery, apiextensions-apiserver and kube-aggregator with its fields' numbers,
types and the Go struct's JSON names and `omitempty` rules. Loaded on the first protobuf request."""

from __future__ import annotations

import functools
import json
import lzma
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_DATA = Path(__file__).with_name("_protobuf.json.xz")

META = "k8s.io.apimachinery.pkg.apis.meta.v1."
TIME, MICRO_TIME, DURATION, FIELDS_V1 = (
    META + "Time",
    META + "MicroTime",
    META + "Duration",
    META + "FieldsV1",
)
QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
QUANTITY_VALUE = "k8s.io.apimachinery.pkg.api.resource.QuantityValue"
INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension"
UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown"
_EXT = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions."
EXT_JSON = {_EXT + "v1.JSON", _EXT + "v1beta1.JSON"}
EXT_OR_ARRAY = {_EXT + "v1.JSONSchemaPropsOrArray", _EXT + "v1beta1.JSONSchemaPropsOrArray"}
EXT_OR_BOOL = {_EXT + "v1.JSONSchemaPropsOrBool", _EXT + "v1beta1.JSONSchemaPropsOrBool"}
EXT_OR_STRINGS = {_EXT + "v1.JSONSchemaPropsOrStringArray", _EXT + "v1beta1.JSONSchemaPropsOrStringArray"}

SCALARS = frozenset({"string", "bytes", "bool", "int32", "int64", "uint32", "uint64", "double", "float"})


@dataclass(frozen=True, slots=True)
class Field:
    number: int
    json: str  # "" when inlined into the parent's JSON object
    type: str  # a scalar or a message's full name (a map's value type)
    repeated: bool
    map: bool
    omitempty: bool
    omitzero: bool
    pointer: bool
    inline: bool
    go_name: str  # the Go field's name, as gogo's errors name it
    go_type: str = ""  # the Go type as reflect prints it, pointer left out (`[]v1.Container`)

    @property
    def scalar(self) -> bool:
        return self.type in SCALARS


@dataclass(frozen=True, slots=True)
class Schema:
    messages: dict[str, tuple[Field, ...]]  # Go declaration order
    by_number: dict[str, dict[int, Field]]
    slices: frozenset[str]  # messages that are Go slices: their JSON is the `items` array
    groups: dict[str, str]  # apiVersion -> proto package

    def message_for(self, api_version: str, kind: str) -> str | None:
        package = self.groups.get(api_version)
        if package is None:
            return None
        for message in (f"{package}.{kind}", META + kind):  # meta/v1's kinds (Status) are in every group
            if message in self.messages:
                return message
        return None


def _field(raw: list[Any]) -> Field:
    num, name, ftype, flags, go_name, go_type = raw
    return Field(
        num,
        name,
        ftype,
        "r" in flags,
        "m" in flags,
        "o" in flags,
        "z" in flags,
        "p" in flags,
        "i" in flags,
        go_name,
        go_type,
    )


@functools.cache
def schema() -> Schema:
    data = json.loads(lzma.decompress(_DATA.read_bytes()))
    messages = {name: tuple(_field(f) for f in fields) for name, fields in data["messages"].items()}
    by_number = {name: {f.number: f for f in fields} for name, fields in messages.items()}
    return Schema(messages, by_number, frozenset(data["slices"]), data["groups"])
