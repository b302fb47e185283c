"""Time the scaffolder as a user runs it: `pyop --help`, `pyop init`, and `init` + `create api` (with and
without the `make manifests` that `create api` runs by default), and `create api` in a project that
already has many kinds (it must not slow down as they accumulate).

    python benchmarks/bench_scaffold.py [--runs 15] [--kinds 50]      (or `make bench`)

Each run is a fresh process (the console script next to this interpreter, as `pip install` made it),
so import costs count. Prints a table of median / min / max wall time and the median CPU time (user +
system) of the processes a run started. The goals are judged on CPU time, which the other load of a
shared machine disturbs much less than wall time; every miss is printed and the exit status is 1.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

GOALS = {
    "pyop --help": 0.2,
    "pyop init": 0.6,
    "init + create api --no-make": 0.8,
    "init + create api (+ make manifests)": 1.5,
}
# `create api` in a project of --kinds kinds, against one in a new project: "must not slow down"
GROWTH_GOAL = 0.10
AT_INIT = ["init", "--domain", "viper.run", "--repo", "github.com/AbyssViper/programming-kubernetes"]
AT_API = [
    "create",
    "api",
    "--group",
    "programming-kubernetes",
    "--version",
    "v1alpha1",
    "--kind",
    "At",
]


def pyop_command() -> list[str]:
    script = Path(sys.executable).parent / "pyop"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "pyscaffold_op"]


def run(args: list[str], cwd: Path) -> None:
    subprocess.run(args, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def kind_api(kind: str) -> list[str]:
    return [*AT_API[:-1], kind, "--no-make"]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


CPU: dict[str, list[float]] = {}


def timed(action: Callable[[], None], runs: int, name: str = "") -> list[float]:
    """Wall time per run; the CPU time of the processes it ran goes to CPU[name] (steadier under load)."""
    action()  # warm the page cache and any .pyc files first
    samples = []
    for _ in range(runs):
        start, cpu = time.perf_counter(), children_cpu()
        action()
        samples.append(time.perf_counter() - start)
        CPU.setdefault(name, []).append(children_cpu() - cpu)
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--kinds", type=int, default=50, help="kinds already in the project for the last row")
    args = parser.parse_args(argv)
    pyop = pyop_command()
    load_before = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="pyop-bench-"))

    def help_() -> None:
        run([*pyop, "--help"], work)

    def scaffold(api: list[str]) -> Callable[[], None]:
        def action() -> None:
            target = Path(tempfile.mkdtemp(dir=work))
            run([*pyop, *AT_INIT], target)
            run([*pyop, *api], target)
            shutil.rmtree(target)

        return action

    parts: dict[str, list[float]] = {"pyop init": [], "pyop create api --no-make": []}

    def scaffold_parts() -> None:
        target = Path(tempfile.mkdtemp(dir=work))
        for name, command in (("pyop init", AT_INIT), ("pyop create api --no-make", [*AT_API, "--no-make"])):
            start, cpu = time.perf_counter(), children_cpu()
            run([*pyop, *command], target)
            parts[name].append(time.perf_counter() - start)
            CPU.setdefault(name, []).append(children_cpu() - cpu)
        shutil.rmtree(target)

    def accumulated() -> Callable[[], None]:
        """`create api` of one more kind in a project of `--kinds` kinds (each run adds one)."""
        target = Path(tempfile.mkdtemp(dir=work))
        run([*pyop, *AT_INIT], target)
        for index in range(args.kinds):
            run([*pyop, *kind_api(f"Kind{index:03d}")], target)
        added = iter(range(args.kinds, args.kinds + args.runs + 1))
        return lambda: run([*pyop, *kind_api(f"Kind{next(added):03d}")], target)

    # `make manifests` must run this installation's pyop, as `create api` arranges when PYOP is unset
    os.environ.pop("PYOP", None)
    many = f"create api --no-make ({args.kinds} kinds)"
    try:
        results = {"pyop --help": timed(help_, args.runs, "pyop --help")}
        timed(scaffold_parts, args.runs)
        results.update({name: samples[1:] for name, samples in parts.items()})
        CPU.update({name: samples[1:] for name, samples in CPU.items() if name in parts})
        for name, api in (
            ("init + create api --no-make", [*AT_API, "--no-make"]),
            ("init + create api (+ make manifests)", AT_API),
        ):
            results[name] = timed(scaffold(api), args.runs, name)
        results[many] = timed(accumulated(), args.runs, many)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    python = platform.python_version()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {python}, {platform.system()}")
    print(f"command: {' '.join(pyop)}  runs: {args.runs}\n")
    print(f"load average before: {load_before}, after: {os.getloadavg()}")
    print(f"| {'what':<36} | median (s) | min (s) | max (s) | CPU median (s) | goal, CPU (s) | met |")
    print(f"| {'-' * 36} | ---------- | ------- | ------- | -------------- | ------------- | --- |")
    misses = []
    for name, samples in results.items():
        cpu = statistics.median(CPU[name])
        goal = GOALS.get(name)
        met = "" if goal is None else ("yes" if cpu < goal else "no")
        if met == "no":
            misses.append(f"{name}: {cpu:.3f} s CPU, goal < {goal} s")
        goal_text = "" if goal is None else f"< {goal:.1f}"
        wall = f"{statistics.median(samples):10.3f} | {min(samples):7.3f} | {max(samples):7.3f}"
        print(f"| {name:<36} | {wall} | {cpu:14.3f} | {goal_text:>13} | {met:<3} |")
    one = statistics.median(CPU["pyop create api --no-make"])
    growth = statistics.median(CPU[many]) / one - 1
    print(f"\ncreate api --no-make: {growth:+.0%} CPU with {args.kinds} kinds in the project than with none")
    if growth > GROWTH_GOAL:
        misses.append(
            f"create api grows {growth:+.0%} from 0 to {args.kinds} kinds (goal <= {GROWTH_GOAL:+.0%})"
        )
    for miss in misses:
        print(f"MISSED {miss}")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
