"""The static cost of `x-kubernetes-validations` rules, as the API server estimates it before it
accepts a CRD.

The server type-checks each rule and runs cel-go's cost estimator (`checker.Cost`) with the Kubernetes
size estimator (sizes of lists, maps and strings from `maxItems`/`maxProperties`/`maxLength`, else the
most a 3 MiB request can hold) and the Kubernetes libraries' call costs (`library.CostEstimator`). A
rule's cost is multiplied by how often its node can occur (the product of the enclosing lists' and
maps' `maxItems`/`maxProperties`; when one is unbounded, the most values of the node's minimum
serialized size a request can hold). A rule over 10,000,000 (`StaticEstimatedCostLimit`) or a version's
rules together over 100,000,000 (`StaticEstimatedCRDCostLimit`) reject the CRD.

pyop compiles rules with cel-expr-python (cel-cpp): the checked expression it serializes (a
`cel.expr.CheckedExpr`, macros expanded as cel-go expands them) is read here and costed with the rules
of cel-go's `checker/cost.go`, the types of `self` and what is reached from it taken from the
structural schema as the server declares them (`SchemaDeclType`).

    schema_cost_errors(schema, path) -> ["field: Forbidden: ...", ...]   # the server's cost errors
    rule_cost(rule, schema, root=...) -> RuleCost                         # one rule's estimate
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "STATIC_ESTIMATED_COST_LIMIT",
    "STATIC_ESTIMATED_CRD_COST_LIMIT",
    "Decl",
    "RuleCost",
    "cost_error_message",
    "decl_of",
    "rule_cost",
    "schema_cost_errors",
]

Schema = dict[str, Any]

STATIC_ESTIMATED_COST_LIMIT = 10_000_000
STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000
MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024
_MAX = 2**64 - 1

# cel-go common/cost.go
_SELECT_AND_IDENT = 1
_LIST_CREATE = 10
_MAP_CREATE = 30
_STRUCT_CREATE = 40
_STRING_TRAVERSAL = 0.1
_REGEX_STRING_LENGTH = 0.25
# apiserver pkg/cel/limits.go
_MAX_DURATION_SIZE_JSON = 32
_MAX_DATETIME_SIZE_JSON = 32
_MIN_DURATION_SIZE_JSON = 3
_JSON_DATE_SIZE = 12
_MIN_DATETIME_SIZE_JSON = 21
_MIN_STRING_SIZE = 2
_MIN_BOOL_SIZE = 4
_MIN_NUMBER_SIZE = 1
_MAX_NAME_FORMAT_REGEX_SIZE = 128
_NAME_MAX_LENGTH = 253


# ------------------------------------------------------------------ saturating uint64 arithmetic


def _add(x: int, y: int) -> int:
    return min(x + y, _MAX)


def _mul(x: int, y: int) -> int:
    return min(x * y, _MAX)


def _factor(x: int, f: float) -> int:
    """cel-go's multiplyByCostFactor: ceil(x*f) in float64, saturating."""
    xf = float(x)
    if xf > 0 and f > 0 and xf > float(_MAX) / f:
        return _MAX
    c = math.ceil(xf * f)
    return _MAX if c >= 2.0**64 else int(c)


Range = tuple[int, int]  # a (min, max) size or cost estimate
_UNKNOWN: Range = (0, _MAX)


def _radd(a: Range, b: Range) -> Range:
    return (_add(a[0], b[0]), _add(a[1], b[1]))


def _rmul(a: Range, b: Range) -> Range:
    return (_mul(a[0], b[0]), _mul(a[1], b[1]))


def _rfactor(a: Range, f: float) -> Range:
    return (_factor(a[0], f), _factor(a[1], f))


def _union(a: Range, b: Range) -> Range:
    return (min(a[0], b[0]), max(a[1], b[1]))


def _fixed(v: int) -> Range:
    return (v, v)


# ------------------------------------------------------------------ declared types (SchemaDeclType)


@dataclass
class Decl:
    """A schema node as CEL declares it (apiserver's `DeclType`): `max_elements` bounds a string's,
    list's or map's size, `min_size` is the smallest serialized value. `where` is the schema path and
    `bound` the keyword that would bound it (None when it is bounded already or needs no bound)."""

    kind: str  # object list map string bytes duration timestamp bool int double dyn
    max_elements: int = 0
    min_size: int = 0
    fields: dict[str, Decl] = field(default_factory=dict)
    elem: Decl | None = None
    key: Decl | None = None
    where: str = ""
    bound: str | None = None


_STRING_KEY = Decl("string", 0, _MIN_STRING_SIZE)


def _max_string_length(s: Schema) -> int:
    if s.get("x-kubernetes-int-or-string"):
        return MAX_REQUEST_SIZE_BYTES - 2
    return {
        "duration": _MAX_DURATION_SIZE_JSON,
        "date": _JSON_DATE_SIZE,
        "date-time": _MAX_DATETIME_SIZE_JSON,
    }.get(s.get("format", ""), MAX_REQUEST_SIZE_BYTES - 2)


def _nonneg(v: Any) -> int:
    return max(int(v), 0)


def _with_type_and_object_meta(s: Schema) -> Schema:
    props = s.get("properties") or {}

    def typ(p: Any) -> Any:
        return p.get("type") if isinstance(p, dict) else None

    meta: dict[str, Any] = props["metadata"] if isinstance(props.get("metadata"), dict) else {}
    meta_props = meta.get("properties") or {}
    if (
        s.get("properties")
        and typ(props.get("kind")) == "string"
        and typ(props.get("apiVersion")) == "string"
        and typ(meta) == "object"
        and meta.get("properties")
        and typ(meta_props.get("name")) == "string"
        and typ(meta_props.get("generateName")) == "string"
    ):
        return s

    def capped(existing: Any, limit: int) -> Schema:
        if isinstance(existing, dict) and existing.get("maxLength") is not None:
            limit = min(limit, int(existing["maxLength"]))
        return {"type": "string", "maxLength": limit}

    out = dict(s)
    out["properties"] = {
        **props,
        "kind": {"type": "string"},
        "apiVersion": {"type": "string"},
        "metadata": {
            "type": "object",
            "properties": {
                "name": capped(meta_props.get("name"), _NAME_MAX_LENGTH),
                "generateName": capped(meta_props.get("generateName"), _NAME_MAX_LENGTH - 1),
            },
        },
    }
    return out


def decl_of(s: Any, root: bool = False, where: str = "") -> Decl | None:
    """The declared type of a structural schema node (`SchemaDeclType`); None when CEL cannot see it."""
    from pyscaffold_op.apiextensions.cel import escape_property

    if not isinstance(s, dict):
        return None
    if s.get("x-kubernetes-int-or-string"):
        if s.get("maxLength") is not None:
            return Decl("dyn", _nonneg(s["maxLength"]) * 4, 1, where=where)
        return Decl("dyn", _max_string_length(s), 1, where=where, bound="maxLength")
    if root:
        s = _with_type_and_object_meta(s)
    typ = s.get("type")
    if typ == "array":
        items = s.get("items")
        if not isinstance(items, dict):
            return None
        elem = decl_of(items, bool(items.get("x-kubernetes-embedded-resource")), where + "[*]")
        if elem is None:
            return None
        if s.get("maxItems") is not None:
            return Decl("list", _nonneg(s["maxItems"]), 2, elem=elem, where=where)
        n = (MAX_REQUEST_SIZE_BYTES - 2) // (elem.min_size + 1)
        return Decl("list", n, 2, elem=elem, where=where, bound="maxItems")
    if typ == "object":
        addl = s.get("additionalProperties")
        if isinstance(addl, dict):
            values = decl_of(addl, bool(addl.get("x-kubernetes-embedded-resource")), where + "[*]")
            if values is None:
                return None
            if s.get("maxProperties") is not None:
                return Decl("map", _nonneg(s["maxProperties"]), 2, elem=values, key=_STRING_KEY, where=where)
            n = (MAX_REQUEST_SIZE_BYTES - 2) // (values.min_size + 6)
            return Decl("map", n, 2, elem=values, key=_STRING_KEY, where=where, bound="maxProperties")
        required = set(s.get("required") or [])
        fields: dict[str, Decl] = {}
        min_size = 2
        for name, prop in (s.get("properties") or {}).items():
            child = decl_of(
                prop,
                bool(isinstance(prop, dict) and prop.get("x-kubernetes-embedded-resource")),
                f"{where}.{name}",
            )
            if child is None:
                continue
            escaped = escape_property(name)
            if escaped is not None:
                fields[escaped] = child
            if name in required and "default" not in prop:
                min_size += len(name) + child.min_size + 4
        return Decl("object", 0, min_size, fields=fields, where=where)
    if typ == "string":
        fmt = s.get("format", "")
        if fmt == "byte":
            if s.get("maxLength") is not None:
                return Decl("bytes", _nonneg(s["maxLength"]), _MIN_STRING_SIZE, where=where)
            return Decl("bytes", _max_string_length(s), _MIN_STRING_SIZE, where=where, bound="maxLength")
        if fmt == "duration":
            return Decl("duration", _max_string_length(s), _MIN_DURATION_SIZE_JSON, where=where)
        if fmt == "date":
            return Decl("timestamp", _max_string_length(s), _JSON_DATE_SIZE, where=where)
        if fmt == "date-time":
            return Decl("timestamp", _max_string_length(s), _MIN_DATETIME_SIZE_JSON, where=where)
        if s.get("maxLength") is not None:
            return Decl("string", _nonneg(s["maxLength"]) * 4, _MIN_STRING_SIZE, where=where)
        if s.get("enum"):
            longest = max((len(v.encode()) for v in s["enum"] if isinstance(v, str)), default=0)
            return Decl("string", longest, _MIN_STRING_SIZE, where=where)
        return Decl("string", _max_string_length(s), _MIN_STRING_SIZE, where=where, bound="maxLength")
    if typ == "boolean":
        return Decl("bool", 0, _MIN_BOOL_SIZE, where=where)
    if typ == "number":
        return Decl("double", 0, _MIN_NUMBER_SIZE, where=where)
    if typ == "integer":
        return Decl("int", 0, _MIN_NUMBER_SIZE, where=where)
    return None


# ------------------------------------------------------------------ the checked expression


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def _fields(buf: bytes) -> dict[int, list[Any]]:
    """A protobuf message's fields by number: varints as ints, fixed64 as 8 bytes, others as bytes."""
    out: dict[int, list[Any]] = {}
    i = 0
    while i < len(buf):
        tag, i = _varint(buf, i)
        number, wire = tag >> 3, tag & 7
        value: Any
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 1:
            value, i = buf[i : i + 8], i + 8
        elif wire == 2:
            n, i = _varint(buf, i)
            value, i = buf[i : i + n], i + n
        elif wire == 5:
            value, i = buf[i : i + 4], i + 4
        else:  # groups: not used by cel.expr
            raise ValueError(f"unexpected wire type {wire}")
        out.setdefault(number, []).append(value)
    return out


def _one(f: dict[int, list[Any]], n: int, default: Any = None) -> Any:
    v = f.get(n)
    return v[-1] if v else default


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


@dataclass
class _Expr:
    id: int
    kind: str  # const ident select call list map struct comp
    value: Any = None  # const: the Python value; ident: the name; select: field; call: function
    operand: _Expr | None = None  # select operand, call target
    test_only: bool = False
    args: list[_Expr] = field(default_factory=list)  # call args, list elements
    entries: list[tuple[_Expr, _Expr]] = field(default_factory=list)  # map entries
    # comprehension
    iter_var: str = ""
    iter_var2: str = ""
    accu_var: str = ""
    iter_range: _Expr | None = None
    accu_init: _Expr | None = None
    loop_condition: _Expr | None = None
    loop_step: _Expr | None = None
    result: _Expr | None = None


class _Bytes(bytes):
    """A bytes literal (distinct from a string's)."""


def _constant(buf: bytes) -> Any:
    f = _fields(buf)
    if 1 in f:
        return None
    if 2 in f:
        return bool(_one(f, 2))
    if 3 in f:
        return _signed(_one(f, 3))
    if 4 in f:
        return _one(f, 4)
    if 5 in f:
        return struct.unpack("<d", _one(f, 5))[0]
    if 6 in f:
        return _one(f, 6).decode("utf-8")
    if 7 in f:
        return _Bytes(_one(f, 7))
    return object()  # duration/timestamp constants: a size-1 literal


def _expr(buf: bytes) -> _Expr:
    f = _fields(buf)
    eid = _one(f, 2, 0)
    if 3 in f:
        return _Expr(eid, "const", _constant(_one(f, 3)))
    if 4 in f:
        return _Expr(eid, "ident", _one(_fields(_one(f, 4)), 1, b"").decode())
    if 5 in f:
        s = _fields(_one(f, 5))
        return _Expr(eid, "select", _one(s, 2, b"").decode(), _expr(_one(s, 1, b"")), bool(_one(s, 3, 0)))
    if 6 in f:
        c = _fields(_one(f, 6))
        target = _expr(_one(c, 1)) if 1 in c else None
        return _Expr(eid, "call", _one(c, 2, b"").decode(), target, args=[_expr(a) for a in c.get(3, [])])
    if 7 in f:
        lst = _fields(_one(f, 7))
        return _Expr(eid, "list", args=[_expr(a) for a in lst.get(1, [])])
    if 8 in f:
        st = _fields(_one(f, 8))
        entries = []
        for raw in st.get(2, []):
            en = _fields(raw)
            key = _expr(_one(en, 3)) if 3 in en else _Expr(0, "const", _one(en, 2, b"").decode())
            entries.append((key, _expr(_one(en, 4, b""))))
        return _Expr(eid, "struct" if 1 in st else "map", entries=entries)
    if 9 in f:
        c = _fields(_one(f, 9))
        return _Expr(
            eid,
            "comp",
            iter_var=_one(c, 1, b"").decode(),
            iter_var2=_one(c, 8, b"").decode(),
            accu_var=_one(c, 3, b"").decode(),
            iter_range=_expr(_one(c, 2, b"")),
            accu_init=_expr(_one(c, 4, b"")),
            loop_condition=_expr(_one(c, 5, b"")),
            loop_step=_expr(_one(c, 6, b"")),
            result=_expr(_one(c, 7, b"")),
        )
    return _Expr(eid, "unspecified")


@dataclass(frozen=True)
class _T:
    """A checked type: kind, type parameters, and a message or opaque name."""

    kind: str  # bool int uint double string bytes null duration timestamp list map object dyn optional opaque
    params: tuple[_T, ...] = ()
    name: str = ""


_DYN = _T("dyn")
_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}


def _type(buf: bytes) -> _T:
    f = _fields(buf)
    if 3 in f:
        return _T(_PRIMITIVES.get(_one(f, 3), "dyn"))
    if 4 in f:
        return _T(_PRIMITIVES.get(_one(f, 4), "dyn"))
    if 5 in f:
        return _T({2: "timestamp", 3: "duration"}.get(_one(f, 5), "dyn"))
    if 2 in f:
        return _T("null")
    if 6 in f:
        return _T("list", (_type(_one(_fields(_one(f, 6)), 1, b"")),))
    if 7 in f:
        m = _fields(_one(f, 7))
        return _T("map", (_type(_one(m, 1, b"")), _type(_one(m, 2, b""))))
    if 9 in f:
        return _T("object", name=_one(f, 9).decode())
    if 14 in f:
        a = _fields(_one(f, 14))
        name = _one(a, 1, b"").decode()
        params = tuple(_type(p) for p in a.get(2, []))
        return _T("optional" if name == "optional_type" else "opaque", params, name)
    if 11 in f:
        return _T("type")
    return _DYN


def _checked(serialized: bytes) -> tuple[_Expr, dict[int, _T]]:
    anyf = _fields(serialized)
    checked = _fields(_one(anyf, 2, b""))
    types = {}
    for raw in checked.get(3, []):
        entry = _fields(raw)
        types[_signed(_one(entry, 1, 0))] = _type(_one(entry, 2, b""))
    return _expr(_one(checked, 4, b"")), types


def _decl_type(d: Decl) -> _T:
    if d.kind == "list":
        return _T("list", (_decl_type(d.elem) if d.elem else _DYN,))
    if d.kind == "map":
        return _T("map", (_T("string"), _decl_type(d.elem) if d.elem else _DYN))
    return _T(d.kind)


# ------------------------------------------------------------------ the estimator (checker/cost.go)


@dataclass
class _Entry:
    container: str  # list map
    key: Range
    val: Range


@dataclass
class _Local:
    path: list[str] | None
    size: Range | None
    entry: _Entry | None


@dataclass
class _Node:
    """cel-go's AstNode: a path from `self`, a type, the expression and a size computed from it."""

    path: list[str] | None
    t: _T
    expr: _Expr | None
    size: Range | None


_ACCUMULATORS = ("__result__", "@result")
_K8S_TYPES_UNIT_EQUALITY = (
    "net.IP",
    "net.CIDR",
    "kubernetes.Quantity",
    "kubernetes.Semver",
    "kubernetes.URL",
)


class _Coster:
    def __init__(self, root: Decl, types: dict[int, _T], optional_old_self: bool) -> None:
        self.root = root
        self.types = types
        self.optional_old_self = optional_old_self
        self.paths: dict[int, list[str]] = {}
        self.locals: dict[str, list[_Local]] = {}
        self.sizes: dict[int, Range] = {}
        self.entries: dict[int, _Entry] = {}
        self.unbounded: dict[str, str] = {}  # schema path -> the keyword that would bound it

    # ---- sizes from the schema (the apiextensions sizeEstimator)

    def resolve(self, path: list[str] | None) -> Decl | None:
        if not path:
            return None
        node: Decl | None = self.root
        for name in path[1:]:
            if node is None:
                return None
            if name in ("@items", "@values"):
                node = node.elem
            elif name == "@keys":
                node = node.key
            else:
                node = node.fields.get(name)
        return node

    def estimate_size(self, node: _Node) -> Range | None:
        decl = self.resolve(node.path)
        if decl is None:
            return None
        if decl.bound:
            self.unbounded.setdefault(decl.where, decl.bound)
        return (0, decl.max_elements)

    # ---- bookkeeping

    def type_of(self, e: _Expr) -> _T:
        if (
            e.kind == "ident"
            and e.value == "oldSelf"
            and self.optional_old_self
            and not self.locals.get("oldSelf")
        ):
            return _T("optional", (_decl_type(self.root),))
        decl = self.resolve(self.path_of(e))
        if decl is not None:
            return _decl_type(decl)
        return self.types.get(e.id, _DYN)

    def path_of(self, e: _Expr) -> list[str] | None:
        """cel-go's getPath: None where Go has a nil path (no path known), which differs from []."""
        if e.kind == "ident":
            stack = self.locals.get(e.value)
            if stack:
                return None if stack[-1].path is None else list(stack[-1].path)
        got = self.paths.get(e.id)
        return None if got is None else list(got)

    def node(self, e: _Expr) -> _Node:
        path: list[str] | None = self.path_of(e)
        if path and path[0] in _ACCUMULATORS:
            path = None
        return _Node(path, self.type_of(e), e, self.compute_size(e))

    def compute_size(self, e: _Expr) -> Range | None:
        if e.id in self.sizes:
            return self.sizes[e.id]
        size = _expr_size(e)
        if size is not None:
            return size
        node = _Node(self.path_of(e), self.type_of(e), e, None)
        size = self.estimate_size(node)
        if size is not None:
            self.sizes[e.id] = size
            return size
        if _scalar(self.type_of(e)):
            return _fixed(1)
        if e.kind == "ident":
            stack = self.locals.get(e.value)
            if stack and stack[-1].size is not None:
                return stack[-1].size
        return None

    def size_or_unknown(self, e: _Expr | _Node) -> Range:
        size = self.compute_size(e) if isinstance(e, _Expr) else e.size
        return size if size is not None else _UNKNOWN

    def entry_size(self, e: _Expr) -> _Entry | None:
        if e.id in self.entries:
            return self.entries[e.id]
        if e.kind == "ident":
            stack = self.locals.get(e.value)
            if stack and stack[-1].entry is not None:
                return stack[-1].entry
        return None

    def set_size(self, e: _Expr, size: Range | None) -> None:
        if size is not None:
            self.sizes[e.id] = size

    def set_entry(self, e: _Expr, entry: _Entry | None) -> None:
        if entry is not None:
            self.entries[e.id] = entry

    def push(self, name: str, path: list[str] | None, size: Range | None, entry: _Entry | None) -> None:
        self.locals.setdefault(name, []).append(_Local(path, size, entry))

    def pop(self, name: str) -> None:
        self.locals[name].pop()

    def container(self, rng: _Expr, entry: _Entry | None) -> str:
        if entry is not None:
            return entry.container
        return self.type_of(rng).kind

    # ---- costs

    def cost(self, e: _Expr | None) -> Range:
        if e is None:
            return (0, 0)
        if e.kind == "const":
            return (0, 0)
        if e.kind == "ident":
            stack = self.locals.get(e.value)
            if stack:
                if stack[-1].path is not None:
                    self.paths[e.id] = list(stack[-1].path)
            else:
                self.paths[e.id] = [e.value]
            return _fixed(_SELECT_AND_IDENT)
        if e.kind == "select":
            return self.cost_select(e)
        if e.kind == "call":
            return self.cost_call(e)
        if e.kind == "list":
            total: Range = (0, 0)
            item: Range = (_MAX, 0) if e.args else (0, 0)
            for el in e.args:
                total = _radd(total, self.cost(el))
                item = _union(item, self.size_or_unknown(el))
            self.set_entry(e, _Entry("list", _fixed(1), item))
            return _radd(total, _fixed(_LIST_CREATE))
        if e.kind == "map":
            total = (0, 0)
            keys: Range = (_MAX, 0) if e.entries else (0, 0)
            vals: Range = (_MAX, 0) if e.entries else (0, 0)
            for k, v in e.entries:
                total = _radd(_radd(total, self.cost(k)), self.cost(v))
                keys = _union(keys, self.size_or_unknown(k))
                vals = _union(vals, self.size_or_unknown(v))
            self.set_entry(e, _Entry("map", keys, vals))
            return _radd(total, _fixed(_MAP_CREATE))
        if e.kind == "struct":
            total = (0, 0)
            for _, v in e.entries:
                total = _radd(total, self.cost(v))
            return _radd(total, _fixed(_STRUCT_CREATE))
        if e.kind == "comp":
            return self.cost_bind(e) if _is_bind(e) else self.cost_comprehension(e)
        return (0, 0)

    def cost_select(self, e: _Expr) -> Range:
        assert e.operand is not None
        if e.test_only:  # has(): Kubernetes keeps the presence test free (PresenceTestHasCost(false))
            return self.cost(e.operand)
        total = self.cost(e.operand)
        if self.type_of(e.operand).kind in ("map", "object"):
            total = _radd(total, _fixed(_SELECT_AND_IDENT))
        self.paths[e.id] = [*(self.path_of(e.operand) or []), e.value]
        return total

    def cost_comprehension(self, e: _Expr) -> Range:
        assert e.iter_range is not None and e.accu_init is not None
        total = _radd(self.cost(e.iter_range), self.cost(e.accu_init))
        self.push(
            e.accu_var,
            self.path_of(e.accu_init),
            self.compute_size(e.accu_init),
            self.entry_size(e.accu_init),
        )
        entry = self.entry_size(e.iter_range)
        container = self.container(e.iter_range, entry)
        rpath = self.path_of(e.iter_range) or []
        if e.iter_var2:
            self.push(
                e.iter_var,
                [*rpath, "@indices" if container == "list" else "@keys"],
                entry.key if entry else None,
                None,
            )
            self.push(
                e.iter_var2,
                [*rpath, "@items" if container == "list" else "@values"],
                entry.val if entry else None,
                None,
            )
        elif container == "list":
            self.push(e.iter_var, [*rpath, "@items"], entry.val if entry else None, None)
        else:
            self.push(e.iter_var, [*rpath, "@keys"], entry.key if entry else None, None)
        loop = self.cost(e.loop_condition)
        step = self.cost(e.loop_step)
        self.pop(e.iter_var)
        if e.iter_var2:
            self.pop(e.iter_var2)
        total = _radd(total, self.cost(e.result))
        self.pop(e.accu_var)
        count = self.size_or_unknown(e.iter_range)
        total = _radd(total, _rmul(count, _radd(step, loop)))
        init = e.accu_init
        if init.kind == "const":
            self.set_size(e, self.compute_size(init))
        elif init.kind in ("list", "map"):
            self.set_size(e, count)
            assert e.loop_step is not None
            self.set_entry(e, self.entry_size(e.loop_step))
        return total

    def cost_bind(self, e: _Expr) -> Range:
        assert e.accu_init is not None and e.result is not None
        total = _radd(self.cost(e.iter_range), self.cost(e.accu_init))
        self.push(
            e.accu_var,
            self.path_of(e.accu_init),
            self.compute_size(e.accu_init),
            self.entry_size(e.accu_init),
        )
        total = _radd(total, self.cost(e.result))
        self.pop(e.accu_var)
        self.set_size(e, self.compute_size(e.result))
        self.set_entry(e, self.entry_size(e.result))
        return total

    def cost_call(self, e: _Expr) -> Range:
        fn = e.value
        if fn == "dyn" and e.args:
            arg_cost = self.cost(e.args[0])
            self.set_size(e, self.compute_size(e.args[0]))
            self.set_entry(e, self.entry_size(e.args[0]))
            return _radd(_fixed(1), arg_cost)
        arg_costs = [self.cost(a) for a in e.args]
        args = [self.node(a) for a in e.args]
        total: Range = (0, 0)
        target: _Node | None = None
        if e.operand is not None:
            total = self.cost(e.operand)
            target = self.node(e.operand)
        overload = self._overload(fn, target, args)
        est, result_size = self.function_cost(e, fn, overload, target, args, arg_costs)
        if overload in ("index_list", "index_map") and e.args:
            entry = self.entry_size(e.args[0])
            result_size = entry.val if entry is not None else None
            self.paths[e.id] = [
                *(self.path_of(e.args[0]) or []),
                "@items" if overload == "index_list" else "@values",
            ]
        if result_size is None:
            result_size = self.compute_size(e)
        self.set_size(e, result_size)
        return _radd(total, est)

    def _overload(self, fn: str, target: _Node | None, args: list[_Node]) -> str:
        """cel-go's overload id for the calls its estimator prices specially; the function otherwise."""
        first = args[0].t.kind if args else ""
        if target is not None:
            first = target.t.kind
        simple = {
            "_&&_": "logical_and",
            "_||_": "logical_or",
            "_?_:_": "conditional",
            "_==_": "equals",
            "_!=_": "not_equals",
        }
        if fn in simple:
            return simple[fn]
        if target is not None and first in ("string", "dyn"):
            member = {
                "matches": "matches_string",
                "contains": "contains_string",
                "startsWith": "starts_with_string",
                "endsWith": "ends_with_string",
            }
            if fn in member:
                return member[fn]
        if fn == "_+_" and len(args) == 2:
            kinds = {args[0].t.kind, args[1].t.kind}
            for k in ("string", "bytes", "list"):
                if k in kinds:
                    return f"add_{k}"
        if fn in ("_<_", "_>_", "_<=_", "_>=_") and first in ("string", "bytes"):
            name = {"_<_": "less", "_>_": "greater", "_<=_": "less_equals", "_>=_": "greater_equals"}[fn]
            return f"{name}_{first}"
        if fn == "@in" and len(args) == 2:
            return "in_map" if args[1].t.kind == "map" else "in_list"
        if fn == "_[_]" and args:
            kind = args[0].t.kind
            return "index_map" if kind in ("map", "object") else "index_list" if kind == "list" else "index"
        if fn == "bytes" and first == "string":
            return "string_to_bytes"
        if fn == "string" and first == "bytes":
            return "bytes_to_string"
        if fn == "strings.quote":
            return "strings_quote"
        return fn

    def function_cost(
        self,
        e: _Expr,
        fn: str,
        overload: str,
        target: _Node | None,
        args: list[_Node],
        arg_costs: list[Range],
    ) -> tuple[Range, Range | None]:
        arg_sum: Range = (0, 0)
        for c in arg_costs:
            arg_sum = _radd(arg_sum, c)
        k8s = self.kubernetes_cost(fn, overload, target, args)
        if k8s is not None:
            return _radd(k8s[0], arg_sum), k8s[1]
        size = self.size_or_unknown
        if overload == "string_to_bytes" and len(args) == 1:
            sz = size(args[0])
            return _radd(_rfactor(sz, _STRING_TRAVERSAL), arg_sum), (sz[0], _mul(sz[1], 4))
        if overload == "bytes_to_string" and len(args) == 1:
            sz = size(args[0])
            return _radd(_rfactor(sz, _STRING_TRAVERSAL), arg_sum), (sz[0] // 4, sz[1])
        if overload == "strings_quote" and len(args) == 1:
            sz = size(args[0])
            return _radd(_rfactor(sz, _STRING_TRAVERSAL), arg_sum), (sz[0] + 2, _add(_mul(sz[1], 2), 2))
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return _radd(_rfactor(size(args[0]), _STRING_TRAVERSAL), arg_sum), None
        if overload == "in_list" and len(args) == 2:
            return _radd(_rfactor(size(args[1]), 1), arg_sum), None
        if overload == "matches_string" and target is not None and len(args) == 1:
            str_cost = _rfactor(_radd(size(target), (1, 1)), _STRING_TRAVERSAL)
            regex_cost = _rfactor(size(args[0]), _REGEX_STRING_LENGTH)
            return _radd(_rmul(str_cost, regex_cost), arg_sum), None
        if overload == "contains_string" and target is not None and len(args) == 1:
            str_cost = _rfactor(size(target), _STRING_TRAVERSAL)
            sub_cost = _rfactor(size(args[0]), _STRING_TRAVERSAL)
            return _radd(_rmul(str_cost, sub_cost), arg_sum), None
        if overload in ("logical_or", "logical_and"):
            lhs, rhs = arg_costs[0], arg_costs[1]
            return (lhs[0], _radd(lhs, rhs)[1]), None
        if overload == "conditional":
            sz = _union(size(args[1]), size(args[2]))
            a, b = self.entry_of(args[1]), self.entry_of(args[2])
            if a is not None and b is not None:
                self.set_entry(e, _Entry(a.container, _union(a.key, b.key), _union(a.val, b.val)))
            return _radd(arg_costs[0], _union(arg_costs[1], arg_costs[2])), sz
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            result = _radd(size(args[0]), size(args[1]))
            a, b = self.entry_of(args[0]), self.entry_of(args[1])
            if a is not None and b is not None:
                self.set_entry(e, _Entry(a.container, _union(a.key, b.key), _union(a.val, b.val)))
            if overload == "add_list":
                return _radd(_fixed(1), arg_sum), result
            return _radd(_rfactor(result, _STRING_TRAVERSAL), arg_sum), result
        if overload in (
            "equals",
            "not_equals",
            "less_string",
            "greater_string",
            "less_equals_string",
            "greater_equals_string",
            "less_bytes",
            "greater_bytes",
            "less_equals_bytes",
            "greater_equals_bytes",
        ):
            lhs, rhs = size(args[0]), size(args[1])
            smallest = min(lhs[1], rhs[1])
            return _radd(_rfactor((1 if smallest > 0 else 0, smallest), _STRING_TRAVERSAL), arg_sum), None
        return _radd(_fixed(1), arg_sum), None

    def entry_of(self, node: _Node) -> _Entry | None:
        return self.entry_size(node.expr) if node.expr is not None else None

    def list_element(self, node: _Node) -> _Node | None:
        if not node.t.params or node.t.kind not in ("list", "map"):
            return None
        path = [*node.path, "@items"] if node.path is not None else None
        return _Node(path, node.t.params[0], None, None)

    def k8s_size(self, node: _Node) -> Range:
        if node.size is not None:
            return node.size
        got = self.estimate_size(node)
        return got if got is not None else _UNKNOWN

    def kubernetes_cost(
        self, fn: str, overload: str, target: _Node | None, args: list[_Node]
    ) -> tuple[Range, Range | None] | None:
        """apiserver's `library.CostEstimator.EstimateCallCost`: the Kubernetes libraries' functions."""
        size = self.k8s_size
        one = _fixed(1)
        if (
            fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes")
            and target is not None
        ):
            el_cost = one
            el = self.list_element(target)
            if el is not None:
                if el.t.kind in ("string", "bytes"):
                    el_cost = _radd(el_cost, _rfactor(size(el), _STRING_TRAVERSAL))
                return _rmul(size(target), el_cost), None
            if fn == "includes":
                return _rmul(size(target), el_cost), None
            return _rfactor(size(target), _STRING_TRAVERSAL), None
        if fn in ("url", "jsonpatch.escapeKey") and len(args) == 1:
            sz = size(args[0])
            return _rfactor(sz, _STRING_TRAVERSAL), sz
        if fn in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            sz = size(target)
            return _rfactor(sz, _STRING_TRAVERSAL), sz
        if fn == "replace" and target is not None and len(args) >= 2:
            return self._replace(size(target), size(args[0]), size(args[1]))
        if fn == "split" and target is not None:
            sz = size(target)
            most = sz[1]
            if len(args) > 1 and args[1].expr is not None and args[1].expr.kind == "const":
                v = args[1].expr.value
                if isinstance(v, int) and not isinstance(v, bool):
                    most = v % (1 << 64)
            return _rfactor(sz, 2 * _STRING_TRAVERSAL), (0, most)
        if fn == "join" and target is not None:
            sz = (0, 0)
            n = size(target)
            el = self.list_element(target)
            if el is not None:
                sz = _rmul(n, size(el))
            if args:
                sep = size(args[0])
                sz = _radd(sz, _rmul(sep, (max(n[0] - 1, 0), max(n[1] - 1, 0))))
            return _rfactor(sz, _STRING_TRAVERSAL), sz
        if fn in ("find", "findAll") and target is not None and args:
            sz = size(target)
            str_cost = _rfactor(_radd(sz, (1, 1)), _STRING_TRAVERSAL)
            regex_cost = _rfactor(size(args[0]), _REGEX_STRING_LENGTH)
            return _rmul(str_cost, regex_cost), (0, sz[1])
        if fn in ("cidr", "isIP", "isCIDR") and args:
            return _rfactor(size(args[0]), _STRING_TRAVERSAL), None
        if fn == "ip":
            if overload == "cidr_ip" or (target is not None and target.t.name == "net.CIDR"):
                return one, None
            if args:
                return _rfactor(size(args[0]), _STRING_TRAVERSAL), None
        if fn == "ip.isCanonical" and args:
            return _rfactor(size(args[0]), 2 * _STRING_TRAVERSAL), None
        if fn in (
            "masked",
            "prefixLength",
            "family",
            "isUnspecified",
            "isLoopback",
            "isLinkLocalMulticast",
            "isLinkLocalUnicast",
            "isGlobalUnicast",
            "format.named",
            "sign",
            "asInteger",
            "isInteger",
            "asApproximateFloat",
            "isGreaterThan",
            "isLessThan",
            "compareTo",
            "add",
            "sub",
            "major",
            "minor",
            "patch",
            "getScheme",
            "getHostname",
            "getHost",
            "getPort",
            "getEscapedPath",
            "getQuery",
        ):
            return one, None
        if fn in ("containsIP", "containsCIDR") and args:
            ip: Range = (4, 16)
            cost = _rfactor(_radd(ip, ip), _STRING_TRAVERSAL)
            if fn == "containsCIDR":
                cost = _radd(_radd(cost, _rfactor(ip, _STRING_TRAVERSAL)), one)
            if args[0].t.kind == "string":
                cost = _radd(cost, _rfactor(size(args[0]), _STRING_TRAVERSAL))
            return cost, None
        if fn in ("quantity", "isQuantity", "semver", "isSemver") and args:
            return _rfactor(size(args[0]), _STRING_TRAVERSAL), None
        if fn == "validate" and args:
            sz = _rfactor(size(args[0]), _STRING_TRAVERSAL)
            return _rfactor(sz, _MAX_NAME_FORMAT_REGEX_SIZE * _REGEX_STRING_LENGTH), None
        same = len(args) == 2 and args[0].t == args[1].t
        if fn == "_==_" and same and args[0].t.name in _K8S_TYPES_UNIT_EQUALITY:
            return one, None
        return None

    @staticmethod
    def _replace(sz: Range, old: Range, new: Range) -> tuple[Range, Range]:
        count_max = retained_max = count_min = retained_min = 0
        if old[0] == 0:
            count_max = sz[1] + 1 if sz[1] < _MAX else sz[1]
            retained_max = sz[1]
        elif new[1] <= old[0]:
            retained_max = sz[1]
        else:
            count_max = math.ceil(sz[1] / old[0])
        if old[1] == 0:
            count_min = sz[0] + 1 if sz[0] < _MAX else sz[0]
            retained_min = sz[0]
        elif old[1] <= new[0]:
            retained_min = sz[0]
        else:
            count_min = math.ceil(sz[0] / old[1])
        result = _radd(_rmul((count_min, count_max), new), (retained_min, retained_max))
        return _rfactor(sz, 2 * _STRING_TRAVERSAL), result


def _expr_size(e: _Expr) -> Range | None:
    if e.kind == "const":
        v = e.value
        if isinstance(v, _Bytes):
            return _fixed(len(v))
        if isinstance(v, str):
            return _fixed(len(v))
        return _fixed(1)
    if e.kind == "list":
        return _fixed(len(e.args))
    if e.kind == "map":
        return _fixed(len(e.entries))
    return None


def _scalar(t: _T) -> bool:
    if t.kind in ("bool", "double", "duration", "int", "timestamp", "uint"):
        return True
    return t.kind == "optional" and bool(t.params) and _scalar(t.params[0])


def _is_bind(e: _Expr) -> bool:
    r, c = e.iter_range, e.loop_condition
    return (
        r is not None
        and r.kind == "list"
        and not r.args
        and c is not None
        and c.kind == "const"
        and c.value is False
        and e.accu_var != "__result__"
    )


# ------------------------------------------------------------------ rules and schemas


@dataclass(frozen=True)
class RuleCost:
    """One rule's estimate: `cost` is cel-go's maximum, `cardinality` how often it may run (from the
    enclosing lists and maps, else from the request size), `total` their product as the server
    compares it with the budget; `bounds` the schema paths a bound would lower, with the keyword."""

    cost: int
    cardinality: int
    total: int
    bounds: tuple[tuple[str, str], ...] = ()


def _estimate(
    expression: str, schema: Schema, root: bool, optional_old_self: bool, *, message: bool = False
) -> tuple[int, dict[str, str]] | None:
    from pyscaffold_op.apiextensions import cel

    decl = decl_of(schema, root)
    if decl is None:
        return None
    try:
        if message:
            program = cel.compile_message_expression(expression, schema, root=root)
        else:
            program = cel.compile_rule(expression, schema, root=root, optional_old_self=optional_old_self)
    except cel.CompileError:
        return None
    expr, types = _checked(program._compiled.serialize())
    if optional_old_self and expr.kind == "comp" and expr.accu_var == "oldSelf" and expr.result is not None:
        expr = expr.result  # pyop binds oldSelf to an optional; the server declares it so
    coster = _Coster(decl, types, optional_old_self)
    low_high = coster.cost(expr)
    return low_high[1], coster.unbounded


def rule_cost(
    rule: str,
    schema: Schema,
    *,
    root: bool = False,
    optional_old_self: bool = False,
    cardinality: int | None = None,
) -> RuleCost | None:
    """The estimate for `rule` on the node `schema`; None when it does not compile. `cardinality` is
    the product of the enclosing lists' and maps' bounds, None when one of them is unbounded."""
    got = _estimate(rule, schema, root, optional_old_self)
    if got is None:
        return None
    cost, unbounded = got
    decl = decl_of(schema, root)
    assert decl is not None
    if cardinality is None:
        cardinality = MAX_REQUEST_SIZE_BYTES // (decl.min_size + 1)
    total = 0 if cost == 0 else min(cost * cardinality, _MAX)
    return RuleCost(cost, cardinality, total, tuple(sorted(unbounded.items())))


def cost_error_message(name: str, cost: int, limit: int) -> str:
    """The server's `getCostErrorMessage`."""
    factor = float(cost) / float(limit)
    if factor > 100.0:
        shown = "more than 100x"
    elif factor < 1.5:
        shown = f"{factor:f}x"
    else:
        shown = f"{factor:.1f}x"
    return (
        f"{name} exceeds budget by factor of {shown} (try simplifying the rule, or adding maxItems, "
        "maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )


@dataclass
class CostError:
    """A cost error: the field, the server's message, and pyop's advice (the rule and the bounds)."""

    field: str
    message: str
    advice: str = ""


def _advice(rule: str, bounds: tuple[tuple[str, str], ...], unbounded_parents: list[tuple[str, str]]) -> str:
    wanted = [f"{kw} on {where or '(root)'}" for where, kw in [*unbounded_parents, *bounds]]
    seen: list[str] = []
    for w in wanted:
        if w not in seen:
            seen.append(w)
    text = f"rule {rule!r}"
    if seen:
        text += "; bound it with " + ", ".join(seen)
    return text


def schema_cost_errors(schema: Schema, path: str = "openAPIV3Schema") -> list[CostError]:
    """The per-rule and per-schema cost errors the server reports for one version's schema."""
    errors: list[CostError] = []
    total = 0
    expensive: list[tuple[int, str]] = []

    def observe(where: str, cost: int) -> None:
        nonlocal total
        total = min(total + cost, _MAX)
        if cost < STATIC_ESTIMATED_CRD_COST_LIMIT // 100:
            return
        expensive.append((cost, where))
        expensive.sort(key=lambda item: -item[0])
        del expensive[4:]

    def walk(
        s: Any, here: str, where: str, root: bool, cardinality: int | None, parents: list[tuple[str, str]]
    ) -> None:
        if not isinstance(s, dict):
            return
        for index, rule in enumerate(s.get("x-kubernetes-validations") or []):
            if not isinstance(rule, dict) or not str(rule.get("rule", "")).strip():
                continue
            text = str(rule["rule"])
            field_ = f"{here}.x-kubernetes-validations[{index}].rule"
            got = rule_cost(
                text,
                s,
                root=root,
                optional_old_self=bool(rule.get("optionalOldSelf")),
                cardinality=cardinality,
            )
            if got is not None:
                if got.total > STATIC_ESTIMATED_COST_LIMIT:
                    errors.append(
                        CostError(
                            field_,
                            "Forbidden: "
                            + cost_error_message(
                                "estimated rule cost", got.total, STATIC_ESTIMATED_COST_LIMIT
                            ),
                            _advice(text, tuple((where + w, k) for w, k in got.bounds), parents),
                        )
                    )
                observe(field_, got.total)
            expression = rule.get("messageExpression")
            if isinstance(expression, str) and expression.strip():
                est = _estimate(expression, s, root, False, message=True)
                if est is not None:
                    mfield = f"{here}.x-kubernetes-validations[{index}].messageExpression"
                    if est[0] > STATIC_ESTIMATED_COST_LIMIT:
                        errors.append(
                            CostError(
                                mfield,
                                "Forbidden: "
                                + cost_error_message(
                                    "estimated messageExpression cost", est[0], STATIC_ESTIMATED_COST_LIMIT
                                ),
                                f"messageExpression {expression!r}",
                            )
                        )
                    observe(mfield, est[0])
        typ = s.get("type")
        child_card: int | None = cardinality
        child_parents = parents
        addl = s.get("additionalProperties")
        if typ == "array" or (typ == "object" and addl is not None and addl is not False):
            keyword = "maxItems" if typ == "array" else "maxProperties"
            bound = s.get(keyword)
            if bound is None:
                child_card = None
                child_parents = [*parents, (where or "(root)", keyword)]
            elif cardinality is not None:
                child_card = min(cardinality * max(int(bound), 0), _MAX)
        for name, prop in (s.get("properties") or {}).items():
            embedded = isinstance(prop, dict) and bool(prop.get("x-kubernetes-embedded-resource"))
            walk(prop, f"{here}.properties[{name}]", f"{where}.{name}", embedded, child_card, child_parents)
        if isinstance(s.get("items"), dict):
            items = s["items"]
            walk(
                items,
                f"{here}.items",
                f"{where}[*]",
                bool(items.get("x-kubernetes-embedded-resource")),
                child_card,
                child_parents,
            )
        if isinstance(addl, dict):
            walk(
                addl,
                f"{here}.additionalProperties",
                f"{where}[*]",
                bool(addl.get("x-kubernetes-embedded-resource")),
                child_card,
                child_parents,
            )

    walk(schema, path, "", True, 1, [])
    if total > STATIC_ESTIMATED_CRD_COST_LIMIT:
        for _, where in expensive:
            errors.append(
                CostError(
                    where,
                    "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire "
                    "OpenAPIv3 schema",
                )
            )
        errors.append(
            CostError(
                path,
                "Forbidden: "
                + cost_error_message(
                    "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                    total,
                    STATIC_ESTIMATED_CRD_COST_LIMIT,
                ),
                "lower the cost of the rules named above, or bound the lists, maps and strings they reach",
            )
        )
    return errors
