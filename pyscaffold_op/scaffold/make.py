"""Run a target of the generated project's Makefile after scaffolding (`create api --make`)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from pyscaffold_op.errors import PyopError


class MakeError(PyopError):
    """`make <target>` failed after the files were written: not an input error, so exit status 1."""

    exit_code = 1


def run_make(root: Path, target: str) -> None:
    make = shutil.which("make")
    if make is None:
        raise MakeError(
            f"the files were written, but `make {target}` cannot run: no make on PATH (use --no-make)"
        )
    command = [make, target]
    if "PYOP" not in os.environ:
        # the Makefile's $(PYOP): this very installation, even when its scripts are not on PATH
        command.append(f"PYOP={shlex.quote(sys.executable)} -m pyscaffold_op")
    result = subprocess.run(command, cwd=root, check=False)
    if result.returncode != 0:
        raise MakeError(
            f"the files were written, but `make {target}` failed with exit status {result.returncode}; "
            f"fix the cause and run `make {target}` again"
        )
