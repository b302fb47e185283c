"""The console entry end to end: a real process, its exit status and stderr, and lazy imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import snapshot


def pyop_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyscaffold_op", *args], cwd=cwd, capture_output=True, text=True
    )


def test_bad_input_in_a_real_process_is_one_stderr_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "keep").write_text("x\n")
    before = snapshot(tmp_path)
    result = pyop_process("init", "--domain", "Bad_Domain", "--repo", "github.com/a/b", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: invalid domain 'Bad_Domain'")
    assert snapshot(tmp_path) == before


def test_create_api_outside_a_project_in_a_real_process(tmp_path: Path) -> None:
    result = pyop_process("create", "api", "--group", "g", "--version", "v1", "--kind", "At", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("error: no PROJECT file") and result.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_help_lists_the_scaffolding_commands(tmp_path: Path) -> None:
    result = pyop_process("--help", cwd=tmp_path)
    assert result.returncode == 0
    assert "init" in result.stdout and "create" in result.stdout
    api_help = pyop_process("create", "api", "--help", cwd=tmp_path).stdout
    api_flags = [
        "--group",
        "--version",
        "--kind",
        "--resource / --no-resource",
        "--controller / --no-controller",
    ]
    api_flags += ["--namespaced / --no-namespaced, --cluster-scoped", "--plural", "--force / --no-force"]
    api_flags += ["--make / --no-make"]
    assert all(flag in api_help for flag in api_flags)
    init_help = pyop_process("init", "--help", cwd=tmp_path).stdout
    for flag in (
        "--domain",
        "--repo",
        "--project-name",
        "--owner",
        "--license",
        "--namespaced",
        "--multigroup",
    ):
        assert flag in init_help


def test_the_cli_imports_no_scaffolding_machinery_until_a_command_runs() -> None:
    heavy = ["copier", "jinja2", "yaml", "ruamel"]
    heavy += [f"pyscaffold_op.scaffold.{name}" for name in ("init", "api", "render", "tree")]
    code = "import sys, pyscaffold_op.cli; "
    code += f"print(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r} or m in {heavy!r}))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
