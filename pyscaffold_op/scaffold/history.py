"""Earlier revisions of the init template, shipped with pyop so `pyop upgrade` can merge three ways
without the release that made the project.

`templates/history/init.json.xz` holds every revision of `templates/init` since projects record one
(`_commit` in `.copier-answers.yml`), content-addressed: `{"format": 1, "blobs": {digest: text},
"revisions": {revision: {relpath: digest}}}`. Files repeat across revisions, so twenty revisions are
about 11 KB. `python -m pyscaffold_op.dev.regen` (`make testdata`) adds the current revision; a test
fails when the shipped history lacks it, as golden files fail on drift. Revisions are only ever added:
a project made by any earlier pyop finds the template it was made from.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import lzma
import tempfile
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

HISTORY_FILE = Path("history") / "init.json.xz"
_FORMAT = 1


@cache
def _load(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {"format": _FORMAT, "blobs": {}, "revisions": {}}
    data = json.loads(lzma.decompress(path.read_bytes()))
    if data.get("format") != _FORMAT:
        raise ValueError(f"{path}: template history format {data.get('format')!r}, expected {_FORMAT}")
    return data


def shipped_revisions(templates: Path) -> list[str]:
    """The init template revisions this pyop can render as a base, oldest first."""
    return list(_load(templates / HISTORY_FILE)["revisions"])


@contextlib.contextmanager
def materialized(templates: Path, revision: str) -> Iterator[Path | None]:
    """The init template of `revision` written into a temporary folder (None: not in the history)."""
    history = _load(templates / HISTORY_FILE)
    files = history["revisions"].get(revision)
    if files is None:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="pyop-template-") as tmp:
        root = Path(tmp) / "init"
        for relpath, digest in files.items():
            path = root / relpath
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(history["blobs"][digest], encoding="utf-8", newline="")
        yield root


def template_files(root: Path) -> dict[str, str]:
    """Every file of a template tree that its revision covers: relative POSIX path -> text."""
    from pyscaffold_op.scaffold.tree import revision_files

    return {relpath: path.read_bytes().decode("utf-8") for relpath, path in revision_files(root)}


def add_revision(history_file: Path, revision: str, files: dict[str, str]) -> bool:
    """Record `files` as `revision` in the history file; False when it was there already."""
    history = _load(history_file)
    if revision in history["revisions"]:
        return False
    blobs = dict(history["blobs"])
    manifest = {}
    for relpath, text in sorted(files.items()):
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]
        blobs[digest] = text
        manifest[relpath] = digest
    revisions = {**history["revisions"], revision: manifest}
    data = {"format": _FORMAT, "blobs": dict(sorted(blobs.items())), "revisions": revisions}
    history_file.parent.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(data, indent=0, sort_keys=False, ensure_ascii=False).encode("utf-8")
    history_file.write_bytes(lzma.compress(raw, preset=9 | lzma.PRESET_EXTREME))
    _load.cache_clear()
    return True
