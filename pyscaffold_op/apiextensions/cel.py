"""A small evaluator for the CEL rules CRDs carry in `x-kubernetes-validations`.

It covers what kubebuilder `XValidation` markers usually say: field access on `self`/`oldSelf`,
literals, arithmetic, comparisons, `&&`/`||`/`!`, `?:`, `in`, `has()`, `size()`, string methods
(`startsWith`, `endsWith`, `contains`, `matches`), and the `all`/`exists`/`exists_one`/`map`/`filter`
macros. Anything else raises `Unsupported`, and the rule is skipped (never a false rejection).
`evaluate()` is the whole interface: a CEL library can replace this module behind it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pyscaffold_op.apiextensions.patterns import search


class Unsupported(Exception):
    """The expression uses CEL the emulator does not evaluate."""


class CelError(Exception):
    """A runtime error in the rule (no such key, wrong types): the real server rejects the object."""


_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+\.\d+|\d+)(?P<suffix>u)?|(?P<str>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')"
    r"|(?P<op>&&|\|\||==|!=|<=|>=|[-+*/%<>!?:.,()\[\]{}])|(?P<id>[A-Za-z_][A-Za-z0-9_]*))"
)
_MISSING = object()


def _tokens(src: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    pos = 0
    src = src.strip()
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if not m or m.end() == pos:
            raise Unsupported(f"cannot tokenize at {src[pos : pos + 10]!r}")
        pos = m.end()
        if m["num"] is not None:
            out.append(("lit", float(m["num"]) if "." in m["num"] else int(m["num"])))
        elif m["str"] is not None:
            out.append(("lit", bytes(m["str"][1:-1], "utf-8").decode("unicode_escape")))
        elif m["op"] is not None:
            out.append(("op", m["op"]))
        else:
            word = m["id"]
            if word in ("true", "false"):
                out.append(("lit", word == "true"))
            elif word == "null":
                out.append(("lit", None))
            elif word == "in":
                out.append(("op", "in"))
            else:
                out.append(("id", word))
    out.append(("end", None))
    return out


Node = Callable[[dict[str, Any]], Any]


class _Parser:
    def __init__(self, src: str) -> None:
        self.toks = _tokens(src)
        self.i = 0

    def peek(self) -> tuple[str, Any]:
        return self.toks[self.i]

    def take(self, kind: str | None = None, value: Any = None) -> tuple[str, Any]:
        tok = self.toks[self.i]
        if (kind and tok[0] != kind) or (value is not None and tok[1] != value):
            raise Unsupported(f"expected {value or kind}, got {tok[1]!r}")
        self.i += 1
        return tok

    def at(self, value: str) -> bool:
        return self.peek() == ("op", value)

    def parse(self) -> Node:
        node = self.ternary()
        self.take("end")
        return node

    def ternary(self) -> Node:
        cond = self.binary(0)
        if self.at("?"):
            self.take()
            a = self.ternary()
            self.take("op", ":")
            b = self.ternary()
            return lambda env: a(env) if _truth(cond(env)) else b(env)
        return cond

    _PREC = [("||",), ("&&",), ("==", "!=", "<", "<=", ">", ">=", "in"), ("+", "-"), ("*", "/", "%")]

    def binary(self, level: int) -> Node:
        if level == len(self._PREC):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek()[0] == "op" and self.peek()[1] in self._PREC[level]:
            op = self.take()[1]
            right = self.binary(level + 1)
            left = _binop(op, left, right)
        return left

    def unary(self) -> Node:
        if self.at("!"):
            self.take()
            inner = self.unary()
            return lambda env: not _truth(inner(env))
        if self.at("-"):
            self.take()
            inner = self.unary()
            return lambda env: -_num(inner(env))
        return self.postfix(self.primary())

    def primary(self) -> Node:
        kind, value = self.take()
        if kind == "lit":
            return lambda env, v=value: v
        if kind == "op" and value == "(":
            node = self.ternary()
            self.take("op", ")")
            return node
        if kind == "op" and value == "[":
            items = self.args("]")
            return lambda env: [f(env) for f in items]
        if kind == "id":
            if self.at("("):
                return self.function(value)
            return lambda env, name=value: _var(env, name)
        raise Unsupported(f"unexpected {value!r}")

    def args(self, close: str) -> list[Node]:
        items: list[Node] = []
        while not self.at(close):
            items.append(self.ternary())
            if not self.at(close):
                self.take("op", ",")
        self.take("op", close)
        return items

    def function(self, name: str) -> Node:
        self.take("op", "(")
        if name == "has":
            target = self.postfix(self.primary(), has=True)
            self.take("op", ")")
            return target
        args = self.args(")")
        fn = _FUNCS.get(name)
        if fn is None:
            raise Unsupported(f"function {name}()")
        return lambda env: fn(*[a(env) for a in args])

    def postfix(self, node: Node, has: bool = False) -> Node:
        while True:
            if self.at("."):
                self.take()
                name = self.take("id")[1]
                if self.at("("):
                    node = self.method(node, name)
                elif has and not (self.at(".") or self.at("[")):
                    return lambda env, base=node, key=name: _has(base(env), key)
                else:
                    node = (lambda base, key: lambda env: _field(base(env), key))(node, name)
            elif self.at("["):
                self.take()
                idx = self.ternary()
                self.take("op", "]")
                node = (lambda base, ix: lambda env: _index(base(env), ix(env)))(node, idx)
            else:
                if has:
                    raise Unsupported("has() needs a field selection")
                return node

    def method(self, target: Node, name: str) -> Node:
        self.take("op", "(")
        if name in ("all", "exists", "exists_one", "map", "filter"):
            var = self.take("id")[1]
            self.take("op", ",")
            body = self.ternary()
            self.take("op", ")")
            return _macro(name, target, var, body)
        args = self.args(")")
        fn = _METHODS.get(name)
        if fn is None:
            raise Unsupported(f"method {name}()")
        return lambda env: fn(target(env), *[a(env) for a in args])


def _truth(v: Any) -> bool:
    if not isinstance(v, bool):
        raise CelError("no matching overload: expected bool")
    return v


def _num(v: Any) -> Any:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise CelError("no matching overload: expected a number")
    return v


def _var(env: dict[str, Any], name: str) -> Any:
    if name not in env:
        raise Unsupported(f"unknown variable {name}")
    return env[name]


def _field(obj: Any, key: str) -> Any:
    if isinstance(obj, dict):
        if key not in obj:
            raise CelError(f"no such key: {key}")
        return obj[key]
    raise CelError(f"no such key: {key}")


def _has(obj: Any, key: str) -> bool:
    return isinstance(obj, dict) and key in obj


def _index(obj: Any, ix: Any) -> Any:
    try:
        return obj[ix]
    except (KeyError, IndexError, TypeError):
        raise CelError(f"no such key: {ix}") from None


def _binop(op: str, left: Node, right: Node) -> Node:
    if op == "&&":  # CEL's logical operators are commutative about errors; short-circuit suffices here
        return lambda env: _truth(left(env)) and _truth(right(env))
    if op == "||":
        return lambda env: _truth(left(env)) or _truth(right(env))
    if op == "in":
        return lambda env: left(env) in right(env)
    if op in ("==", "!="):
        return (lambda env: left(env) == right(env)) if op == "==" else (lambda env: left(env) != right(env))

    def arith(env: dict[str, Any]) -> Any:
        a, b = left(env), right(env)
        if op == "+":
            if isinstance(a, str) and isinstance(b, str):
                return a + b
            if isinstance(a, list) and isinstance(b, list):
                return a + b
            return _num(a) + _num(b)
        if op in ("<", "<=", ">", ">="):
            if not (type(a) is type(b) or (isinstance(a, int | float) and isinstance(b, int | float))):
                raise CelError("no matching overload for comparison")
            return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        a, b = _num(a), _num(b)
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if b == 0:
            raise CelError("division by zero")
        if isinstance(a, int) and isinstance(b, int):  # CEL truncates toward zero, like Go
            q = abs(a) // abs(b)
            q = q if (a >= 0) == (b >= 0) else -q
            return q if op == "/" else a - q * b
        return a / b if op == "/" else a - b * int(a / b)

    return arith


def _macro(name: str, target: Node, var: str, body: Node) -> Node:
    def run(env: dict[str, Any]) -> Any:
        coll = target(env)
        items = list(coll.keys()) if isinstance(coll, dict) else coll
        if not isinstance(items, list):
            raise CelError(f"{name}() needs a list or map")
        results = [body({**env, var: item}) for item in items]
        if name == "all":
            return all(_truth(r) for r in results)
        if name == "exists":
            return any(_truth(r) for r in results)
        if name == "exists_one":
            return sum(1 for r in results if _truth(r)) == 1
        if name == "map":
            return results
        return [item for item, r in zip(items, results, strict=True) if _truth(r)]

    return run


def _size(v: Any) -> int:
    if isinstance(v, str | list | dict):
        return len(v)
    raise CelError("size() needs a string, list or map")


_FUNCS: dict[str, Callable[..., Any]] = {
    "size": _size,
    "int": lambda v: int(v),
    "string": lambda v: str(v).lower() if isinstance(v, bool) else str(v),
    "double": lambda v: float(v),
}
_METHODS: dict[str, Callable[..., Any]] = {
    "size": _size,
    "startsWith": lambda s, p: s.startswith(p),
    "endsWith": lambda s, p: s.endswith(p),
    "contains": lambda s, p: p in s,
    "matches": lambda s, p: search(p, s),
    "lowerAscii": lambda s: s.lower(),
    "upperAscii": lambda s: s.upper(),
}

_CACHE: dict[str, Node | Unsupported] = {}


def compile_rule(rule: str) -> Node:
    """Compile once (cached); raises Unsupported for syntax outside the subset."""
    cached = _CACHE.get(rule)
    if cached is None:
        try:
            cached = _Parser(rule).parse()
        except Unsupported as err:
            cached = err
        _CACHE[rule] = cached
    if isinstance(cached, Unsupported):
        raise cached
    return cached


def evaluate(rule: str, self_value: Any, old_value: Any = _MISSING) -> bool | None:
    """True/False for the rule, None when it cannot be evaluated here (unsupported, or a transition
    rule without an old value)."""
    if "oldSelf" in rule and old_value is _MISSING:
        return None
    try:
        node = compile_rule(rule)
    except Unsupported:
        return None
    env = {"self": self_value}
    if old_value is not _MISSING:
        env["oldSelf"] = old_value
    try:
        result = node(env)
    except CelError:
        return False
    except Unsupported:
        return None
    except (TypeError, ValueError, re.error, AttributeError, RecursionError):
        return False
    return result if isinstance(result, bool) else False


MISSING = _MISSING
