"""The `pyop` command line. Thin: parse flags, call the scaffold/gen/envtest layers, print.

Heavy libraries (jinja2, datamodel-code-generator, validators, aiohttp) are imported inside the
commands, never here, so `pyop --help` stays fast.
"""

from __future__ import annotations

import os
import sys

import typer

from pyscaffold_op import __version__
from pyscaffold_op.commands import about, boolflags, examples
from pyscaffold_op.commands import envtest as envtest_commands
from pyscaffold_op.commands import generate as generate_commands
from pyscaffold_op.commands import lifecycle as lifecycle_commands
from pyscaffold_op.commands import olm as olm_commands
from pyscaffold_op.commands import scaffold as scaffold_commands
from pyscaffold_op.errors import PyopError

app = typer.Typer(
    name="pyop",
    help="Build Kubernetes operators in Python: scaffold, generate CRDs and RBAC, run and test.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # `pyop completion bash|zsh|fish` prints the script (commands/about.py), not typer's
    # --install-completion, which edits start-up files
    add_completion=False,
    rich_markup_mode=None,  # plain click help: rendering it with rich costs ~0.15 s per `pyop --help`
)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"pyop {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """pyop: the Python answer to kubebuilder and operator-sdk."""


scaffold_commands.register(app)
about.register(app)
lifecycle_commands.register(app)
app.add_typer(generate_commands.app, name="generate")
app.add_typer(envtest_commands.app, name="envtest")
olm_commands.register(app, generate_commands.app)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry: every `PyopError`, and any failure of the file system (a full disk, a
    name too long) or Ctrl-C, becomes one line on stderr and exit status 2, never a traceback.
    The scaffolding commands roll back what they had moved into place before the error reaches here.

    Boolean flags also take kubebuilder's `--flag=true|false` form (see `commands.boolflags`).
    """
    command = typer.main.get_command(app)
    examples.attach(command)
    if about.COMPLETE_VAR in os.environ:  # a shell asking for completions (`pyop completion`'s script)
        from typer.completion import completion_init

        completion_init()
        command.main(args=[], prog_name="pyop", complete_var=about.COMPLETE_VAR)
        return
    args = boolflags.normalize(command, sys.argv[1:] if argv is None else list(argv))
    try:
        command.main(args=args, prog_name="pyop")
    except PyopError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(err.exit_code)
    except OSError as err:
        where = f"{err.filename}: " if err.filename else ""
        print(f"error: {where}{err.strerror or err}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
