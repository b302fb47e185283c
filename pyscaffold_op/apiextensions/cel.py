"""CEL for `x-kubernetes-validations`, on cel-expr-python (Google's cel-cpp), as the API server runs it.

A rule is compiled once per (rule, schema type) in an environment like the server's: `self` (and
`oldSelf`) typed from the structural schema (`decl_type`), the standard library, the strings
(version 2), optional and bindings extensions, and the Kubernetes libraries the library lacks
(`cellibs`). Values are handed over converted the way the server converts them (`to_cel`): numbers as
doubles, `date-time` strings as timestamps, property names escaped (`foo-bar` is `self.foo__dash__bar`).

    program = compile_rule(rule, schema, root=...)   # CompileError: the server's "compilation failed: ..."
    program.run(value, old)                          # the result; EvalError: the evaluation error text

cel-expr-python is imported on first use, so nothing that merely imports apiextensions pays for it.
"""

from __future__ import annotations

import base64
import datetime
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = [
    "MISSING",
    "CompileError",
    "EvalError",
    "Program",
    "compile_message_expression",
    "compile_rule",
    "escape_property",
    "to_cel",
    "uses_old_self",
]

Schema = dict[str, Any]
MISSING: Any = object()
"""No old value (a create, or an item without a correlated old item)."""


class CompileError(Exception):
    """The rule does not compile; `str()` is the server's detail (`compilation failed: ERROR: ...`)."""


class EvalError(Exception):
    """The rule failed to evaluate (no such key, division by zero, ...), in cel-go's words where known."""


_RESERVED = frozenset(
    {
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    }
)
_ESCAPABLE = re.compile(r"[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*")
_STRINGS = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")
_OLD_SELF = re.compile(r"\boldSelf\b")
_CEL_BIND = re.compile(r"\bcel\s*\.\s*bind\b")


def escape_property(name: str) -> str | None:
    """A property name as CEL sees it (apiserver's `cel.Escape`), or None when it cannot be accessed."""
    if name in _RESERVED:
        return f"__{name}__"
    if not _ESCAPABLE.fullmatch(name):
        return None
    return (
        name.replace("__", "__underscores__")
        .replace(".", "__dot__")
        .replace("-", "__dash__")
        .replace("/", "__slash__")
    )


def uses_old_self(expression: str) -> bool:
    """Whether the rule refers to `oldSelf` (a transition rule), outside string literals."""
    return bool(_OLD_SELF.search(_STRINGS.sub("", expression)))


# ------------------------------------------------------------------ types, from the structural schema


def _type_of(s: Schema | None, root: bool = False, typed: bool = True) -> Any:
    from cel_expr_python import cel

    T = cel.Type
    if not isinstance(s, dict) or s.get("x-kubernetes-int-or-string"):
        return T.DYN
    typ = s.get("type")
    if typ == "string":
        if not typed:
            return T.STRING
        return {"byte": T.BYTES, "duration": T.DURATION, "date": T.TIMESTAMP, "date-time": T.TIMESTAMP}.get(
            s.get("format", ""), T.STRING
        )
    if typ == "integer":
        return T.INT
    if typ == "number":
        return T.DOUBLE
    if typ == "boolean":
        return T.BOOL
    if typ == "array":
        return T.List(_type_of(s.get("items"), typed=typed) if isinstance(s.get("items"), dict) else T.DYN)
    if typ == "object":
        addl = s.get("additionalProperties")
        if isinstance(addl, dict) and not s.get("properties"):
            return T.Map(T.STRING, _type_of(addl, typed=typed))
        if s.get("properties") or root or s.get("x-kubernetes-embedded-resource"):
            # an object type; cel-expr-python declares no structs without protobuf descriptors, so its
            # fields are dyn (field names are not checked at compile time)
            return T.Map(T.STRING, T.DYN)
        return T.DYN if s.get("x-kubernetes-preserve-unknown-fields") else T.Map(T.STRING, T.DYN)
    return T.DYN


def decl_type(schema: Schema | None, *, root: bool = False) -> Any:
    """The CEL type of `self` for a schema node (apiserver's `SchemaDeclType`, objects as maps of dyn)."""
    return _type_of(schema, root)


# ------------------------------------------------------------------ values, converted like the server


def to_cel(value: Any, s: Schema | None, *, root: bool = False) -> Any:
    """`value` as the rule sees it: nulls dropped, numbers as doubles, property names escaped, at the
    root only name/generateName of metadata; `date`/`date-time`/`duration`/`byte` strings as timestamps,
    durations and bytes where the type of `self` says so (see `_convert`)."""
    return _convert(value, s, root, typed=True)


def _convert(value: Any, s: Schema | None, root: bool, typed: bool) -> Any:
    # `typed`: whether cel-expr-python converts this value by its declared type. Object fields are dyn
    # (no struct types), and it hands dyn values over only as JSON-like values, so formatted strings
    # below an object field stay strings.
    if value is None or not isinstance(s, dict):
        return value
    typ = s.get("type")
    if isinstance(value, dict):
        props = s.get("properties") or {}
        addl = s.get("additionalProperties")
        map_values = isinstance(addl, dict) and not props
        out: dict[str, Any] = {}
        for k, v in value.items():
            if v is None:
                continue
            if (root or s.get("x-kubernetes-embedded-resource")) and k == "metadata" and isinstance(v, dict):
                out[k] = {m: v[m] for m in ("name", "generateName") if m in v}
                continue
            if k in props:
                name = escape_property(k)
                if name is not None:
                    out[name] = _convert(v, props[k], False, typed=False)
            else:
                out[k] = _convert(v, addl if isinstance(addl, dict) else None, False, typed and map_values)
        return out
    if isinstance(value, list):
        items = s.get("items")
        return [
            _convert(v, items if isinstance(items, dict) else None, False, typed)
            for v in value
            if v is not None
        ]
    if typ == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if typed and typ == "string" and isinstance(value, str) and not s.get("x-kubernetes-int-or-string"):
        return _formatted(value, s.get("format", ""))
    return value


def _formatted(value: str, fmt: str) -> Any:
    try:
        if fmt == "byte":
            return base64.b64decode(value, validate=True)
        if fmt == "duration":
            import durationpy

            return durationpy.from_str(value)
        if fmt in ("date", "date-time"):
            parsed = datetime.datetime.fromisoformat(value.replace("z", "Z"))
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)
    except (ValueError, TypeError, Exception) as err:  # durationpy raises its own exception type
        raise EvalError(f"invalid {fmt} value {value!r}: {err}") from None
    return value


# ------------------------------------------------------------------ environments and programs


@lru_cache(maxsize=64)
def _env(self_type_name: str, optional_old_self: bool) -> Any:
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

    from pyscaffold_op.apiextensions import cellibs, celtypes

    self_type = _TYPES[self_type_name]
    variables = {"self": self_type, "oldSelf": self_type}
    if optional_old_self:  # oldSelf is bound to an optional by a cel.bind around the rule
        variables = {"self": self_type, "__oldSelfValue": self_type, "__oldSelfPresent": cel.Type.BOOL}
    libraries = cellibs.libraries()
    config = {"config": cel.NewEnvConfigFromYaml(libraries.config_yaml)} if libraries.config_yaml else {}
    # the Kubernetes libraries come last: `indexOf` adds list overloads to the strings library's
    # the server's environment has no bindings library (`cel.bind` is an undeclared reference); pyop
    # binds oldSelf with it for optionalOldSelf rules only, and refuses `cel.bind` in those (_compile)
    bindings = [ext_bindings.ExtBindings()] if optional_old_self else []
    return cel.NewEnv(
        descriptor_pool=celtypes.pool(),
        variables=variables,
        extensions=[
            ext_strings.ExtStrings(2),
            ext_optional.ExtOptional(),
            *bindings,
            cel.CelExtension("kubernetes", libraries.functions),
        ],
        function_impls=libraries.function_impls,
        **config,
    )


_TYPES: dict[str, Any] = {}
_OPTIONAL_OLD_SELF = (
    "cel.bind(oldSelf, __oldSelfPresent ? optional.of(__oldSelfValue) : optional.none(), {rule})"
)


def _message(err: Exception) -> str:
    """cel-cpp's status text as cel-go's issues print: without the status code around it."""
    text = str(err)
    text = re.sub(r"^[A-Z_]+: ", "", text)
    return re.sub(r" \[[A-Z_]+\]$", "", text)


# What a real server compiles and the emulator cannot (docs/envtest.md), named after the compiler's
# own message so the failure is not taken for a mistake in the rule.
_LIMITS = (
    (
        "undeclared reference to 'format'",
        "the Kubernetes format library is not emulated: its functions return optionals, which "
        "cel-expr-python functions cannot",
    ),
    (
        "found no matching overload for 'string' applied to '(net.CIDR)'",
        "string() of a cidr is not emulated (cidr(...).ip() and .prefixLength() are)",
    ),
)


def _limit_note(message: str) -> str:
    notes = [note for found, note in _LIMITS if found in message]
    return f" (pyop envtest: {'; '.join(notes)}; see docs/envtest.md)" if notes else ""


@dataclass(frozen=True)
class Program:
    """A compiled rule or messageExpression."""

    expression: str
    uses_old_self: bool
    optional_old_self: bool
    _compiled: Any
    _self_type: str

    def run(self, value: Any, old: Any = MISSING) -> Any:
        """The plain result; EvalError when the evaluation fails. `value` and `old` are CEL values
        (`to_cel`); `old` is MISSING on creates."""
        if self.optional_old_self:
            data = {"self": value, "__oldSelfValue": value if old is MISSING else old}
            data["__oldSelfPresent"] = old is not MISSING
        else:
            data = {"self": value, "oldSelf": value if old is MISSING else old}
        try:
            result = self._compiled.eval(data=data)
        except RuntimeError as err:
            raise EvalError(_eval_message(_message(err))) from None
        if result.type().name() == "ERROR":
            raise EvalError(_eval_message(str(result.value())))
        return result.plain_value()


def _eval_message(text: str) -> str:
    text = re.sub(r"^[A-Z_]+: ", "", text)
    found = re.match(r'Key not found in map : "?(.*?)"?$', text)
    if found:
        return f"no such key: {found.group(1)}"
    if text == "divide by zero":
        return "division by zero"
    if text.startswith("No matching overloads found"):
        return "no such overload"
    return text


def _compile(expression: str, schema: Schema | None, root: bool, optional_old_self: bool) -> Program:
    self_type = decl_type(schema, root=root)
    name = self_type.name()
    _TYPES.setdefault(name, self_type)
    env = _env(name, optional_old_self)  # a failure here is ours, not the rule's: it propagates
    source = _OPTIONAL_OLD_SELF.format(rule=expression) if optional_old_self else expression
    if optional_old_self and _CEL_BIND.search(_STRINGS.sub('""', expression)):
        env = _env(name, False)  # no bindings: fails on `cel` as the server does
        source = expression
    try:
        compiled = env.compile(source)
    except RuntimeError as failure:
        err = failure
        if optional_old_self:  # report positions in the rule as written
            try:
                _env(name, False).compile(expression)
            except RuntimeError as plain:
                err = plain
        raise CompileError(_message(err) + _limit_note(_message(err))) from None
    return Program(expression, uses_old_self(expression), optional_old_self, compiled, name)


@lru_cache(maxsize=4096)
def _cached(key: tuple[str, str, bool, bool, str]) -> Program | CompileError:
    import json

    expression, schema_json, root, optional_old_self, want = key
    schema = json.loads(schema_json)
    try:
        program = _compile(expression, schema, root, optional_old_self)
    except CompileError as err:
        prefix = "messageExpression compilation failed" if want == "string" else "compilation failed"
        return CompileError(f"{prefix}: {err}")
    out = program._compiled.return_type().name()
    if want == "bool" and out not in ("BOOL", "DYN"):
        return CompileError("cel expression must evaluate to a bool")
    if want == "string" and out not in ("STRING", "DYN"):
        return CompileError("messageExpression must evaluate to a string")
    return program


_KEYS: dict[int, tuple[Any, str]] = {}


def _schema_key(schema: Schema | None) -> str:
    """Only what types `self` matters to the compiler: the schema without nested rules and docs
    (memoized per schema object: the emulator asks for the same nodes on every write)."""
    import json

    hit = _KEYS.get(id(schema))
    if hit is None or hit[0] is not schema:
        hit = (schema, json.dumps(_typing_part(schema), sort_keys=True))
        _KEYS[id(schema)] = hit
    return hit[1]


def _typing_part(s: Any) -> Any:
    if not isinstance(s, dict):
        return None
    out = {k: s[k] for k in ("type", "format", "x-kubernetes-int-or-string") if k in s}
    for k in ("x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource"):
        if s.get(k):
            out[k] = True
    if isinstance(s.get("items"), dict):
        out["items"] = _typing_part(s["items"])
    if isinstance(s.get("additionalProperties"), dict):
        out["additionalProperties"] = _typing_part(s["additionalProperties"])
    if s.get("properties"):
        out["properties"] = {k: _typing_part(v) for k, v in s["properties"].items()}
    return out


def compile_rule(
    rule: str, schema: Schema | None, *, root: bool = False, optional_old_self: bool = False
) -> Program:
    """The compiled rule (cached); CompileError with the server's detail when it does not compile or
    does not evaluate to a bool."""
    got = _cached((rule, _schema_key(schema), root, optional_old_self, "bool"))
    if isinstance(got, CompileError):
        raise got
    return got


def compile_message_expression(expression: str, schema: Schema | None, *, root: bool = False) -> Program:
    """The compiled messageExpression; CompileError when it does not compile or is not a string."""
    got = _cached((expression, _schema_key(schema), root, False, "string"))
    if isinstance(got, CompileError):
        raise got
    return got
