"""The `pyop` console script: the command line, or one clear line when its extra is not installed.

`pip install pyscaffold-op` installs the runtime only, yet pip still installs the `pyop` script (entry points
cannot depend on extras), so a missing command-line library must say how to get it instead of a traceback.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata

DISTRIBUTION = "pyscaffold-op"
CLI_EXTRA = "cli"
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[([^\]]*)\])?")
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]""")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def extra_requirements(extra: str, requires: list[str]) -> set[str]:
    """Distribution names an extra pulls in, following the package's self-references (`pkg[other]`)."""
    wanted, seen, names = [extra], set(), set()
    while wanted:
        current = wanted.pop()
        if current in seen:
            continue
        seen.add(current)
        for requirement in requires:
            name, _, marker = requirement.partition(";")
            extras = _EXTRA_MARKER.findall(marker)
            if current not in extras:
                continue
            match = _NAME.match(name)
            if match is None:
                continue
            if _canonical(match.group(1)) == DISTRIBUTION:
                wanted.extend(part.strip() for part in (match.group(2) or "").split(",") if part.strip())
            else:
                names.add(match.group(1))
    return names


def missing_cli_distributions() -> list[str]:
    """The command line's distributions that are not installed (empty when pyop runs from a checkout)."""
    try:
        requires = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return []
    missing = []
    for name in sorted(extra_requirements(CLI_EXTRA, requires)):
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    return missing


def main(argv: list[str] | None = None) -> None:
    try:
        from pyscaffold_op.cli import main as cli_main

        cli_main(argv)
    except ModuleNotFoundError:
        missing = missing_cli_distributions()
        if not missing:
            raise
        print(
            f"error: the pyop command needs its extra: pip install '{DISTRIBUTION}[{CLI_EXTRA}]' "
            f"(missing: {', '.join(missing)})",
            file=sys.stderr,
        )
        sys.exit(2)
