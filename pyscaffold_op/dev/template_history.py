"""Record init template revisions in `templates/history/init.json.xz` (see `scaffold/history.py`).

    python -m pyscaffold_op.dev.template_history            # the current templates/init
    python -m pyscaffold_op.dev.template_history --from-git # every revision in this checkout's history

`python -m pyscaffold_op.dev.regen` (make testdata) runs the first form.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from pyscaffold_op.scaffold.history import HISTORY_FILE, add_revision, template_files

REPO_ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = REPO_ROOT / "templates"


def record(template_root: Path, templates: Path = TEMPLATES) -> tuple[str, bool]:
    """Add the revision of the template at `template_root`; (revision, whether it was new)."""
    from pyscaffold_op.scaffold.tree import _revision

    _revision.cache_clear()  # the tree may have changed since it was last digested
    revision = _revision(template_root)
    return revision, add_revision(templates / HISTORY_FILE, revision, template_files(template_root))


def record_git_history(templates: Path = TEMPLATES) -> list[str]:
    """Add every revision `templates/init` had in this checkout's git history; the new ones."""
    commits = subprocess.run(
        ["git", "log", "--reverse", "--format=%H", "--", "templates/init"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    added = []
    for commit in commits:
        with tempfile.TemporaryDirectory() as tmp:
            archive = subprocess.run(
                ["git", "archive", commit, "templates/init"], cwd=REPO_ROOT, capture_output=True, check=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            revision, new = record(Path(tmp) / "templates" / "init", templates)
            if new:
                added.append(revision)
    return added


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pyscaffold_op.dev.template_history", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--from-git", action="store_true", help="also every revision in git history")
    args = parser.parse_args(argv)
    if args.from_git:
        for revision in record_git_history():
            print(f"added {revision} (git history)", file=sys.stderr)
    revision, new = record(TEMPLATES / "init")
    print(f"{'added' if new else 'already recorded:'} {revision} (templates/init)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
