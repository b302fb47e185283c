"""The Kubernetes CEL libraries cel-expr-python lacks, as custom functions (k8s.io/apiserver/pkg/cel/library).

Lists (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`), regex (`find`, `findAll`, on RE2
through `patterns`) and sets (`sets.contains`, `sets.equivalent`, `sets.intersects`). The strings,
optional and bindings libraries come with cel-expr-python; `matches()` is cel-cpp's own, on RE2.
Not here: `quantity`, `url`, `ip`, `cidr`, `semver`, `format.*` and authz: a rule calling them does not
compile (docs/envtest.md).
"""

from __future__ import annotations

from typing import Any

from pyscaffold_op.apiextensions.patterns import compiled

__all__ = ["declarations"]


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


def declarations() -> list[Any]:
    """The function declarations, with their implementations, for `cel.NewEnv(functions=...)`."""
    from cel_expr_python import cel

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
