"""`pyop generate manifests` of two pyop trees on one project, runs interleaved: CPU medians.

    python benchmarks/bench_generate_ab.py PROJECT TREE_A TREE_B [--runs 9]

Each TREE is a pyop checkout with its own `.venv` (a `git archive` of main in /tmp with
`pip install -e '.[cli]'` is a clean "before"). The trees alternate run by run, so a change in the
machine's load hits both; every run first rewrites the generated files, so each one writes them
all. Byte-compile the project and both trees first (`python -m compileall`) to measure what a
developer's machine runs, or not, to include compiling: the script does neither, it says nothing
about it, so say it with the figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path


def dirty(project: Path) -> None:
    for path in [*project.glob("config/crd/bases/*.yaml"), project / "config/rbac/role.yaml"]:
        if path.exists():
            path.write_text("---\n")


def cpu_of(command: list[str], cwd: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=cwd, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("trees", type=Path, nargs=2)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args(argv)
    cpu: dict[Path, list[float]] = {tree: [] for tree in args.trees}
    load_before = os.getloadavg()
    for _ in range(args.runs):
        for tree in args.trees:
            dirty(args.project)
            cpu[tree].append(cpu_of([str(tree / ".venv/bin/pyop"), "generate", "manifests"], args.project))
    print(f"{args.project}: {args.runs} runs each, interleaved; load {load_before} -> {os.getloadavg()}")
    for tree, times in cpu.items():
        shown = ", ".join(f"{t:.3f}" for t in times)
        print(f"{tree}: CPU median {statistics.median(times):.3f} s, min {min(times):.3f} s  [{shown}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
