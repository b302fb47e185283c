"""Split a large generated models module into a package of parts loaded on first use (PEP 562).

Why: creating a pydantic class costs ~0.6 ms, and core/v1 has ~230 of them; a manager that uses Pod
needs about half, one that uses ConfigMaps one. Each class goes to the part of the classes reached
from exactly the same roots (the kinds, and the classes no other class of the module references:
the list kinds and a few stray types), so loading a class loads exactly the classes it needs, and
parts never import each other in a cycle (a class only references classes reached from at least the
same roots).

`from pyscaffold_op.models.core_v1 import Pod` keeps working: the package's `__getattr__` imports the
part that defines the name.
"""

from __future__ import annotations

import ast
import re

SPLIT_ABOVE = 20
"""Modules with more classes than this become packages of parts (core_v1, apps_v1, meta_v1, ...)."""
_REEXPORTED = "pyscaffold_op.apimachinery.resource"  # meta_v1.ObjectMeta is apimachinery's, kept there


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _deps(node: ast.ClassDef, names: set[str]) -> set[str]:
    found = set()
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign):
            for sub in ast.walk(stmt.annotation):
                if isinstance(sub, ast.Name) and sub.id in names:
                    found.add(sub.id)
                elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    found |= {n for n in re.findall(r"\w+", sub.value) if n in names}  # a quoted forward ref
    return found - {node.name}


def partition(classes: list[ast.ClassDef]) -> dict[str, list[str]]:
    """Part name -> its class names, in module order."""
    names = {c.name for c in classes}
    deps = {c.name: _deps(c, names) for c in classes}
    referenced = set().union(*deps.values())
    # the kinds too, so a kind's part does not pull in its list type (and meta_v1's ListMeta)
    kinds = {c.name for c in classes if any(getattr(b, "id", "") == "K8sObject" for b in c.bases)}
    roots = [c.name for c in classes if c.name not in referenced or c.name in kinds]
    reached_from: dict[str, set[str]] = {name: set() for name in names}
    for root in roots:
        todo, seen = [root], set()
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                reached_from[name].add(root)
                todo.extend(deps[name])
    groups: dict[frozenset[str], list[str]] = {}
    for c in classes:
        groups.setdefault(frozenset(reached_from[c.name]), []).append(c.name)
    parts: dict[str, list[str]] = {}
    for members in groups.values():
        inside = set(members)
        # named after its top class: one no other class of the part references
        tops = sorted(m for m in members if not any(m in deps[o] for o in inside - {m}))
        parts["_" + _snake((tops or sorted(members))[0])] = members
    return parts


def split(text: str, header: str) -> dict[str, str]:
    """File name -> source: `__init__.py` (the lazy table) and one file per part."""
    tree = ast.parse(text)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    for node in imports:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            node.level = 2  # `from . import meta_v1` from one package deeper
    by_name = {c.name: c for c in classes}
    names = set(by_name)
    parts = partition(classes)
    part_of = {name: part for part, members in parts.items() for name in members}
    files: dict[str, str] = {}
    for part, members in parts.items():
        needed: dict[str, set[str]] = {}
        for name in members:
            for dep in _deps(by_name[name], names):
                if part_of[dep] != part:
                    needed.setdefault(part_of[dep], set()).add(dep)
        used = {n.id for name in members for n in ast.walk(by_name[name]) if isinstance(n, ast.Name)}
        lines = [ast.unparse(node) for node in _used_imports(imports, used)]
        lines += [f"from .{other} import {', '.join(sorted(deps))}" for other, deps in sorted(needed.items())]
        body = "\n\n\n".join(ast.unparse(by_name[name]) for name in members)
        files[f"{part}.py"] = header + "\n".join(lines) + "\n\n\n" + body + "\n"
    shared = sorted(
        a.name
        for node in imports
        if isinstance(node, ast.ImportFrom) and node.module == _REEXPORTED
        for a in node.names
        if a.name != "GroupVersionKind"
    )
    files["__init__.py"] = _package(header, part_of, shared)
    return files


def _used_imports(imports: list[ast.Import | ast.ImportFrom], used: set[str]) -> list[ast.stmt]:
    """The imports a part's classes use (an unused `from .. import meta_v1` would load meta_v1)."""
    kept: list[ast.stmt] = []
    for node in imports:
        aliases = [a for a in node.names if (a.asname or a.name).split(".")[0] in used]
        if aliases:
            kept.append(
                ast.ImportFrom(node.module, aliases, node.level)
                if isinstance(node, ast.ImportFrom)
                else ast.Import(aliases)
            )
    return kept


def _package(header: str, part_of: dict[str, str], shared: list[str]) -> str:
    ordered = sorted(part_of)
    reexport = f"from {_REEXPORTED} import {', '.join(shared)}\n" if shared else ""
    table = "\n".join(f'    "{name}": "{part_of[name]}",' for name in ordered)
    typing = "\n".join(f"    from .{part_of[name]} import {name}" for name in ordered)
    return f"""{header}# Each class lives in a part with exactly the classes it needs; `__getattr__` imports
# the part on first use, so importing one kind builds only the classes that kind needs.
import importlib
from typing import TYPE_CHECKING, Any

{reexport}
if TYPE_CHECKING:
{typing}

_PART_OF = {{
{table}
}}

__all__ = sorted([*_PART_OF{"".join(f", {name!r}" for name in shared)}])


def __getattr__(name: str) -> Any:
    part = _PART_OF.get(name)
    if part is None:
        raise AttributeError(f"module {{__name__!r}} has no attribute {{name!r}}")
    value = getattr(importlib.import_module(f"{{__name__}}.{{part}}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({{*globals(), *__all__}})
"""
