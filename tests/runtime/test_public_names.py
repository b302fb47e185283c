"""`pyscaffold_op.runtime`'s public names: one TYPE_CHECKING block declares them (runtime/__init__.py);
at run time it is the lazy-loading table and `__all__`."""

from __future__ import annotations

import subprocess
import sys

import pyscaffold_op.runtime as runtime


def test_every_public_name_resolves() -> None:
    assert len(runtime.__all__) > 80
    for name in runtime.__all__:
        assert getattr(runtime, name) is not None, name
    assert runtime.HandlerFuncs is runtime.handler.Funcs  # the one alias
    assert runtime.Funcs is runtime.predicate.Funcs
    assert dir(runtime) == sorted(runtime.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        runtime.NoSuchThing  # noqa: B018
    except AttributeError as err:
        assert "NoSuchThing" in str(err)
    else:
        raise AssertionError("expected AttributeError")


def test_importing_the_package_loads_none_of_its_rooms() -> None:
    code = (
        "import sys, pyscaffold_op.runtime\n"
        "print(sorted(m for m in sys.modules if m.startswith('pyscaffold_op.runtime.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_star_import_gives_the_public_names() -> None:
    scope: dict[str, object] = {}
    exec("from pyscaffold_op.runtime import *", scope)
    assert {"Manager", "ManagerOptions", "Request", "Result", "EventRecorder"} <= scope.keys()


def test_public_names_are_explicit_re_exports_for_type_checkers() -> None:
    """From an installed wheel (py.typed), pyright calls a name a module merely imports private
    (reportPrivateImportUsage: `make typecheck` of every generated project failed on `Client`,
    `Manager`, ...); `from m import X as X` is the explicit re-export PEP 484 defines."""
    import ast
    from pathlib import Path

    import pyscaffold_op.runtime as runtime

    tree = ast.parse(Path(runtime.__file__).read_text(encoding="utf-8"))
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING"
    )
    plain = [
        alias.name
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname is None
    ]
    assert not plain, f"re-export as `X as X`: {plain}"
