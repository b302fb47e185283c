"""kubebuilder's flag forms (`--resource=true`, `--make=false`) and full-match name rules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer

from pyscaffold_op.cli import app
from pyscaffold_op.commands.boolflags import FALSE_VALUES, TRUE_VALUES, normalize
from pyscaffold_op.dev.regen import GOLDEN_DIR

from .conftest import AT_INIT, RunPyop, assert_one_line_error, snapshot

SEED_INIT = "pyop init --domain viper.run --repo github.com/AbyssViper/programming-kubernetes"
SEED_API = (
    "pyop create api --group programming-kubernetes --version v1alpha1 --kind At "
    "--resource=true --controller=true"
)
API = ["create", "api", "--group", "programming-kubernetes", "--version", "v1alpha1", "--kind", "At"]


def pyop_command() -> list[str]:
    """The console script next to this interpreter, as `pip install` made it (else `-m pyscaffold_op`)."""
    script = Path(sys.executable).parent / "pyop"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "pyscaffold_op"]


@pytest.mark.slow
def test_the_seed_commands_run_literally_and_give_the_golden_tree(tmp_path: Path) -> None:
    root = tmp_path / "programming-kubernetes"  # the folder names the project (docs/cli.md: mkdir, cd)
    root.mkdir()
    for line in (SEED_INIT, SEED_API):
        args = line.split()[1:]
        result = subprocess.run([*pyop_command(), *args], cwd=root, capture_output=True, text=True)
        assert result.returncode == 0, (line, result.stderr)
    produced = {k: v for k, v in snapshot(root).items() if "__pycache__" not in k}
    assert produced == snapshot(GOLDEN_DIR)


def root_command() -> typer.main.TyperGroup:
    return typer.main.get_command(app)  # type: ignore[return-value]


@pytest.mark.parametrize("value", sorted(TRUE_VALUES))
def test_every_true_spelling_of_parsebool_is_the_flag(value: str) -> None:
    assert normalize(root_command(), [*API, f"--resource={value}"]) == [*API, "--resource"]


@pytest.mark.parametrize("value", sorted(FALSE_VALUES))
def test_every_false_spelling_of_parsebool_is_the_opposite_flag(value: str) -> None:
    assert normalize(root_command(), [*API, f"--make={value}"]) == [*API, "--no-make"]


def test_only_boolean_flags_of_the_resolved_command_are_rewritten() -> None:
    command = root_command()
    init = ["init", "--domain", "x.io", "--repo", "github.com/a/b"]
    # the value of --owner is not an option, whatever it looks like
    assert normalize(command, [*init, "--owner", "--multigroup=true"]) == [
        *init,
        "--owner",
        "--multigroup=true",
    ]
    assert normalize(command, [*init, "--owner=--multigroup=true"]) == [*init, "--owner=--multigroup=true"]
    # create api has no --multigroup: click reports it as an unknown option
    assert normalize(command, [*API, "--multigroup=true"]) == [*API, "--multigroup=true"]
    # not a boolean: click reports it
    assert normalize(command, [*API, "--resource=maybe"]) == [*API, "--resource=maybe"]
    # after `--` nothing is an option
    assert normalize(command, [*API, "--", "--force=true"]) == [*API, "--", "--force=true"]
    # the negative spelling takes a value too
    assert normalize(command, [*API, "--no-resource=false"]) == [*API, "--resource"]
    assert normalize(command, [*API, "--cluster-scoped=false"]) == [*API, "--namespaced"]


def test_kubebuilder_forms_set_what_they_say(pyop: RunPyop, tmp_path: Path) -> None:
    run = pyop(*AT_INIT, "--multigroup=true", "--namespaced=false", cwd=tmp_path)
    assert run.code == 0, run.err
    project = (tmp_path / "PROJECT").read_text()
    assert "multigroup: true\n" in project and "namespaced" not in project
    run = pyop(
        *API, "--namespaced=false", "--controller=false", "--make=false", "--force=false", cwd=tmp_path
    )
    assert run.code == 0, run.err
    project = (tmp_path / "PROJECT").read_text()
    assert "namespaced: false\n" in project and "controller: true" not in project
    types = next(tmp_path.rglob("at_types.py")).read_text()
    assert "+kubebuilder:resource:scope=Cluster" in types
    assert not list(tmp_path.rglob("at_controller.py"))
    # --force=true overwrites like --force; --resource=false adds the controller to the existing types
    run = pyop(*API, "--resource=false", "--controller=true", "--make=false", "--force=true", cwd=tmp_path)
    assert run.code == 0, run.err
    assert list(tmp_path.rglob("at_controller.py"))


def test_a_non_boolean_value_is_a_usage_error_that_changes_nothing(pyop: RunPyop, initialized: Path) -> None:
    before = snapshot(initialized)
    run = pyop(*API, "--resource=yes", "--make=false", cwd=initialized)
    assert run.code == 2 and "--resource" in run.err
    assert snapshot(initialized) == before


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--group", "programming-kubernetes\n"),
        ("--version", "v1alpha1\n"),
        ("--kind", "At\n"),
        ("--plural", "ats\n"),
    ],
)
def test_create_api_names_must_match_whole(pyop: RunPyop, initialized: Path, flag: str, value: str) -> None:
    args = {"--group": "programming-kubernetes", "--version": "v1alpha1", "--kind": "At"}
    args[flag] = value
    flat = [item for pair in args.items() for item in pair]
    before = snapshot(initialized)
    assert_one_line_error(pyop("create", "api", *flat, "--no-make", cwd=initialized), repr(value))
    assert snapshot(initialized) == before


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--domain", "viper.run\n"),
        ("--repo", "github.com/a/b\n"),
        ("--repo", "github.com/a\n/b"),
        ("--repo", "github.com/a\t/b"),
        ("--project-name", "b\n"),
    ],
)
def test_init_names_must_match_whole(pyop: RunPyop, tmp_path: Path, flag: str, value: str) -> None:
    args = {"--domain": "viper.run", "--repo": "github.com/a/b"}
    args[flag] = value
    flat = [item for pair in args.items() for item in pair]
    assert_one_line_error(pyop("init", *flat, cwd=tmp_path), repr(value))
    assert list(tmp_path.iterdir()) == []
