"""kubebuilder's boolean flag forms on top of click: `--resource`, `--resource=true|false`, `--no-resource`.

kubebuilder parses flags with pflag, where a boolean flag takes an optional `=value` (what its docs and
users write: `--resource=true --controller=false`). click refuses a value on a flag, so `main` rewrites
argv once, before click parses it: `--flag=<true>` becomes `--flag` and `--flag=<false>` becomes the
flag's opposite (`--no-flag`), or nothing when the flag has no opposite (a plain switch is off by
default). Only the options of the command argv resolves to are rewritten, so an option value that
merely looks like a flag (`--owner --force=true`) is left alone.

typer ships its own copy of click, so commands and options are read through the attributes every click
version has (`params`, `opts`, `secondary_opts`, `is_flag`, `commands`) rather than click's classes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class Option(Protocol):
    opts: list[str]
    secondary_opts: list[str]
    is_flag: bool
    is_bool_flag: bool
    nargs: int


class Command(Protocol):
    params: Sequence[Any]


# The spellings Go's strconv.ParseBool accepts, which is what pflag parses `--flag=value` with.
TRUE_VALUES = frozenset({"1", "t", "T", "TRUE", "true", "True"})
FALSE_VALUES = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def normalize(command: Command, args: list[str]) -> list[str]:
    """`args` with every `--<bool flag>=<value>` of the commands they name turned into click's form.

    A value that is not a boolean is left in place, so click reports it as a usage error naming the flag.
    """
    out: list[str] = []
    current = command
    takes_value = False
    for index, arg in enumerate(args):
        if takes_value:
            out.append(arg)
            takes_value = False
            continue
        if arg == "--":
            out.extend(args[index:])
            break
        if arg.startswith("--") and "=" in arg:
            name, _, value = arg.partition("=")
            flag = _bool_flag(current, name)
            if flag is not None and (value in TRUE_VALUES or value in FALSE_VALUES):
                out.extend(_rewrite(flag, name, value in TRUE_VALUES))
                continue
            out.append(arg)
            continue
        if arg.startswith("-") and arg != "-":
            option = _option(current, arg)
            takes_value = option is not None and not option.is_flag and option.nargs != 0
            out.append(arg)
            continue
        subcommands: Mapping[str, Command] = getattr(current, "commands", {})
        if arg in subcommands:
            current = subcommands[arg]
        out.append(arg)
    return out


def _option(command: Command, name: str) -> Option | None:
    for param in command.params:
        if name in getattr(param, "opts", ()) or name in getattr(param, "secondary_opts", ()):
            return param  # type: ignore[no-any-return]
    return None


def _bool_flag(command: Command, name: str) -> Option | None:
    option = _option(command, name)
    return option if option is not None and option.is_flag and option.is_bool_flag else None


def _rewrite(flag: Option, name: str, value: bool) -> list[str]:
    """The click spelling of `name=value`: the name itself when true, its opposite when false."""
    if value:
        return [name]
    opposite = flag.secondary_opts if name in flag.opts else flag.opts
    return [opposite[0]] if opposite else []
