"""`pyop upgrade`: bring a project up to the current init template, keeping the user's edits.

Three renders of the init template with the answers the project recorded (`.copier-answers.yml`):

- base: the template revision the project was made from (`_commit`, a digest of the template's files),
- ours: the project as it is now,
- theirs: the current template.

Per file: unchanged by the template -> left alone; unchanged by the user -> replaced by the new render;
changed by both -> `git merge-file`, conflicts marked in the file (`<<<<<<<`) and listed. A file the
template removed is removed unless the user edited it; a file the user removed stays removed.
Why not `copier update`: it needs the template in git (pyop's ships inside the package) and a clean
git work tree, and runs the renders through copier's private machinery; the merge itself is git's.
"""

from __future__ import annotations

import contextlib
import difflib
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyscaffold_op.errors import ProjectError, PyopError, ValidationError
from pyscaffold_op.project import find_project_root
from pyscaffold_op.scaffold.history import materialized, shipped_revisions
from pyscaffold_op.scaffold.init import ANSWERS_FILE, InitOptions, make_context, render_template
from pyscaffold_op.scaffold.templates import INIT_TEMPLATE_TOKEN
from pyscaffold_op.scaffold.transaction import FilePlan, apply

_OPTION_TYPES: Mapping[str, type] = {
    "domain": str,
    "repo": str,
    "project_name": str,
    "owner": str,
    "license": str,
    "namespaced": bool,
    "multigroup": bool,
}


@dataclass
class Upgrade:
    """What an upgrade changes: new content per file, files to remove, and how each came about."""

    root: Path
    files: dict[str, bytes] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)  # the user had not edited it: the new render
    merged: list[str] = field(default_factory=list)  # both edited, merged cleanly
    conflicts: list[str] = field(default_factory=list)  # conflict markers written in the file
    kept: list[str] = field(default_factory=list)  # changed by the template, but the user removed/edited it

    def diff(self) -> str:
        """A unified diff of every change, project -> upgraded (what --dry-run prints)."""
        out: list[str] = []
        for relpath in sorted([*self.files, *self.removed]):
            path = self.root / relpath
            old = path.read_text(encoding="utf-8") if path.is_file() else ""
            new = self.files[relpath].decode("utf-8") if relpath in self.files else ""
            out.extend(
                difflib.unified_diff(
                    old.splitlines(keepends=True),
                    new.splitlines(keepends=True),
                    fromfile=f"a/{relpath}" if path.is_file() else "/dev/null",
                    tofile=f"b/{relpath}" if relpath in self.files else "/dev/null",
                )
            )
        return "".join(out)


def plan_upgrade(start: Path, *, templates: Path, base_templates: Path | None = None) -> Upgrade:
    """Compute the upgrade of the project at or above `start`; changes nothing."""
    from pyscaffold_op.scaffold.tree import TreeTemplate

    root = find_project_root(start.resolve())
    if root is None:
        raise ProjectError(f"no PROJECT file in {start} or above: run this from a pyop project")
    answers = read_answers(root)
    new = TreeTemplate.load(templates)
    recorded = answers.get("_commit")
    with contextlib.ExitStack() as stack:
        if base_templates is not None:
            base = TreeTemplate.load(_template_root(base_templates))
            if recorded is not None and base.revision() != recorded:
                raise ValidationError(
                    f"--base-templates {base_templates}: template revision {base.revision()}, but the "
                    f"project was made from {recorded} ({ANSWERS_FILE} _commit)"
                )
        elif recorded == new.revision():
            base = new
        elif isinstance(recorded, str) and (
            shipped := stack.enter_context(materialized(templates.parent, recorded))
        ):
            base = TreeTemplate.load(shipped)  # an earlier release's template, from the shipped history
        else:
            made_from = (
                f"template revision {recorded}" if recorded else "a template revision it does not record"
            )
            earlier = [r for r in shipped_revisions(templates.parent) if r != new.revision()]
            raise ProjectError(
                f"{ANSWERS_FILE}: the project was made from {made_from}, which this pyop does not ship "
                f"(it has {new.revision()} and {len(earlier)} earlier ones); "
                "pass --base-templates with the templates/init folder of the pyop release that made it"
            )
        context = make_context(init_options(answers), check_installed=False)
        base_files = render_template(context, root, base.root)
        new_files = render_template(context, root, new.root)
    return merge_renders(root, base_files, new_files)


def merge_renders(root: Path, base_files: Mapping[str, bytes], new_files: Mapping[str, bytes]) -> Upgrade:
    """Merge the change from one render of the init template to another into the project, file by file
    (also `pyop edit`'s: the same template with other answers)."""
    git = shutil.which("git")
    upgrade = Upgrade(root)
    for relpath in sorted(base_files.keys() | new_files.keys()):
        path = root / relpath
        ours = path.read_bytes() if path.is_file() else None
        theirs = new_files.get(relpath)
        if relpath == ANSWERS_FILE:  # pyop's own record: always the new one
            if theirs is not None and theirs != ours:
                upgrade.files[relpath] = theirs
                upgrade.updated.append(relpath)
            continue
        _upgrade_file(upgrade, relpath, base_files.get(relpath), ours, theirs, git)
    return upgrade


def _upgrade_file(
    upgrade: Upgrade,
    relpath: str,
    base: bytes | None,
    ours: bytes | None,
    theirs: bytes | None,
    git: str | None,
) -> None:
    if theirs in (base, ours):
        return  # the template did not change it, or the project already has the change
    if ours == base:  # the user did not touch it (or never had it): take the template's
        if theirs is None:
            upgrade.removed.append(relpath)
        else:
            upgrade.files[relpath] = theirs
        upgrade.updated.append(relpath)
        return
    if ours is None or theirs is None:  # removed on one side, changed on the other: the user decides
        upgrade.kept.append(relpath)
        return
    if git is None:
        raise PyopError("`git` is needed for the three-way merge (git merge-file) and is not on PATH")
    merged, conflicts = merge_file(git, relpath, base or b"", ours, theirs)
    upgrade.files[relpath] = merged
    (upgrade.conflicts if conflicts else upgrade.merged).append(relpath)


def merge_file(git: str, relpath: str, base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes, int]:
    """`git merge-file`: the merged content and how many conflicts it marks."""
    with tempfile.TemporaryDirectory(prefix="pyop-merge-") as folder:
        paths = []
        for name, content in (("ours", ours), ("base", base), ("theirs", theirs)):
            paths.append(Path(folder) / name)
            paths[-1].write_bytes(content)
        labels = ["-L", f"{relpath} (yours)", "-L", f"{relpath} (base)", "-L", f"{relpath} (pyop template)"]
        result = subprocess.run(
            [git, "merge-file", "-p", *labels, *map(str, paths)], capture_output=True, check=False
        )
    if not 0 <= result.returncode <= 127:  # negative (as 128-255) on error
        why = result.stderr.decode(errors="replace").strip()
        raise PyopError(f"git merge-file failed on {relpath}: {why}")
    return result.stdout, result.returncode


def apply_upgrade(upgrade: Upgrade) -> list[str]:
    """Write the merged files (all or nothing), then remove the files the template dropped."""
    plan = FilePlan(upgrade.root)
    for relpath, content in upgrade.files.items():
        plan.write(relpath, content)
    written = apply(plan)
    for relpath in upgrade.removed:
        (upgrade.root / relpath).unlink(missing_ok=True)
    return written


def read_answers(root: Path) -> dict[str, Any]:
    """The answers `pyop init` recorded; one-line errors for a missing or foreign answers file."""
    import yaml

    path = root / ANSWERS_FILE
    if not path.is_file():
        raise ProjectError(f"no {ANSWERS_FILE} in {root}: pyop upgrade needs the answers pyop init recorded")
    try:
        answers = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ProjectError(f"{ANSWERS_FILE}: not valid YAML ({str(err).splitlines()[0]})") from None
    if not isinstance(answers, dict):
        raise ProjectError(f"{ANSWERS_FILE}: expected a mapping of answers")
    if answers.get("_src_path") != INIT_TEMPLATE_TOKEN:
        raise ProjectError(
            f"{ANSWERS_FILE}: _src_path is {answers.get('_src_path')!r}, not {INIT_TEMPLATE_TOKEN!r}: "
            "the project was not made by pyop init"
        )
    return answers


def init_options(answers: Mapping[str, Any]) -> InitOptions:
    """The `pyop init` options the answers file records, each of the right type."""
    for name, kind in _OPTION_TYPES.items():
        if not isinstance(answers.get(name), kind):
            raise ProjectError(f"{ANSWERS_FILE}: {name} must be a {kind.__name__}, not {answers.get(name)!r}")
    return InitOptions(**{name: answers[name] for name in _OPTION_TYPES})


def _template_root(path: Path) -> Path:
    """A template folder (holding copier.yml), or a templates/ folder holding init/."""
    for candidate in (path, path / "init", path / "templates" / "init"):
        if (candidate / "copier.yml").is_file():
            return candidate
    raise ValidationError(f"--base-templates {path}: no copier.yml there or in init/ below it")
