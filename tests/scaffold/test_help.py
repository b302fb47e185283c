"""Every command's --help: an Examples section whose commands parse, readable metavars; create api's hint."""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from pyscaffold_op.cli import app
from pyscaffold_op.commands import boolflags
from pyscaffold_op.commands.examples import EXAMPLES

from .conftest import AT_API, PACKAGE, RunPyop


def commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from commands(sub, (*path, name))


ROOT = typer.main.get_command(app)
PATHS = [path for path, _ in commands(ROOT)]


def example_commands(text: str) -> Iterator[list[str]]:
    """The `pyop ...` lines of an Examples text, continuation lines joined, shell syntax removed."""
    lines = text.replace("\\\n", " ").splitlines()
    for line in lines:
        words = shlex.split(line.strip(), comments=True)
        if words and words[-1] == "&":
            words.pop()
        if words[:1] == ["pyop"]:
            yield words[1:]


@pytest.mark.parametrize("path", PATHS, ids=[" ".join(path) or "pyop" for path in PATHS])
def test_every_command_has_examples(pyop: RunPyop, tmp_path: Path, path: tuple[str, ...]) -> None:
    run = pyop(*path, "--help", cwd=tmp_path)
    assert run.code == 0, run.err
    examples = run.out.split("Examples:\n", 1)[1]
    assert "  # " in examples and "  pyop " in examples
    # click keeps the example lines as written (`\b`), it does not re-wrap them
    for line in EXAMPLES[" ".join(path)].strip("\n").splitlines():
        assert line.rstrip() in examples


@pytest.mark.parametrize("path", PATHS, ids=[" ".join(path) or "pyop" for path in PATHS])
def test_metavars_are_readable(pyop: RunPyop, tmp_path: Path, path: tuple[str, ...]) -> None:
    out = pyop(*path, "--help", cwd=tmp_path).out
    for python_type in ("list[", "Path]", "Optional", "NoneType"):
        assert python_type not in out


def resolve(words: list[str]) -> tuple[Any, list[str]]:
    """The command an argv names and its remaining arguments."""
    command: Any = ROOT
    while words and words[0] in getattr(command, "commands", {}):
        command, words = command.commands[words[0]], words[1:]
    return command, words


EXAMPLE_COMMANDS = [words for text in EXAMPLES.values() for words in example_commands(text)]


@pytest.mark.parametrize("words", EXAMPLE_COMMANDS, ids=[" ".join(w[:3]) for w in EXAMPLE_COMMANDS])
def test_every_example_command_parses(
    words: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for word in words:  # the files an example reads (`--from-crd x.yaml` must exist)
        if word.endswith(".yaml"):
            (tmp_path / word).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / word).write_text("")
    command, args = resolve(boolflags.normalize(ROOT, words))
    assert not hasattr(command, "commands"), f"`pyop {' '.join(words)}` names a group, not a command"
    command.make_context(command.name, args)  # raises on an unknown flag, a bad value, a missing option


def test_create_api_ends_with_what_to_do_next(pyop: RunPyop, initialized: Path) -> None:
    run = pyop(*AT_API, cwd=initialized)
    assert run.code == 0, run.err
    assert run.out.endswith(
        f"Next: define the spec and status in src/{PACKAGE}/api/v1alpha1/at_types.py,\n"
        f"      write the reconcile logic in src/{PACKAGE}/controllers/at_controller.py,\n"
        "      then generate the manifests (CRDs, RBAC) and run the tests:\n"
        "$ make manifests test\n"
    )
    run = pyop(*AT_API, "--resource=false", "--force", cwd=initialized)
    assert run.code == 0, run.err
    assert "Next: edit the API types and the reconciler,\n" in run.out


def test_example_lines_are_not_run_together() -> None:
    # A `\` at a line's end inside a Python string joins the lines (`--defaulting       --defaulting-path`):
    # examples.py writes `\\`, which the help shows as the shell continuation it is.
    for path, text in EXAMPLES.items():
        for line in text.strip("\n").splitlines():
            assert not re.search(r"\S {3,}\S", line), f"{path or 'pyop'}: {line!r}"


@pytest.mark.parametrize("path", [p for p in PATHS if "\\\n" in EXAMPLES[" ".join(p)]])
def test_continuation_lines_print_as_written_at_any_width(
    pyop: RunPyop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: tuple[str, ...]
) -> None:
    monkeypatch.setenv("COLUMNS", "50")  # narrower than the examples: click must not re-wrap them
    out = pyop(*path, "--help", cwd=tmp_path).out
    lines = EXAMPLES[" ".join(path)].strip("\n").splitlines()
    shown = [printed.strip() for printed in out.splitlines()]
    for line, after in itertools.pairwise(lines):
        if line.endswith(" \\"):
            assert after.startswith("      "), after
            at = shown.index(line.strip())  # printed whole, then its continuation on the next line
            assert shown[at + 1] == after.strip(), (line, after)
