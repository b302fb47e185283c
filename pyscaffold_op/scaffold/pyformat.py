"""Generated Python, formatted by ruff itself: imports sorted (`ruff check --select I --fix`), then
`ruff format`, with the project's own ruff configuration, so templates never imitate its wrapping.

Runs on a plan (before anything is written): the planned `.py` files and the planned or current
`pyproject.toml` are laid out in a temporary folder as in the project, with an empty stand-in for every
other module of `src/` and `tests/` (ruff's import sorting looks at which modules exist), so ruff sees
what `make lint` sees in the project.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from pyscaffold_op.errors import ProjectError
from pyscaffold_op.scaffold.transaction import FilePlan

__all__ = ["format_python"]


@cache
def ruff_binary() -> str:
    from ruff.__main__ import find_ruff_bin

    return os.fsdecode(find_ruff_bin())


def format_python(plan: FilePlan) -> None:
    """Format every planned `.py` file of `plan` in place (in the plan, not on disk)."""
    sources = sorted(relpath for relpath in plan.files if relpath.endswith(".py"))
    if not sources:
        return
    config = plan.read_current("pyproject.toml")
    with tempfile.TemporaryDirectory(prefix="pyop-ruff-") as tmp:
        folder = Path(tmp)
        if config is not None:
            (folder / "pyproject.toml").write_text(config, encoding="utf-8")
        for top in ("src", "tests"):
            for existing in (plan.root / top).rglob("*.py") if (plan.root / top).is_dir() else ():
                stand_in = folder / existing.relative_to(plan.root)
                stand_in.parent.mkdir(parents=True, exist_ok=True)
                stand_in.touch()
        for relpath in sources:
            path = folder / relpath
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(plan.files[relpath])
        _ruff(folder, ["check", "--select", "I", "--fix", "--exit-zero"], sources)
        _ruff(folder, ["format"], sources)
        for relpath in sources:
            plan.files[relpath] = (folder / relpath).read_bytes()


def _ruff(folder: Path, command: list[str], files: list[str]) -> None:
    # not --quiet: with it, ruff 0.17's `check --fix` reports nothing and fixes nothing either
    result = subprocess.run(
        [ruff_binary(), *command, "--no-cache", *files],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        why = lines[0] if lines else f"exit status {result.returncode}"
        raise ProjectError(f"cannot format the generated Python with ruff: {why}")
