"""The docs site (mkdocs.yml over docs/) builds with `mkdocs build --strict`: every page in the nav, the API
reference rendered from the docstrings (mkdocstrings), links between pages that resolve."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python"):
        try:
            __import__(module)
        except ImportError:
            pytest.skip(f"{module} is not installed (pip install -e '.[docs]')")
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=280,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    for page in ("coming-from-kopf", "coming-from-kubebuilder", "envtest", "tutorial-at"):
        assert (site / page / "index.html").is_file(), page
    reference = (site / "reference" / "manager-cmd" / "index.html").read_text()
    assert "run_manager" in reference and "ManagerFlags" in reference  # rendered from the docstrings
    runtime = (site / "reference" / "runtime" / "index.html").read_text()
    assert "ManagerOptions" in runtime


def test_the_devcontainer_installs_the_test_and_docs_extras() -> None:
    import json
    import re

    text = (REPO_ROOT / ".devcontainer" / "devcontainer.json").read_text()
    config = json.loads(re.sub(r"(?m)^\s*//.*$", "", text))  # JSON with comments
    assert ".[test,docs]" in config["postCreateCommand"]
