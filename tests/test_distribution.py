"""The dependency split: what an operator imports needs only the runtime's declared dependencies.

Each check imports a part in a fresh interpreter whose import system refuses every top-level module of an
installed distribution outside that part's closure (computed from pyop's own metadata), so a stray import
of typer, jinja2, copier, ... fails here instead of in a user's operator image.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from pyscaffold_op import console

DIST = "pyscaffold-op"
REPO_ROOT = Path(__file__).resolve().parents[1]
# The brief's list: none of these may be needed by the runtime.
CLI_ONLY_MODULES = {
    "typer", "jinja2", "copier", "datamodel_code_generator", "openapi_schema_validator"
}  # fmt: skip
# Installed by the test extra (lightkube objects are still accepted), but not the runtime's: the runtime
# reads kubeconfigs itself (issue 11's closure budget).
NOT_RUNTIME_MODULES = {"lightkube", "httpx2", "yaml"}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def own_requires() -> list[str]:
    """pyop's requirements as its wheel's metadata states them, from the checkout's pyproject.toml: the
    installed (editable) metadata may be an older checkout's."""
    import tomllib

    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    requires = list(project["dependencies"])
    for extra, reqs in project["optional-dependencies"].items():
        for text in reqs:
            req = Requirement(text)
            marker = f"({req.marker}) and " if req.marker else ""
            req.marker = None
            requires.append(f"{req}; {marker}extra == {extra!r}")
    return requires


def closure(roots: list[tuple[str, set[str]]]) -> set[str]:
    """Canonical names of the installed distributions `roots` (name, extras) pull in, transitively."""
    seen: set[tuple[str, frozenset[str]]] = set()
    names: set[str] = set()
    todo = [(_canonical(name), frozenset(extras)) for name, extras in roots]
    while todo:
        name, extras = todo.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        names.add(name)
        try:
            requires = own_requires() if name == DIST else metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            req = Requirement(text)
            if req.marker is not None and not any(
                req.marker.evaluate({"extra": extra}) for extra in (extras or {""})
            ):
                continue
            todo.append((_canonical(req.name), frozenset(req.extras)))
    return names


def blocked_modules(allowed: set[str]) -> set[str]:
    """Top-level modules of installed distributions outside `allowed`."""
    blocked = set()
    for module, dists in metadata.packages_distributions().items():
        if module == "pyscaffold_op" or module.startswith("_") or "." in module:
            continue
        if not any(_canonical(d) in allowed for d in dists):
            blocked.add(module)
    return blocked


_CHILD = textwrap.dedent(
    """
    import importlib, json, pkgutil, sys
    from importlib.abc import MetaPathFinder

    blocked = set(json.loads(sys.argv[1]))

    class Block(MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in blocked:
                raise ModuleNotFoundError(f"blocked: {name} is not a dependency of this part", name=name)
            return None

    sys.meta_path.insert(0, Block())
    for package in json.loads(sys.argv[2]):
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(getattr(module, "__path__", []), package + "."):
            if info.name not in json.loads(sys.argv[3]):
                importlib.import_module(info.name)
        for name in getattr(module, "__all__", []):
            getattr(module, name)
    print("ok")
    """
)


def import_with_only(allowed: set[str], packages: list[str], skip: tuple[str, ...] = ()) -> str:
    blocked = blocked_modules(allowed)
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(sorted(blocked)), json.dumps(packages), json.dumps(skip)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_cli_libraries_are_outside_the_runtime_closure() -> None:
    runtime = closure([(DIST, set())])
    blocked = blocked_modules(runtime)
    # Installed for the test suite, so the block list must name them: the checks below are not vacuous.
    assert blocked >= CLI_ONLY_MODULES
    assert {"pydantic", "aiohttp", "ruamel-yaml", "cryptography"} <= runtime
    assert not {"ecdsa", "asn1crypto"} & runtime  # CVE-2024-23342, unmaintained: issue 29
    assert blocked >= NOT_RUNTIME_MODULES
    assert "pydantic" not in blocked and "aiohttp" not in blocked


def test_runtime_imports_with_only_its_own_dependencies() -> None:
    runtime = closure([(DIST, set())])
    out = import_with_only(
        runtime, ["pyscaffold_op.apimachinery", "pyscaffold_op.runtime", "pyscaffold_op.testing"]
    )
    assert out.strip() == "ok"


def test_emulator_imports_with_the_envtest_extra_only() -> None:
    allowed = closure([(DIST, {"envtest"}), ("pytest", set())])
    assert "typer" not in allowed and "copier" not in allowed
    out = import_with_only(allowed, ["pyscaffold_op.envtest"])
    assert out.strip() == "ok"


def test_a_blocked_import_is_reported() -> None:
    """The harness itself: importing the CLI with the runtime's closure must fail on typer."""
    runtime = closure([(DIST, set())])
    with pytest.raises(AssertionError, match="blocked: typer"):
        import_with_only(runtime, ["pyscaffold_op.cli"])


def test_extras_follow_self_references() -> None:
    requires = [
        "pydantic>=2.11",
        "pyyaml>=6.0; extra == 'envtest'",
        'pyscaffold-op[envtest]; extra == "cli"',
        'typer>=0.12; extra == "cli"',
        "pytest>=8; extra == 'test'",
    ]
    assert console.extra_requirements("cli", requires) == {"pyyaml", "typer"}
    assert console.extra_requirements("envtest", requires) == {"pyyaml"}


def test_pyop_without_its_extra_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "typer", None)  # import typer -> ModuleNotFoundError
    monkeypatch.delitem(sys.modules, "pyscaffold_op.cli", raising=False)
    monkeypatch.setattr(console, "missing_cli_distributions", lambda: ["copier", "typer"])
    with pytest.raises(SystemExit) as exit_info:
        console.main(["--version"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "pip install 'pyscaffold-op[cli]'" in err and "missing: copier, typer" in err


def test_pyop_with_its_extra_reraises_a_real_import_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "typer", None)
    monkeypatch.delitem(sys.modules, "pyscaffold_op.cli", raising=False)
    monkeypatch.setattr(console, "missing_cli_distributions", lambda: [])
    with pytest.raises(ModuleNotFoundError):
        console.main(["--version"])


def test_installed_metadata_declares_the_split() -> None:
    requires = own_requires()
    base = {_canonical(Requirement(r).name) for r in requires if Requirement(r).marker is None}
    assert not base & {"typer", "jinja2", "copier", "datamodel-code-generator"}
    assert not base & {"lightkube", "httpx2", "pyyaml"}  # the runtime closure budget (bench_install.py)
    assert not base & {"ecdsa", "asn1crypto"}  # CVE-2024-23342 / unmaintained (issue 29)
    assert _canonical("typer") in {_canonical(n) for n in console.extra_requirements("cli", requires)}
