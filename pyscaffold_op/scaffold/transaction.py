"""All-or-nothing file changes: stage every new content, then move into place, rolling back on failure.

A scaffolder computes the final bytes of every file it creates or edits *before* touching the project
(so validation and rendering errors leave the folder as it was), writes them into a staging folder
inside the project (same filesystem, so moves are atomic renames), and only then moves them into
place. Any failure while moving restores the originals from backups and removes what was created.
Removals (`pyop delete api`) are staged the same way: the file moves into the staging folder, and back
on failure; folders left empty by them (or holding only `__pycache__`) are removed last.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from pyscaffold_op.errors import ProjectError


def read_file(root: Path, relpath: str) -> str | None:
    """The text of `root/relpath`, None when there is no such file."""
    path = root / relpath
    return path.read_text(encoding="utf-8") if path.is_file() else None


@dataclass
class FilePlan:
    """The planned final content of files under `root`, keyed by POSIX relative path."""

    root: Path
    files: dict[str, bytes] = field(default_factory=dict)
    removals: set[str] = field(default_factory=set)

    def write(self, relpath: str, content: str | bytes) -> None:
        data = content.encode("utf-8") if isinstance(content, str) else content
        key = str(PurePosixPath(relpath))
        self.files[key] = data
        self.removals.discard(key)

    def remove(self, relpath: str) -> None:
        """Plan the removal of a file (nothing happens if it does not exist when the plan is applied)."""
        key = str(PurePosixPath(relpath))
        self.files.pop(key, None)
        self.removals.add(key)

    def read_current(self, relpath: str) -> str | None:
        """The planned content if any, else the file on disk, else None (also when planned for removal)."""
        if relpath in self.files:
            return self.files[relpath].decode("utf-8")
        if relpath in self.removals:
            return None
        return read_file(self.root, relpath)

    def changed(self) -> dict[str, bytes]:
        """Only the files whose content differs from what is on disk."""
        out: dict[str, bytes] = {}
        for relpath, data in sorted(self.files.items()):
            path = self.root / relpath
            if path.is_file() and path.read_bytes() == data:
                continue
            out[relpath] = data
        return out


def apply(plan: FilePlan) -> list[str]:
    """Move every changed file of `plan` into place atomically; returns the relative paths written.

    Planned removals are part of the same transaction; `removed(plan)` lists them beforehand.
    """
    changes = plan.changed()
    removals = removed(plan)
    if not changes and not removals:
        return []
    root = plan.root
    for relpath in changes:
        target = root / relpath
        if target.is_dir():
            raise ProjectError(f"cannot write {relpath}: a folder of that name exists")
        for parent in target.relative_to(root).parents:
            if (root / parent).exists() and not (root / parent).is_dir():
                raise ProjectError(f"cannot write {relpath}: {parent.as_posix()} is not a folder")
    staging = Path(tempfile.mkdtemp(prefix=".pyop-staging-", dir=root))
    created_files: list[Path] = []
    created_dirs: list[Path] = []
    backups: list[tuple[Path, Path]] = []
    try:
        for index, (relpath, data) in enumerate(changes.items()):
            staged = staging / "new" / str(index)
            staged.parent.mkdir(parents=True, exist_ok=True)
            staged.write_bytes(data)
            target = root / relpath
            if target.exists():
                shutil.copymode(target, staged)
        for index, relpath in enumerate(changes):
            target = root / relpath
            missing = [p for p in target.parents if p != root and root in p.parents and not p.exists()]
            for folder in reversed(missing):
                folder.mkdir()
                created_dirs.append(folder)
            if target.exists():
                backup = staging / "backup" / str(index)
                backup.parent.mkdir(parents=True, exist_ok=True)
                os.replace(target, backup)
                backups.append((backup, target))
            else:
                created_files.append(target)
            os.replace(staging / "new" / str(index), target)
        for index, relpath in enumerate(removals):
            backup = staging / "removed" / str(index)
            backup.parent.mkdir(parents=True, exist_ok=True)
            os.replace(root / relpath, backup)
            backups.append((backup, root / relpath))
        emptied = _empty_folders(root, removals)
        for folder in emptied:
            shutil.rmtree(folder)
    except BaseException:
        for path in created_files:
            path.unlink(missing_ok=True)
        for backup, target in reversed(backups):
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(backup, target)
        for folder in reversed(created_dirs):
            shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return list(changes)


def removed(plan: FilePlan) -> list[str]:
    """The planned removals of files that exist, sorted."""
    return sorted(relpath for relpath in plan.removals if (plan.root / relpath).is_file())


def _disposable(folder: Path) -> bool:
    """A folder holding nothing but bytecode caches (and empty folders): nothing of the user's."""
    return all(
        entry.name == "__pycache__" or (entry.is_dir() and _disposable(entry)) for entry in folder.iterdir()
    )


def _empty_folders(root: Path, removals: list[str]) -> list[Path]:
    """The outermost folders the removals left disposable (deepest candidates first, root excluded)."""
    out: list[Path] = []
    for relpath in removals:
        for folder in (root / relpath).parents:
            if folder == root or root not in folder.parents:
                break
            if not folder.is_dir() or not _disposable(folder):
                break
            out.append(folder)
    outermost = [f for f in set(out) if not any(other in f.parents for other in out)]
    return sorted(outermost)
