"""The opaque types of the Kubernetes CEL libraries, as protobuf messages cel-expr-python can carry.

cel-expr-python hands a custom function's result back to cel-cpp only as a CEL value it knows (its
abstract types are `dyn` to the checker and cannot cross into Python), so each Kubernetes type is a
message with the server's type name (`kubernetes.Quantity`, `kubernetes.URL`, `net.IP`, `net.CIDR`,
`kubernetes.Semver`): the checker knows it, `type(ip('::1')) == net.IP` holds, and `==` compares
messages field by field. The one field holds the value in a canonical form chosen so that field
equality is the library's `Equal` (a quantity's exact value, an address's canonical text).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, NamedTuple

__all__ = ["TYPE_NAMES", "Decl", "go_quote", "make", "message_type", "pool", "state"]

TYPE_NAMES = ("kubernetes.Quantity", "kubernetes.URL", "net.IP", "net.CIDR", "kubernetes.Semver")
_FIELD = "pyop_state"


@lru_cache(maxsize=1)
def _built() -> tuple[Any, dict[str, Any]]:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    pool_ = descriptor_pool.DescriptorPool()
    for package in sorted({name.split(".")[0] for name in TYPE_NAMES}):
        proto = descriptor_pb2.FileDescriptorProto(
            name=f"pyscaffold_op/cel_{package}.proto", package=package, syntax="proto3"
        )
        for name in TYPE_NAMES:
            if name.startswith(package + "."):
                message = proto.message_type.add(name=name.split(".", 1)[1])
                message.field.add(
                    name=_FIELD,
                    number=1,
                    type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                    label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
                )
        pool_.Add(proto)
    classes = {
        name: message_factory.GetMessageClass(pool_.FindMessageTypeByName(name)) for name in TYPE_NAMES
    }
    return pool_, classes


class Decl(NamedTuple):
    """One overload, as `cel.Overload` takes it; `cellibs` makes the overloads (see `overloads`)."""

    id: str
    ret: Any
    params: list[Any]
    is_member: bool = False
    impl: Any = None


def pool() -> Any:
    """The descriptor pool declaring the types, for `cel.NewEnv(descriptor_pool=...)`."""
    return _built()[0]


def message_type(name: str) -> Any:
    """The CEL type of one of TYPE_NAMES."""
    from cel_expr_python import cel

    return cel.Type(name)


def make(name: str, canonical: str) -> Any:
    """A value of type `name` holding `canonical`."""
    return _built()[1][name](**{_FIELD: canonical})


def state(value: Any) -> str:
    """The canonical text a value of one of the types holds."""
    return str(getattr(value, _FIELD))


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(text: str) -> str:
    """Go's strconv.Quote, as `%q` prints a string in the server's error texts."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif not ch.isprintable() and code > 0x7F:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
