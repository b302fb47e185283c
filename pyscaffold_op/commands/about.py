"""`pyop version` and `pyop completion`: what is installed, and shell completion for the command line.

Completion is click's, through typer's shell classes: the script `pyop completion bash` prints calls
`pyop` back with `_PYOP_COMPLETE=complete_bash` and the words typed so far (COMP_WORDS, COMP_CWORD);
`cli.main` answers those calls before any flag is parsed.
"""

from __future__ import annotations

import json
import platform
import sys
from enum import StrEnum
from importlib import resources

import typer

COMPLETE_VAR = "_PYOP_COMPLETE"


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


def kubernetes_versions() -> dict[str, str]:
    """The Kubernetes release the built-in models come from, and the one the emulator reports (/version)."""
    out: dict[str, str] = {}
    try:
        spec = json.loads(resources.files("pyscaffold_op.models").joinpath("_spec.json").read_text("utf-8"))
        out["models"] = str(spec["version"])
    except (OSError, KeyError, ValueError):
        pass
    try:
        from pyscaffold_op.envtest.server.discovery import VERSION

        out["envtest"] = str(VERSION["gitVersion"])
    except ImportError:  # the envtest extra is not installed
        pass
    return out


def version() -> None:
    """Print pyop's version, the Kubernetes versions it is built for, Python's and the platform."""
    from pyscaffold_op import __version__

    kube = kubernetes_versions()
    lines = [
        f"pyop {__version__}",
        f"kubernetes {kube.get('models', 'unknown')} (built-in models; envtest reports "
        f"{kube.get('envtest', 'nothing: the envtest extra is not installed')})",
        f"python {platform.python_version()} ({platform.python_implementation()}, {sys.executable})",
        f"platform {platform.system().lower()}/{platform.machine()}",
    ]
    typer.echo("\n".join(lines))


def completion(
    shell: Shell = typer.Argument(..., help="The shell to complete in: bash, zsh or fish."),
) -> None:
    """Print the shell completion script for pyop; source it from your shell's start-up file."""
    from typer._completion_shared import get_completion_script

    script = get_completion_script(prog_name="pyop", complete_var=COMPLETE_VAR, shell=shell.value)
    typer.echo(script, nl=False)


def register(app: typer.Typer) -> None:
    """Add `pyop version` and `pyop completion` to the root app."""
    app.command("version")(version)
    app.command("completion")(completion)
