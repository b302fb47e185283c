"""Finished examples kept in the repository (`testdata/at/`, `testdata/cronjob/`): scaffold output plus
the files a person finished, and the manifests `make manifests` derives from them.

Every other file of an example stays byte-identical to what the scaffolder writes today, so a template
change shows up as drift (`tests/test_golden_*.py`) until `make testdata` (`python -m
pyscaffold_op.dev.regen`) rebuilds the examples, keeping their hand-finished files.
"""

from __future__ import annotations

import filecmp
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_IGNORED_PARTS = {"__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache"}


def project_files(root: Path) -> set[str]:
    """Relative paths of the files of a project tree, without caches."""
    return {
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.is_file() and not _IGNORED_PARTS.intersection(path.relative_to(root).parts)
    }


@dataclass(frozen=True)
class FinishedExample:
    """A finished example project: how to scaffold it, and which of its files are not scaffold output."""

    directory: Path
    scaffold: Callable[[Path], None]
    """The pyop commands of the example, in-process, into an empty (or new) folder, without manifests."""
    hand_finished: tuple[str, ...]
    """Files a person finished (or added); everything else stays exactly what pyop writes."""
    generated: tuple[str, ...]
    """Files `make manifests` derives from the hand-finished types and markers."""

    def build(self, dest: Path, finished_from: Path) -> None:
        """Fresh scaffold into `dest`, the hand-finished files from `finished_from`, then `make manifests`."""
        from pyscaffold_op.gen import generate_manifests

        self.scaffold(dest)
        for relative in self.hand_finished:
            (dest / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(finished_from / relative, dest / relative)
        generate_manifests(dest)

    def drift(self) -> list[str]:
        """What differs between the example and a rebuild of it: missing, extra or changed files."""
        with tempfile.TemporaryDirectory() as tmp:
            fresh = Path(tmp) / self.directory.name
            self.build(fresh, finished_from=self.directory)
            expected, actual = project_files(fresh), project_files(self.directory)
            problems = [f"missing {name}" for name in sorted(expected - actual)]
            problems += [f"unexpected {name}" for name in sorted(actual - expected)]
            problems += [
                f"changed {name}"
                for name in sorted(expected & actual)
                if not filecmp.cmp(fresh / name, self.directory / name, shallow=False)
            ]
            return problems

    def refresh(self) -> None:
        """Rebuild the example in place, keeping its hand-finished files."""
        with tempfile.TemporaryDirectory() as tmp:
            fresh = Path(tmp) / self.directory.name
            self.build(fresh, finished_from=self.directory)
            shutil.rmtree(self.directory)
            shutil.copytree(fresh, self.directory)
