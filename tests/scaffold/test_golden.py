"""The golden scaffold `testdata/project/` is exactly what the at example's commands produce today.

On failure: if the change is intended, run `make testdata` (python -m pyscaffold_op.dev.regen) and
commit the regenerated tree with the template change.
"""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

import pytest

from pyscaffold_op.dev.regen import GOLDEN_DIR, build_golden, scaffold_at_example

IGNORED_PARTS = {"__pycache__", ".pytest_cache", ".ruff_cache"}


def tree(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not IGNORED_PARTS.intersection(path.relative_to(root).parts)
    }


def tree_diff(expected: dict[str, bytes], actual: dict[str, bytes]) -> str:
    out: list[str] = []
    for relpath in sorted(expected.keys() | actual.keys()):
        old, new = expected.get(relpath), actual.get(relpath)
        if old == new:
            continue
        old_lines = old.decode("utf-8", "replace").splitlines(keepends=True) if old is not None else []
        new_lines = new.decode("utf-8", "replace").splitlines(keepends=True) if new is not None else []
        out.extend(
            difflib.unified_diff(
                old_lines,
                new_lines,
                fromfile=f"testdata/project/{relpath}" if old is not None else "/dev/null",
                tofile=f"regenerated/{relpath}" if new is not None else "/dev/null",
            )
        )
    return "".join(out)


def test_golden_tree_is_up_to_date(tmp_path: Path) -> None:
    if not GOLDEN_DIR.is_dir():
        pytest.fail(f"{GOLDEN_DIR} is missing: run `make testdata`")
    fresh = tmp_path / "project"
    build_golden(fresh)
    diff = tree_diff(tree(GOLDEN_DIR), tree(fresh))
    assert not diff, "testdata/project is out of date (run `make testdata` if intended):\n" + diff


def test_scaffold_is_deterministic(tmp_path: Path) -> None:
    """Two runs in different folders give the same bytes: no timestamps, no absolute paths."""
    first, second = tmp_path / "a" / "one", tmp_path / "b" / "two"
    scaffold_at_example(first)
    scaffold_at_example(second)
    first_tree = tree(first)
    assert first_tree == tree(second)
    for relpath, data in first_tree.items():
        assert str(tmp_path).encode() not in data, relpath


def test_a_template_change_without_regeneration_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Edit a copy of the templates as a developer would, and the comparison reports the drift."""
    import pyscaffold_op.scaffold.init as init_module
    from pyscaffold_op.scaffold.templates import templates_dir

    templates = tmp_path / "templates"
    shutil.copytree(templates_dir(), templates)
    makefile = templates / "init" / "project" / "Makefile.jinja"
    makefile.write_text(makefile.read_text().replace("IMG ?= controller:latest", "IMG ?= manager:latest"))
    monkeypatch.setattr(init_module, "templates_dir", lambda: templates)
    fresh = tmp_path / "project"
    scaffold_at_example(fresh)
    diff = tree_diff(tree(GOLDEN_DIR), tree(fresh))
    assert "-IMG ?= controller:latest\n+IMG ?= manager:latest\n" in diff
