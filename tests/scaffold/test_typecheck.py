"""`make typecheck`: a scaffolded project passes pyright in strict mode, as its pyproject.toml configures it.

The project's own `[tool.pyright]` is used, with this checkout on pyright's search path (the installed
pyscaffold-op may be another copy). The project has what every scaffold command adds: an API with its
controller, a namespaced manager, a controller for a built-in kind, a deploy-image API, APIs with
`--ssa` (namespaced and cluster-scoped), `--daemon` and `--timer`, and defaulting,
validating and conversion webhooks. pyright (the `pyright` distribution) runs on the node.js on PATH;
without one it would fetch node, which a test must not: it is skipped then.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from .conftest import AT_API, AT_INIT, RunPyop
from .test_wiring import SCENARIOS, scaffold

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed (pyright runs on it)"),
]


def pyright() -> list[str]:
    try:
        import pyright as _  # noqa: F401
    except ImportError:
        pytest.skip("pyright is not installed (pip install pyright)")
    return [sys.executable, "-m", "pyright"]


def test_the_scaffold_passes_pyright_strict(pyop: RunPyop, tmp_path: Path) -> None:
    command = pyright()
    root = tmp_path / "project"
    root.mkdir()
    steps = [
        [*AT_INIT, "--namespaced", "--multigroup"],
        AT_API,
        ["create", "api", "--group", "apps", "--version", "v1", "--kind", "Deployment",
         "--resource=false", "--no-make"],
        ["create", "api", "--group", "cache", "--version", "v1alpha1", "--kind", "Memcached",
         "--image", "memcached:1.6", "--plugins", "deploy-image/v1-alpha", "--no-make"],
        ["create", "api", "--group", "programming-kubernetes", "--version", "v2", "--kind", "At",
         "--controller=false", "--no-make"],
        ["create", "api", "--group", "crew", "--version", "v1", "--kind", "Navigator", "--ssa", "--no-make"],
        ["create", "api", "--group", "crew", "--version", "v1", "--kind", "Harbor", "--ssa",
         "--cluster-scoped", "--daemon", "--no-make"],
        ["create", "api", "--group", "crew", "--version", "v1", "--kind", "Lighthouse", "--daemon",
         "--timer", "--no-make"],
        ["create", "webhook", "--group", "programming-kubernetes", "--version", "v1alpha1", "--kind", "At",
         "--defaulting", "--programmatic-validation", "--conversion", "--spoke", "v2", "--make=false"],
    ]  # fmt: skip
    for args in steps:
        run = pyop(*args, cwd=root)
        assert run.code == 0, (args, run.err)
    # what a user writes first in a conversion: reading and changing the dicts (issue 35: they were Unknown)
    conversion = root / "src/programming_kubernetes/api/programming_kubernetes/v2/at_conversion.py"
    text = conversion.read_text()
    assert text.count("        data") == 2
    edit = '        spec = data["spec"]\n        data["spec"] = {**spec, "foo": spec.get("foo") or "x"}\n'
    conversion.write_text(text.replace("        return ", edit + "        return "))

    errors, analyzed = pyright_errors(root, command)
    assert not errors, "\n".join(errors)
    assert analyzed >= 10


def pyright_errors(root: Path, command: list[str]) -> tuple[list[str], int]:
    """`make typecheck` of the project at `root`: pyright's errors (`file:line: message`) and how many
    files it analyzed, under the project's own `[tool.pyright]` with this checkout importable."""
    settings = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["pyright"]
    assert settings["typeCheckingMode"] == "strict"
    config = {**settings, "extraPaths": [str(REPO_ROOT), "src"]}
    (root / "pyrightconfig.json").write_text(json.dumps(config))  # takes precedence over pyproject.toml
    try:
        result = subprocess.run(
            [*command, "--outputjson"], cwd=root, capture_output=True, text=True, timeout=500
        )
    finally:
        (root / "pyrightconfig.json").unlink()
    report = json.loads(result.stdout)
    errors = [
        f"{d['file'].removeprefix(str(root) + '/')}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    return errors, report["summary"]["filesAnalyzed"]


def lint_errors(root: Path) -> str:
    """`make lint` of the project at `root`: what ruff reports, empty when clean."""
    out = ""
    for args in (["check", "src", "tests"], ["format", "--check", "src", "tests"]):
        run = subprocess.run([sys.executable, "-m", "ruff", *args], cwd=root, capture_output=True, text=True)
        if run.returncode != 0:
            out += run.stdout + run.stderr
    return out


def test_the_finished_at_example_passes_make_typecheck_and_lint(tmp_path: Path) -> None:
    """Issue 35: the example the README points to failed its own `make typecheck` (18 errors:
    `eventually()` kept None in its result, `default_factory=list` was a list of Unknown)."""
    command = pyright()
    root = tmp_path / "at"
    shutil.copytree(REPO_ROOT / "testdata" / "at", root, ignore=shutil.ignore_patterns("__pycache__"))
    errors, analyzed = pyright_errors(root, command)
    assert not errors, "\n".join(errors)
    assert analyzed >= 8
    assert lint_errors(root) == ""


def test_the_cronjob_tutorials_port_passes_make_typecheck_and_lint(tmp_path: Path) -> None:
    """testdata/cronjob: two versions, conversion, webhooks and a controller, in strict mode."""
    command = pyright()
    root = tmp_path / "cronjob"
    shutil.copytree(REPO_ROOT / "testdata" / "cronjob", root, ignore=shutil.ignore_patterns("__pycache__"))
    errors, analyzed = pyright_errors(root, command)
    assert not errors, "\n".join(errors)
    assert analyzed >= 20
    assert lint_errors(root) == ""


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_scaffolded_combination_passes_make_typecheck_and_lint(
    pyop: RunPyop, tmp_path: Path, name: str
) -> None:
    """The create/delete sequences of test_wiring.py (kubebuilder's reference projects' combinations)."""
    command = pyright()
    root = tmp_path / name
    scaffold(pyop, root, SCENARIOS[name])
    errors, _ = pyright_errors(root, command)
    assert not errors, "\n".join(errors)
    assert lint_errors(root) == ""


def test_make_typecheck_runs_pyright_and_ci_runs_it(pyop: RunPyop, tmp_path: Path) -> None:
    assert pyop(*AT_INIT, cwd=tmp_path).code == 0
    makefile = (tmp_path / "Makefile").read_text()
    assert "typecheck: ## " in makefile and "\t$(PYTHON) -m pyright\n" in makefile
    assert "all: manifests lint typecheck test" in makefile
    extra = tomllib.loads((tmp_path / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(r.startswith("pyright") for r in extra["test"])
    assert "run: make typecheck" in (tmp_path / ".github/workflows/lint.yml").read_text()
