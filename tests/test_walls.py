"""The walls between pyop's parts (docs/design.md, "Parts"): imports only go down the layers, and the
parts of one layer never import each other, except the documented doors.

Every module under `pyscaffold_op/` is parsed with `ast`; every import counts, at module level, inside
functions and under `if TYPE_CHECKING:` (a type checker crosses the wall too). A failure lists each
violating import as `module:line -> target`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "pyscaffold_op"

# part -> layer; a part may import parts of lower layers only (and itself)
LAYERS: dict[str, int] = {
    # bottom: the package's own `__init__` (its version), stdlib-only helpers, the object model's machinery
    "__init__": 0,
    "errors": 0,
    "clock": 0,
    "loops": 0,
    "yaml12": 0,
    "yamlio": 0,
    "apimachinery": 0,
    # the schema semantics, the built-in models, the PROJECT file
    "apiextensions": 1,
    "models": 1,
    "project": 1,
    "names": 1,  # the rules of names a project is made of (flags and PROJECT values alike)
    # the four parts, which never import each other (but see DOORS)
    "gen": 2,
    "scaffold": 2,
    "runtime": 2,
    "envtest": 2,
    "testing": 3,  # test helpers for operators: the runtime's FakeClock and eventually
    "olm": 3,  # operator-sdk's half: CSV, bundles, validation, scorecard (reads gen's kinds, runs envtest)
    # the command line on top; dev tools (not shipped) may use anything
    "console": 4,
    "commands": 4,
    "cli": 4,
    "__main__": 4,
    "dev": 5,
}

# layers whose parts never import each other (above and below, parts of one layer may)
SEPARATE = {2}

# (importing module or package prefix, imported part): the documented exceptions, each with its reason
DOORS: dict[tuple[str, str], str] = {
    ("pyscaffold_op.envtest.pytest_plugin", "runtime"): "hands tests a runtime Client and webhook server",
    ("pyscaffold_op.envtest.clientconfig", "runtime"): "Environment.config, the runtime's RestConfig",
}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def part_of(module: str, package: str = "pyscaffold_op") -> str | None:
    """The part a module of `package` belongs to (its first name under the package)."""
    if module == package:
        return "__init__"
    if not module.startswith(package + "."):
        return None
    return module[len(package) + 1 :].split(".")[0]


def imports_of(path: Path, module: str, text: str, root: Path) -> list[tuple[int, str]]:
    """(line, imported module) of every import in the file, relative imports resolved; `from pkg
    import name` is the module `pkg.name` when there is one, `pkg` otherwise."""
    tree = ast.parse(text, filename=str(path))
    is_package = path.name == "__init__.py"
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                sub = root.parent.joinpath(*f"{base}.{alias.name}".split("."))
                is_module = sub.with_suffix(".py").is_file() or (sub / "__init__.py").is_file()
                out.append((node.lineno, f"{base}.{alias.name}" if is_module else base))
    return out


def violations(
    root: Path,
    layers: dict[str, int],
    doors: dict[tuple[str, str], str],
    added: dict[str, str] | None = None,
) -> list[str]:
    """Each import through a wall, as `module:line -> target`; `added` appends lines to modules (the
    checker's own tests)."""
    package = root.name
    found = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        src = part_of(module, package)
        if src is None or src not in layers:
            found.append(f"{module}: part {src!r} is in no layer of docs/design.md")
            continue
        text = path.read_text() + (added or {}).get(module, "")
        for line, target in imports_of(path, module, text, root):
            dst = part_of(target, package)
            if dst is None or dst == src:
                continue
            if dst not in layers:
                found.append(f"{module}:{line} -> {target} (part {dst!r} is in no layer)")
                continue
            if layers[dst] < layers[src] or (layers[dst] == layers[src] and layers[src] not in SEPARATE):
                continue
            if any(module.startswith(m) and dst == part for m, part in doors):
                continue
            found.append(f"{module}:{line} -> {target}")
    return found


def test_the_walls_hold() -> None:
    found = violations(ROOT, LAYERS, DOORS)
    assert not found, "imports through the walls of docs/design.md:\n" + "\n".join(found)


def test_every_door_is_documented() -> None:
    design = (ROOT.parent / "docs" / "design.md").read_text()
    for module, _part in DOORS:
        assert f"`{module.removeprefix('pyscaffold_op.')}`" in design, module


# -- the checker itself, on a small tree -------------------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


SMALL = {"bottom": 0, "runtime": 2, "envtest": 2, "cli": 4}


def test_checker_passes_imports_that_go_down(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "bottom.py": "import os\n",
            "runtime/__init__.py": "from pkg import bottom\n",
            "envtest/__init__.py": "from pkg.bottom import x\nfrom . import store\n",
            "envtest/store.py": "from .. import bottom\n",
            "cli.py": "from pkg.envtest import store\nfrom pkg.runtime import y\n",
        },
    )
    assert violations(root, {**SMALL, "__init__": 4}, {}) == []


def test_checker_lists_each_import_through_a_wall(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "bottom.py": "",
            "runtime/__init__.py": "",
            "envtest/__init__.py": "",
            "envtest/server.py": "import os\n\nfrom pkg.runtime import x\n",
            "envtest/env.py": "def f():\n    from pkg.runtime.client import Client\n",
            "envtest/types.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.cli\n",
            "envtest/rel.py": "from ..runtime import y\n",
            "envtest/door.py": "from pkg.runtime import Client\n",
            "bottom2.py": "",
            "cli.py": "",
        },
    )
    (root / "runtime" / "client.py").write_text("")
    found = violations(root, {**SMALL, "__init__": 4, "bottom2": 0}, {("pkg.envtest.door", "runtime"): "why"})
    assert found == [
        "pkg.envtest.env:2 -> pkg.runtime.client",
        "pkg.envtest.rel:1 -> pkg.runtime",
        "pkg.envtest.server:3 -> pkg.runtime",
        "pkg.envtest.types:3 -> pkg.cli",
    ]


def test_checker_refuses_a_part_in_no_layer(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"__init__.py": "", "stray.py": ""})
    assert violations(root, {"__init__": 4}, {}) == [
        "pkg.stray: part 'stray' is in no layer of docs/design.md"
    ]


@pytest.mark.parametrize(
    "module", ["pyscaffold_op.envtest.storage.objectstore", "pyscaffold_op.envtest.environment"]
)
def test_an_emulator_import_of_the_runtime_fails(module: str) -> None:
    """The real tree plus `from pyscaffold_op.runtime import Client` in an emulator module: refused."""
    path = ROOT.joinpath(*module.split(".")[1:]).with_suffix(".py")
    line = path.read_text().count("\n") + 1
    found = violations(ROOT, LAYERS, DOORS, added={module: "from pyscaffold_op.runtime import Client\n"})
    assert found == [f"{module}:{line} -> pyscaffold_op.runtime"]
