"""Where the real tools pyop is judged by are found (`make oracles` builds them into bin/)."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
MISSING = "is not installed"
"""The words of a test's skip reason when a tool is absent (tests/conftest.py fails such skips on CI)."""


def oracle_bin(name: str) -> Path | None:
    """`$PYOP_ORACLES_BIN/<name>`, else `<repo>/bin/<name>`; None when neither is an executable."""
    folders = [Path(p) for p in os.environ.get("PYOP_ORACLES_BIN", "").split(os.pathsep) if p]
    for folder in [*folders, REPO_ROOT / "bin"]:
        path = folder / name
        if path.is_file() and os.access(path, os.X_OK):
            return path
    return None


def missing_reason(name: str) -> str:
    return f"{name} {MISSING} (make oracles builds it into bin/, or set PYOP_ORACLES_BIN=<folder>)"
