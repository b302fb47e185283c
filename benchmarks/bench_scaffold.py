"""Time the scaffolder as a user runs it: `pyop --help`, `pyop init`, and `init` + `create api` (with and
without the `make manifests` that `create api` runs by default).

    python benchmarks/bench_scaffold.py [--runs 15]      (or `make bench`)

Each run is a fresh process (the console script next to this interpreter, as `pip install` made it),
so import costs count. Prints a table of median / min / max wall time against the goals.
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
            start = time.perf_counter()
            run([*pyop, *command], target)
            parts[name].append(time.perf_counter() - start)
        shutil.rmtree(target)

    # `make manifests` must run this installation's pyop, as `create api` arranges when PYOP is unset
    os.environ.pop("PYOP", None)
    try:
        results = {"pyop --help": timed(help_, args.runs, "pyop --help")}
        timed(scaffold_parts, args.runs)
        results.update({name: samples[1:] for name, samples in parts.items()})
        for name, api in (
            ("init + create api --no-make", [*AT_API, "--no-make"]),
            ("init + create api (+ make manifests)", AT_API),
        ):
            results[name] = timed(scaffold(api), args.runs, name)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    python = platform.python_version()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {python}, {platform.system()}")
    print(f"command: {' '.join(pyop)}  runs: {args.runs}\n")
    print(f"load average before: {load_before}, after: {os.getloadavg()}")
    print(f"| {'what':<36} | median (s) | min (s) | max (s) | goal (s) | met | CPU median (s) |")
    print(f"| {'-' * 36} | ---------- | ------- | ------- | -------- | --- | -------------- |")
    for name, samples in results.items():
        median = statistics.median(samples)
        goal = GOALS.get(name)
        met = "" if goal is None else ("yes" if median < goal else "no")
        goal_text = "" if goal is None else f"{goal:.1f}"
        cpu = f"{statistics.median(CPU[name]):.3f}" if name in CPU else ""
        print(
            f"| {name:<36} | {median:10.3f} | {min(samples):7.3f} | {max(samples):7.3f} | "
            f"{goal_text:>8} | {met:<3} | {cpu:>14} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
