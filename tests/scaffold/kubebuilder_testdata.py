"""kubebuilder's reference projects as it scaffolds them: the command lists of its
`test/testdata/generate.sh` at the pinned version (hack/oracles/versions.env), read from the Go module
cache (`go mod download` fetches it through the Go proxy when it is not there).

The script is bash; what it runs for a project is read the way bash would run it: the `$kb ...` lines
and `make` targets of `scaffold_test_project`, inside the `if [ $project == "..." ]` /
`if [[ $project =~ ... ]]` blocks that hold for the project, `$init_flags` replaced by the flags
the script's last lines give. A line of another form inside the function is an error, so a change of
the script is seen rather than silently skipped.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pyscaffold_op.dev.controllergen import pins

MODULE = "sigs.k8s.io/kubebuilder/v4"
SCRIPT = "test/testdata/generate.sh"
_CONDITION = re.compile(r'\[\[? \$project (==|=~) "?([\w.-]+)"? \]\]?')
# what the function runs besides kubebuilder and make: set-up and Go housekeeping
_IGNORED = ("local ", "shift", "mkdir ", "rm ", "pushd ", "popd", "header_text ", "go mod ", "#")


@dataclass(frozen=True)
class Step:
    tool: str
    """`kb` (a kubebuilder command) or `make` (a make target the script runs)."""
    args: tuple[str, ...]

    def line(self) -> str:
        return " ".join(self.args)


@cache
def generate_sh() -> str | None:
    """The script's text at the pinned kubebuilder, or None without go or the module."""
    go = shutil.which("go")
    if go is None:
        return None
    version = pins()["KUBEBUILDER_VERSION"]
    run = subprocess.run(
        [go, "mod", "download", "-json", f"{MODULE}@{version}"],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        cwd="/",
    )
    if run.returncode != 0:
        return None
    path = Path(json.loads(run.stdout)["Dir"]) / SCRIPT
    return path.read_text(encoding="utf-8") if path.is_file() else None


def projects(text: str) -> dict[str, list[str]]:
    """Project name -> its init flags, from the `scaffold_test_project <name> <flags>` calls."""
    calls = re.findall(r"^scaffold_test_project (\S+) (.*)$", text, re.MULTILINE)
    return {name: shlex.split(flags) for name, flags in calls}


def _holds(line: str, project: str) -> bool:
    conditions = _CONDITION.findall(line)
    if not conditions:
        raise ValueError(f"generate.sh: an `if` this reader does not know: {line!r}")
    return any(
        value == project if op == "==" else re.search(value, project) is not None for op, value in conditions
    )


def steps(text: str, project: str) -> list[Step]:
    """What `scaffold_test_project <project>` runs, in order."""
    body = text.split("function scaffold_test_project {", 1)[1].split("\n}\n", 1)[0]
    init_flags = projects(text)[project]
    out: list[Step] = []
    active: list[bool] = []
    for raw in body.splitlines():
        line = raw.strip()
        if not line or line.startswith(_IGNORED) or "=" in line.split(" ", 1)[0]:
            continue
        if line.startswith("if "):
            active.append(_holds(line, project))
        elif line == "fi":
            active.pop()
        elif not all(active):
            continue
        elif line.startswith("$kb "):
            args = shlex.split(line.removeprefix("$kb "))
            if "$init_flags" in args:
                at = args.index("$init_flags")
                args[at : at + 1] = init_flags
            out.append(Step("kb", tuple(args)))
        elif line.startswith("make "):
            out.append(Step("make", tuple(shlex.split(line)[1:])))
        else:
            raise ValueError(f"generate.sh: a line this reader does not know: {line!r}")
    return out
