"""The Kubernetes CEL libraries cel-expr-python lacks, as custom functions (k8s.io/apiserver/pkg/cel/library).

Lists (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`), regex (`find`, `findAll`, on RE2
through `patterns`) and sets (`sets.contains`, `sets.equivalent`, `sets.intersects`) here; quantity
(`celquantity`), url (`celurl`), ip and cidr (`celnet`) and semver (`celsemver`) in their modules, their
opaque types as the messages of `celtypes`. The strings, optional and bindings libraries come with
cel-expr-python; `matches()` is cel-cpp's own, on RE2.
Not here: `format.*` (its functions return optionals, which a cel-expr-python function cannot make),
authz, and the quantity arithmetic of newer servers (`mul`, `div`, `divInt`): a rule calling them does
not compile (docs/envtest.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pyscaffold_op.apiextensions.celtypes import Decl
from pyscaffold_op.apiextensions.patterns import compiled

__all__ = ["Libraries", "declarations", "libraries"]


def _is_sorted(items: list[Any]) -> bool:
    return all(items[i] <= items[i + 1] for i in range(len(items) - 1))


def _sum(items: list[Any]) -> Any:
    return sum(items) if items else 0


def _min(items: list[Any]) -> Any:
    if not items:
        raise ValueError("min called on empty list")
    return min(items)


def _max(items: list[Any]) -> Any:
    if not items:
        raise ValueError("max called on empty list")
    return max(items)


def _index_of(items: list[Any], value: Any) -> int:
    for i, item in enumerate(items):
        if type(item) is type(value) and item == value:
            return i
    return -1


def _last_index_of(items: list[Any], value: Any) -> int:
    for i in range(len(items) - 1, -1, -1):
        if type(items[i]) is type(value) and items[i] == value:
            return i
    return -1


def _find(text: str, pattern: str) -> str:
    found = compiled(pattern).search(text)
    return found.group(0) if found else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    out = [m.group(0) for m in compiled(pattern).finditer(text)]
    return out if limit < 0 else out[:limit]


def _contains(a: list[Any], b: list[Any]) -> bool:
    return all(x in a for x in b)


def _equivalent(a: list[Any], b: list[Any]) -> bool:
    return _contains(a, b) and _contains(b, a)


def _intersects(a: list[Any], b: list[Any]) -> bool:
    return any(x in a for x in b)


@dataclass(frozen=True)
class Libraries:
    """What `cel.NewEnv` takes to declare the libraries: function declarations (with their
    implementations), a config declaring the functions cel-expr-python cannot register one by one,
    and their implementations by overload id."""

    functions: list[Any]
    config_yaml: str
    function_impls: dict[str, Any]


@lru_cache(maxsize=1)
def libraries() -> Libraries:
    """The Kubernetes libraries. cel-expr-python registers an implementation for each declared
    overload by argument kind, and a message is any kind to it: two overloads differing only in their
    message types (`compareTo` of quantities and of versions) cannot both be declared with one. Such a
    function is declared in the env config instead (type-checked as declared, nothing registered) and
    one implementation, which picks by type, goes to `function_impls` under its first overload. That
    does not work for the standard `string` (a config may not redeclare it): `string` of a cidr is left
    out (docs/envtest.md)."""
    from cel_expr_python import cel

    from pyscaffold_op.apiextensions import celnet, celquantity, celsemver, celurl

    typed: dict[str, list[Decl]] = {}
    for library in (celquantity, celurl, celnet, celsemver):
        for name, decls in library.declarations().items():
            typed.setdefault(name, []).extend(decls)
    functions = _untyped(cel)
    config: list[str] = []
    impls: dict[str, Any] = {}
    for name, decls in typed.items():
        shared = _shared(decls)
        if not shared:
            functions.append(cel.FunctionDecl(name, [_overload(cel, d, d.impl) for d in decls]))
        elif name == "string":
            functions.append(cel.FunctionDecl(name, [_overload(cel, decls[0], _by_type(decls))]))
        else:
            config.append(_config_function(name, decls))
            impls[decls[0].id] = _by_type(decls)
    return Libraries(functions, "functions:\n" + "".join(config) if config else "", impls)


def declarations() -> list[Any]:
    """The function declarations with implementations (the rest: `libraries()`)."""
    return libraries().functions


def _overload(cel: Any, decl: Decl, impl: Any) -> Any:
    return cel.Overload(decl.id, decl.ret, decl.params, is_member=decl.is_member, impl=impl)


def _shared(decls: list[Decl]) -> bool:
    """Whether two overloads look the same to cel-expr-python's registry (messages as any)."""
    seen = set()
    for decl in decls:
        kinds = (decl.is_member, tuple("any" if p.is_message() else p.name() for p in decl.params))
        if kinds in seen:
            return True
        seen.add(kinds)
    return False


def _type_text(t: Any) -> str:
    return t.name() if t.is_message() else t.name().lower()


def _config_function(name: str, decls: list[Decl]) -> str:
    lines = [f'  - name: "{name}"\n', "    overloads:\n"]
    for decl in decls:
        args = [_type_text(p) for p in decl.params]
        if decl.is_member:
            signature = f"{args[0]}.{name}({', '.join(args[1:])})"
        else:
            signature = f"{name}({', '.join(args)})"
        lines.append(f'      - id: "{decl.id}"\n')
        lines.append(f'        signature: "{signature}"\n')
        lines.append(f'        return: "{_type_text(decl.ret)}"\n')
    return "".join(lines)


def _by_type(group: list[Decl]) -> Any:
    """One implementation for overloads told apart by their message types."""
    impls = {tuple(p.name() if p.is_message() else "" for p in decl.params): decl.impl for decl in group}

    def dispatch(*args: Any) -> Any:
        key = tuple(a.DESCRIPTOR.full_name if hasattr(a, "DESCRIPTOR") else "" for a in args)
        if key not in impls:
            raise ValueError("no such overload")
        return impls[key](*args)

    return dispatch


def _untyped(cel: Any) -> list[Any]:
    """The libraries on CEL's own types (lists, regex, sets)."""
    T = cel.Type
    dyn_list = T.List(T.DYN)

    def member(name: str, ret: Any, params: list[Any], impl: Any, oid: str = "") -> Any:
        return cel.Overload(oid or f"list_{name}", ret, params, is_member=True, impl=impl)

    # cel-cpp dispatches on the runtime kinds of the arguments: one implementation per kind signature,
    # so list functions take list(dyn) and hand back dyn where the element type is the result
    index_overloads = []
    last_overloads = []
    for name, scalar in (("int", T.INT), ("uint", T.UINT), ("double", T.DOUBLE), ("string", T.STRING)):
        index_overloads.append(
            member("indexOf", T.INT, [T.List(scalar), scalar], _index_of, f"list_{name}_index_of")
        )
        last_overloads.append(
            member(
                "lastIndexOf", T.INT, [T.List(scalar), scalar], _last_index_of, f"list_{name}_last_index_of"
            )
        )
    index_overloads.append(
        member("indexOf", T.INT, [T.List(T.BOOL), T.BOOL], _index_of, "list_bool_index_of")
    )
    last_overloads.append(
        member("lastIndexOf", T.INT, [T.List(T.BOOL), T.BOOL], _last_index_of, "list_bool_last_index_of")
    )
    return [
        cel.FunctionDecl("isSorted", [member("isSorted", T.BOOL, [dyn_list], _is_sorted)]),
        cel.FunctionDecl("sum", [member("sum", T.DYN, [dyn_list], _sum)]),
        cel.FunctionDecl("min", [member("min", T.DYN, [dyn_list], _min)]),
        cel.FunctionDecl("max", [member("max", T.DYN, [dyn_list], _max)]),
        cel.FunctionDecl("indexOf", index_overloads),
        cel.FunctionDecl("lastIndexOf", last_overloads),
        cel.FunctionDecl(
            "find",
            [cel.Overload("string_find_string", T.STRING, [T.STRING, T.STRING], is_member=True, impl=_find)],
        ),
        cel.FunctionDecl(
            "findAll",
            [
                cel.Overload(
                    "string_find_all_string",
                    T.List(T.STRING),
                    [T.STRING, T.STRING],
                    is_member=True,
                    impl=_find_all,
                ),
                cel.Overload(
                    "string_find_all_string_int",
                    T.List(T.STRING),
                    [T.STRING, T.STRING, T.INT],
                    is_member=True,
                    impl=_find_all,
                ),
            ],
        ),
        cel.FunctionDecl(
            "sets.contains",
            [cel.Overload("list_sets_contains_list", T.BOOL, [dyn_list, dyn_list], impl=_contains)],
        ),
        cel.FunctionDecl(
            "sets.equivalent",
            [cel.Overload("list_sets_equivalent_list", T.BOOL, [dyn_list, dyn_list], impl=_equivalent)],
        ),
        cel.FunctionDecl(
            "sets.intersects",
            [cel.Overload("list_sets_intersects_list", T.BOOL, [dyn_list, dyn_list], impl=_intersects)],
        ),
    ]
