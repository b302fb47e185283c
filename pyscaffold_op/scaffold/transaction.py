"""All-or-nothing file changes: stage every new content, then move into place, rolling back on failure.

A scaffolder computes the final bytes of every file it creates or edits *before* touching the project
(so validation and rendering errors leave the folder as it was), writes them into a staging folder
inside the project (same filesystem, so moves are atomic renames), and only then moves them into
place. Any failure while moving restores the originals from backups and removes what was created.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from pyscaffold_op.errors import ProjectError


@dataclass
class FilePlan:
    """The planned final content of files under `root`, keyed by POSIX relative path."""

    root: Path
    files: dict[str, bytes] = field(default_factory=dict)

    def write(self, relpath: str, content: str | bytes) -> None:
        data = content.encode("utf-8") if isinstance(content, str) else content
        self.files[str(PurePosixPath(relpath))] = data

    def read_current(self, relpath: str) -> str | None:
        """The planned content if any, else the file on disk, else None."""
        if relpath in self.files:
            return self.files[relpath].decode("utf-8")
        path = self.root / relpath
        return path.read_text(encoding="utf-8") if path.is_file() else None

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
    """Move every changed file of `plan` into place atomically; returns the relative paths written."""
    changes = plan.changed()
    if not changes:
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
    except BaseException:
        for path in created_files:
            path.unlink(missing_ok=True)
        for backup, target in reversed(backups):
            os.replace(backup, target)
        for folder in reversed(created_dirs):
            shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return list(changes)
