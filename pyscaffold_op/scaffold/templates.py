"""Where the scaffolding templates live: inside the installed package, or in a source checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pyscaffold_op
from pyscaffold_op.errors import PyopError

# The token recorded in `.copier-answers.yml` instead of an absolute path, so answers files are the
# same on every machine. `pyop upgrade` maps it back to `templates_dir() / "init"`.
INIT_TEMPLATE_TOKEN = "pyscaffold-op:templates/init"


@cache
def templates_dir() -> Path:
    """`pyscaffold_op/templates` in a wheel, else the repository's `templates/` (editable installs)."""
    package_dir = Path(pyscaffold_op.__file__).resolve().parent
    for candidate in (package_dir / "templates", package_dir.parent / "templates"):
        if (candidate / "init" / "copier.yml").is_file():
            return candidate
    raise PyopError(f"pyop templates not found next to {package_dir}: the installation is incomplete")
