"""A built-in object decoded as kube-apiserver decodes it into its Go type (sigs.k8s.io/json, Go's
encoding/json with case-sensitive keys): the first error Go's decoder gives, in its words, for every
field of every built-in kind, or None.

`json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort
of type int32`: the JSON kind (with the literal for a number that is no integer of the field's size),
the innermost Go struct's name, the JSON path from the root without indices or map keys (an embedded
struct adds its Go name: `Volume.spec.volumes.VolumeSource.configMap`), the Go type as reflect prints
it. Like Go, a type error is kept and decoding goes on (the first one is reported), while a type that
decodes itself (metav1.Time, resource.Quantity, intstr.IntOrString, metav1.Duration) stops everything
at its first failure, whose text is its own (`parsing time ...`, `quantities must match ...`).

The Go types come from the pinned modules (the protobuf schema, `protoschema`, which records each
field's Go type); numbers keep their literal: a JSON body's floats are read again with their spelling
when an error names one (`number 1e2`), a YAML body's numbers are what sigs.k8s.io/yaml's conversion
to JSON writes (`1.0` is `1`, a 40-digit integer `1.2345678901234568e+39`)."""

from __future__ import annotations

import functools
import math
import re
import string
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pyscaffold_op.envtest.server import gotime
from pyscaffold_op.envtest.server import protoschema as S
from pyscaffold_op.envtest.server.quantity import canonical


class RawNumber(str):
    """A JSON number kept as its text (a float read again for its spelling)."""


class _Abort(Exception):
    """A self-decoding type failed: Go stops decoding there."""


# -- the Go types, compiled once per message --------------------------------------------------------


@dataclass(eq=False)
class Node:
    kind: str  # struct | map | slice | bytes | string | bool | int | uint | float | custom
    name: str  # the Go type as reflect prints it
    bits: int = 64
    custom: str = ""  # time | microtime | duration | quantity | intorstring | any
    elem: Node | None = None  # map value, slice item
    message: str = ""  # a struct's protobuf message
    fields: dict[str, tuple[Node, tuple[str, ...]]] = field(default_factory=dict)  # json -> (type, embeds)
    struct_name: str = ""  # reflect's Name() of a struct: `PodSpec`
    fast: type[Any] | None = None  # the Python type a value that needs no more checking has (str, bool, int)
    low: int = 0  # an int's range, [low, high)
    high: int = 0

    def __post_init__(self) -> None:
        if self.kind in ("string", "bool"):
            self.fast = str if self.kind == "string" else bool
        elif self.kind in ("int", "uint"):
            self.fast = int
            self.low, self.high = (
                (-(2 ** (self.bits - 1)), 2 ** (self.bits - 1)) if self.kind == "int" else (0, 2**self.bits)
            )


_META = S.META
_CUSTOM = {
    S.TIME: "time",
    S.MICRO_TIME: "microtime",
    S.DURATION: "duration",
    S.QUANTITY: "quantity",
    S.INT_OR_STRING: "intorstring",
    S.RAW_EXTENSION: "any",
    S.FIELDS_V1: "any",
    S.QUANTITY_VALUE: "quantity",
    **{m: "any" for m in (*S.EXT_JSON, *S.EXT_OR_ARRAY, *S.EXT_OR_BOOL, *S.EXT_OR_STRINGS)},
}
_SCALARS = {
    "string": ("string", 0),
    "bool": ("bool", 0),
    "int32": ("int", 32),
    "int64": ("int", 64),
    "uint32": ("uint", 32),
    "uint64": ("uint", 64),
    "double": ("float", 64),
    "float": ("float", 32),
}


def _message_name(message: str) -> str:
    """reflect's String() of a message's Go type: the package's last element and the name."""
    package, _, name = message.rpartition(".")
    return f"{package.rpartition('.')[2]}.{name}"


def _element(go_type: str) -> str:
    """The item type of a slice, the value type of a map ("" for a named type)."""
    if go_type.startswith("[]"):
        return go_type[2:]
    if go_type.startswith("map["):
        depth = 0
        for i in range(3, len(go_type)):
            depth += {"[": 1, "]": -1}.get(go_type[i], 0)
            if depth == 0:
                return go_type[i + 1 :]
    return ""


def _node(ptype: str, go_type: str) -> Node:
    """The type of a value whose protobuf type is `ptype` (a scalar or a message) and Go type `go_type`."""
    if ptype == "bytes":
        return Node("bytes", "[]uint8")
    if ptype in _SCALARS:
        kind, bits = _SCALARS[ptype]
        return Node(kind, go_type or ("float64" if ptype == "double" else ptype), bits)
    custom = _CUSTOM.get(ptype)
    name = go_type or _message_name(ptype)
    if custom is not None:
        return Node("custom", name, custom=custom)
    schema = S.schema()
    if ptype in schema.slices:  # `type ExtraValue []string`: a JSON array
        item = schema.by_number[ptype][1]
        return Node("slice", name, elem=_node(item.type, ""))
    return Node("struct", name, message=ptype)


def _field_node(f: S.Field) -> Node:
    if f.map:
        return Node(
            "map", f.go_type or f"map[string]{_message_name(f.type)}", elem=_node(f.type, _element(f.go_type))
        )
    if f.repeated:
        return Node("slice", f.go_type, elem=_node(f.type, _element(f.go_type)))
    return _node(f.type, f.go_type)


@functools.cache
def _struct_fields(message: str) -> dict[str, tuple[Node, tuple[str, ...]]]:
    """A struct's JSON fields, those of its inline embedded structs promoted (their Go names kept for
    the error path); its own fields win over promoted ones."""
    out: dict[str, tuple[Node, tuple[str, ...]]] = {}
    promoted: dict[str, tuple[Node, tuple[str, ...]]] = {}
    for f in S.schema().messages.get(message, ()):
        if f.inline:
            if f.type in S.schema().messages:
                for name, (node, embeds) in _struct_fields(f.type).items():
                    promoted.setdefault(name, (node, (f.go_name, *embeds)))
            continue
        if f.json in ("apiVersion", "kind") and message.startswith(_META + "TypeMeta"):
            continue
        out[f.json] = (_field_node(f), ())
    for name, found in promoted.items():
        out.setdefault(name, found)
    return out


def _fields(node: Node) -> dict[str, tuple[Node, tuple[str, ...]]]:
    if not node.fields:
        node.fields = _struct_fields(node.message)
        node.struct_name = node.name.rpartition(".")[2]
    return node.fields


@functools.cache
def kind_node(api_version: str, kind: str) -> Node | None:
    """The Go type of a built-in kind served under `api_version`; None for kinds the schema lacks."""
    message = S.schema().message_for(api_version, kind)
    return None if message is None else Node("struct", _message_name(message), message=message)


# -- decoding ------------------------------------------------------------------------------------------


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float, RawNumber)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def go_float(value: float) -> str:
    """encoding/json's text for a float64: the shortest digits, `%f` between 1e-6 and 1e21, else `%e`
    with the exponent's leading zero dropped when it is negative (`1e-7`, `1e+21`)."""
    if math.isinf(value) or math.isnan(value):
        return repr(value)
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        text = repr(value)  # Python's shortest form there: `1.5e-07`, `1e+21`, as strconv's 'e'
        return text[:-2] + text[-1] if re.search(r"e-0\d$", text) else text
    text = format(Decimal(repr(value)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text or "0"


def _literal(value: Any) -> str:
    if isinstance(value, RawNumber):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    return str(value)


def _parse_int(literal: str, bits: int, signed: bool) -> bool:
    """strconv.ParseInt/ParseUint of a JSON number literal, and whether it fits the Go int type."""
    digits = literal[1:] if literal.startswith("-") and signed else literal
    if not digits.isdigit():
        return False
    value = int(literal)
    if signed:
        return -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)
    return 0 <= value < 2**bits


@dataclass
class _State:
    saved: str | None = None
    floats: bool = False  # an error named a float read without its spelling


# Where a value sits, built only when an error is reported: (struct's Name(), embedded Go names, JSON
# key, the parent's context), or None at the root
Ctx = tuple[str, tuple[str, ...], str, Any] | None


def _where(ctx: Ctx) -> str:
    if ctx is None:
        return "Go value"
    struct = ctx[0]
    parts: list[str] = []
    while ctx is not None:
        _name, embeds, key, parent = ctx
        parts.append(key)
        parts.extend(reversed(embeds))
        ctx = parent
    return f"Go struct field {struct}.{'.'.join(reversed(parts))}"


def _type_error(what: str, go_type: str, ctx: Ctx) -> str:
    return f"json: cannot unmarshal {what} into {_where(ctx)} of type {go_type}"


def _save(st: _State, message: str) -> None:
    if st.saved is None:
        st.saved = message


def _number_error(value: Any, st: _State) -> str:
    if isinstance(value, float) and not isinstance(value, RawNumber):
        st.floats = True
    return f"number {_literal(value)}"


def _fits(node: Node, value: Any) -> bool:
    """A value Go decodes into `node` without a word (the common case, checked before any call)."""
    fast = node.fast
    return (
        fast is not None and type(value) is fast and (fast is not int or node.low <= int(value) < node.high)
    )


def _decode(node: Node, value: Any, ctx: Ctx, st: _State) -> None:
    if value is None:
        return  # null leaves a value alone (or clears a pointer, slice or map)
    kind = node.kind
    if kind == "custom":
        _custom(node, value, ctx, st)
        return
    if isinstance(value, dict):
        if kind == "struct":
            struct = _fields(node)
            name = node.struct_name
            for key, sub in value.items():
                found = struct.get(key)
                if found is None or sub is None:
                    continue
                child, embeds = found
                fast = child.fast
                if (
                    fast is not None
                    and type(sub) is fast
                    and (fast is not int or child.low <= int(sub) < child.high)
                ):
                    continue
                _decode(child, sub, (name, embeds, key, ctx), st)
                if child.kind == "bytes" and isinstance(sub, list):
                    value[key] = _bytes_of(sub)
        elif kind == "map":
            elem = node.elem
            assert elem is not None
            for key, sub in value.items():
                if sub is not None and not _fits(elem, sub):
                    _decode(elem, sub, ctx, st)
                    if elem.kind == "bytes" and isinstance(sub, list):
                        value[key] = _bytes_of(sub)
        else:
            _save(st, _type_error("object", node.name, ctx))
    elif isinstance(value, list):
        if kind == "slice":
            elem = node.elem
            assert elem is not None
            for item in value:
                if item is not None and not _fits(elem, item):
                    _decode(elem, item, ctx, st)
        elif kind == "bytes":  # a JSON array into []byte: each item a uint8
            for item in value:
                _decode(_UINT8, item, ctx, st)
        else:
            _save(st, _type_error("array", node.name, ctx))
    elif isinstance(value, bool):
        if kind != "bool":
            _save(st, _type_error("bool", node.name, ctx))
    elif isinstance(value, str) and not isinstance(value, RawNumber):
        if kind == "bytes":
            offset = _base64_error(value)
            if offset is not None:
                _save(st, f"illegal base64 data at input byte {offset}")
        elif kind != "string":
            _save(st, _type_error("string", node.name, ctx))
    elif kind in ("int", "uint"):
        # a JSON number with a fraction or an exponent is no integer, whatever its value
        if isinstance(value, (float, RawNumber)) or not _parse_int(str(value), node.bits, kind == "int"):
            _save(st, _type_error(_number_error(value, st), node.name, ctx))
    elif kind != "float":
        _save(st, _type_error("number", node.name, ctx))


_UINT8 = Node("uint", "uint8", 8)


def _bytes_of(items: list[Any]) -> Any:
    """A []byte sent as a JSON array of numbers, as Go stores it (base64); left as sent when it did not
    decode (the error is reported)."""
    if all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < 256 for i in items):
        import base64

        return base64.b64encode(bytes(items)).decode()
    return items


_BASE64 = frozenset(string.ascii_letters + string.digits + "+/")


def _base64_error(src: str) -> int | None:
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
            if c not in _BASE64:
                return si - 1
            j += 1
    return None


def _custom(node: Node, value: Any, ctx: Ctx, st: _State) -> None:
    """The types that decode themselves: the first failure stops decoding (`_Abort`)."""
    how = node.custom
    if how == "any":
        return
    if how in ("time", "microtime", "duration"):
        if not isinstance(value, str) or isinstance(value, RawNumber):
            raise _Abort(_type_error(_json_kind(value), "string", ctx))  # json.Unmarshal into a string
        if how == "duration":
            problem = gotime.duration_error(value)
        else:
            problem = gotime.parse_error(gotime.RFC3339 if how == "time" else gotime.RFC3339_MICRO, value)
        if problem is not None:
            raise _Abort(problem)
    elif how == "intorstring":
        if isinstance(value, str) and not isinstance(value, RawNumber):
            return
        if isinstance(value, (bool, dict, list)):
            raise _Abort(_type_error(_json_kind(value), "int32", ctx))
        if isinstance(value, (float, RawNumber)) or not _parse_int(str(value), 32, True):
            raise _Abort(_type_error(_number_error(value, st), "int32", ctx))
    elif how == "quantity":
        from pyscaffold_op.apiextensions import celquantity

        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (dict, list)):
            text = "{}"
        else:
            text = _literal(value).strip()
        try:
            canonical(text)  # cached: the store writes the same spellings back canonical next
        except celquantity.QuantityError as err:
            raise _Abort(str(err)) from None


def first_error(node: Node, obj: Any) -> tuple[str | None, bool]:
    """Go's decoding error for `obj` as `node`'s type, or None; and whether it names a float whose
    spelling was not kept (the caller may read the body again with `RawNumber`s)."""
    st = _State()
    try:
        _decode(node, obj, None, st)
    except _Abort as err:
        return str(err), st.floats
    return st.saved, st.floats


def decode_error(api_version: str, kind: str, obj: Any, raw_json: bytes | None = None) -> str | None:
    """The first error of decoding `obj` (a built-in `kind` under `api_version`) into its Go type, or
    None. `raw_json`: the JSON body `obj` was read from, read again when the error names a float, so
    the number is quoted as it was written."""
    node = kind_node(api_version, kind)
    if node is None:
        return None
    error, floats = first_error(node, obj)
    if error is not None and floats and raw_json is not None:
        import msgspec

        again = msgspec.json.Decoder(float_hook=RawNumber).decode(raw_json)
        error, _ = first_error(node, again)
    return error


def as_go_json(value: Any) -> Any:
    """A YAML document's numbers as sigs.k8s.io/yaml's conversion to JSON writes them, decoded back:
    floats whose text is an integer (`1.0`, `1e3`) are integers, integers beyond 64 bits floats."""
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, (dict, list, float, int)) and not isinstance(v, bool):
                value[k] = as_go_json(v)
        return value
    if isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, (dict, list, float, int)) and not isinstance(v, bool):
                value[i] = as_go_json(v)
        return value
    if isinstance(value, float) and math.isfinite(value):
        text = go_float(value)
        return int(text) if text.lstrip("-").isdigit() else value
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        return float(value)
    return value
