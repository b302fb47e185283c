"""Time `pyop generate manifests`: the at project, and a multigroup project of 1, 50 and 200 kinds.

    python benchmarks/bench_generate.py [--runs 15] [--sizes 1,50,200]

The many-kinds project mixes at-like kinds (date-time, min-length string, phase enum, conditions
list-map) and CronJob-like kinds (kubebuilder's tutorial: a `JobTemplateSpec`, so a whole PodSpec, an
`ObjectReference` list, int32/int64 fields) across four groups and two versions, with three RBAC
markers per kind. Every run rewrites every file (the script changes them in between), so writing
counts too.

"CLI" rows are fresh `pyop generate manifests` processes, as `make manifests` runs them (Python
start-up and imports count); "in-process" rows call `pyscaffold_op.gen.generate_manifests` after a
warm-up, as the scaffolder does. Beside wall time each row has the median CPU time (user + system)
of the process, which the other load on a shared machine disturbs much less: the goals are judged on
CPU time. The cost per kind is the least-squares slope over the sizes (so the fixed start-up is
the intercept, not part of it). Prints every missed goal and exits 1 if any was missed.

Byte-code: by default the projects' sources and pyop's own package are byte-compiled first
(`compileall`), as they are on a developer's machine after the first run (Python writes
`__pycache__`) and for a pip-installed pyop. With `PYTHONDONTWRITEBYTECODE=1` (set on the shared
machine) nothing is ever written, so without this every run would compile every module again;
`--no-compile` measures that case. The header line says which one ran.
"""

from __future__ import annotations

import argparse
import compileall
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# (seconds of CPU) per row; the per-kind goals are checked on the regression below
GOALS = {"at (CLI)": 0.4, "200 kinds (CLI)": 1.5}
PER_KIND_GOAL = 0.005
GROUPS = ("fleet", "batch", "ops", "web")
VERSIONS = ("v1alpha1", "v1")

PROJECT = """\
domain: example.com
layout:
- python.pyop.io/v1
{multigroup}projectName: {name}
repo: github.com/example/{name}
resources:
{resources}version: "3"
"""
RESOURCE = """\
- api:
    crdVersion: v1
    namespaced: true
  controller: true
  domain: {domain}
  group: {group}
  kind: {kind}
  version: {version}
"""
AT_TYPES = '''\
from datetime import datetime
from typing import Literal

from pydantic import Field

from pyscaffold_op.apimachinery import Condition, CustomResource, GroupVersionKind, KubeModel


class {kind}Spec(KubeModel):
    """{kind}Spec defines the desired state of {kind}."""

    schedule: datetime
    """When to run the command."""
    command: str = Field(min_length=1)
    """The shell command to run."""


class {kind}Status(KubeModel):
    """{kind}Status defines the observed state of {kind}."""

    phase: Literal["PENDING", "RUNNING", "DONE"] | None = None
    # +listType=map
    # +listMapKey=type
    conditions: list[Condition] = Field(default_factory=list)


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
# +kubebuilder:printcolumn:name="Schedule",type="string",JSONPath=".spec.schedule"
# +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"
# +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
class {kind}(CustomResource):
    """{kind} is the Schema for the {plural} API."""

    gvk = GroupVersionKind("{group}", "{version}", "{kind}")
    plural = "{plural}"
    spec: {kind}Spec = Field(default_factory={kind}Spec)
    status: {kind}Status | None = None
'''
# kubebuilder v4's CronJob tutorial type, as tests/gen/test_builtin_embedding.py writes it
CRONJOB_TYPES = '''\
from typing import Literal

from pydantic import Field

from pyscaffold_op.apimachinery import Condition, CustomResource, GroupVersionKind, KubeModel
from pyscaffold_op.apimachinery import Int32, Int64, Time
from pyscaffold_op.models.batch_v1 import JobTemplateSpec
from pyscaffold_op.models.core_v1 import ObjectReference


class {kind}Spec(KubeModel):
    """{kind}Spec defines the desired state of {kind}."""

    # +kubebuilder:validation:MinLength=0
    schedule: str
    """The schedule in Cron format."""
    # +kubebuilder:validation:Minimum=0
    starting_deadline_seconds: Int64 | None = None
    concurrency_policy: Literal["Allow", "Forbid", "Replace"] | None = None
    suspend: bool | None = None
    job_template: JobTemplateSpec
    """Specifies the job that will be created when executing a {kind}."""
    successful_jobs_history_limit: Int32 | None = Field(default=None, ge=0)
    failed_jobs_history_limit: Int32 | None = Field(default=None, ge=0)


class {kind}Status(KubeModel):
    """{kind}Status defines the observed state of {kind}."""

    active: list[ObjectReference] | None = None
    last_schedule_time: Time | None = None
    # +listType=map
    # +listMapKey=type
    conditions: list[Condition] | None = None


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
class {kind}(CustomResource):
    """{kind} is the Schema for the {plural} API."""

    gvk = GroupVersionKind("{group}", "{version}", "{kind}")
    plural = "{plural}"
    spec: {kind}Spec
    status: {kind}Status | None = None
'''
CONTROLLER = """\
# +kubebuilder:rbac:groups={group},resources={plural},verbs=get;list;watch;create;update;patch;delete
# +kubebuilder:rbac:groups={group},resources={plural}/status,verbs=get;update;patch
# +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
"""


@dataclass(frozen=True)
class Kind:
    group: str
    version: str
    kind: str
    cronjob: bool = False


def many_kinds(count: int) -> list[Kind]:
    """`count` kinds spread over GROUPS x VERSIONS, every other one CronJob-like."""
    kinds = []
    for i in range(count):
        group = GROUPS[i % len(GROUPS)]
        version = VERSIONS[(i // len(GROUPS)) % len(VERSIONS)]
        kinds.append(Kind(group, version, f"Kind{i:03d}", cronjob=i % 2 == 1))
    return kinds


def make_project(root: Path, kinds: list[Kind], domain: str, name: str, *, multigroup: bool) -> None:
    package = name.replace("-", "_")
    src = root / "src" / package
    controllers = src / "controllers"
    for folder in (src, src / "api", controllers):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text("")
    for k in kinds:
        api = src / "api" / (k.group.replace("-", "_") if multigroup else "") / k.version
        for folder in (api.parent, api):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "__init__.py").touch()
        plural = k.kind.lower() + "s"
        full_group = f"{k.group}.{domain}"
        template = CRONJOB_TYPES if k.cronjob else AT_TYPES
        (api / f"{k.kind.lower()}_types.py").write_text(
            template.format(kind=k.kind, plural=plural, group=full_group, version=k.version)
        )
        (controllers / f"{k.kind.lower()}_controller.py").write_text(
            CONTROLLER.format(group=full_group, plural=plural)
        )
    resources = "".join(
        RESOURCE.format(domain=domain, group=k.group, kind=k.kind, version=k.version) for k in kinds
    )
    text = PROJECT.format(
        name=name, resources=resources, multigroup="multigroup: true\n" if multigroup else ""
    )
    (root / "PROJECT").write_text(text.replace("example.com", domain, 1))


def pyop_command() -> list[str]:
    script = Path(sys.executable).parent / "pyop"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "pyscaffold_op"]


def dirty(root: Path) -> None:
    """Change every generated file so each run writes them all."""
    for path in [*root.glob("config/crd/bases/*.yaml"), root / "config/rbac/role.yaml"]:
        if path.exists():
            path.write_text("---\n")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Row:
    label: str
    wall: list[float]
    cpu: list[float]


def timed(label: str, action: Callable[[], None], root: Path, runs: int, *, child: bool) -> Row:
    """Wall and CPU seconds per run; CPU of the child processes for CLI rows, of this one otherwise."""
    clock = children_cpu if child else time.process_time
    action()  # warm-up: page cache, .pyc files, and the in-process caches a scaffolder run also has
    row = Row(label, [], [])
    for _ in range(runs):
        dirty(root)
        start, cpu = time.perf_counter(), clock()
        action()
        row.wall.append(time.perf_counter() - start)
        row.cpu.append(clock() - cpu)
    return row


def slope(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least-squares (per unit, intercept) of y over x."""
    mean_x = statistics.fmean(x for x, _ in points)
    mean_y = statistics.fmean(y for _, y in points)
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    per = sum((x - mean_x) * (y - mean_y) for x, y in points) / sxx
    return per, mean_y - per * mean_x


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--sizes", default="1,50,200", help="kinds in the many-kinds projects")
    parser.add_argument(
        "--no-compile", action="store_true", help="do not byte-compile the projects and pyop first"
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    from pyscaffold_op.gen import generate_manifests

    load_before = os.getloadavg()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        at = Path(tmp) / "at"
        make_project(
            at,
            [Kind("programming-kubernetes", "v1alpha1", "At")],
            "viper.run",
            "programming-kubernetes",
            multigroup=False,
        )
        projects = [("at", at)]
        for size in sizes:
            root = Path(tmp) / f"kinds{size}"
            make_project(root, many_kinds(size), "example.com", "fleet", multigroup=True)
            projects.append((f"{size} kinds", root))
        if not args.no_compile:
            import pyscaffold_op

            for folder in [Path(pyscaffold_op.__file__).parent, *(root / "src" for _, root in projects)]:
                compileall.compile_dir(folder, quiet=1)
        help_cmd = [*pyop_command(), "--help"]
        rows.append(
            timed(
                "pyop --help (floor)",
                lambda: subprocess.run(help_cmd, check=True, capture_output=True),
                at,
                args.runs,
                child=True,
            )
        )
        cli = [*pyop_command(), "generate", "manifests"]
        for label, root in projects:
            rows.append(
                timed(
                    f"{label} (CLI)",
                    lambda r=root: subprocess.run(cli, cwd=r, check=True, capture_output=True),
                    root,
                    args.runs,
                    child=True,
                )
            )
            in_process = f"{label} (in-process)"
            rows.append(timed(in_process, lambda r=root: generate_manifests(r), root, args.runs, child=False))
    load_after = os.getloadavg()

    print(
        f"pyop generate manifests - {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, {args.runs} runs; load average before {load_before}, "
        f"after {load_after}; "
        + ("sources not byte-compiled first" if args.no_compile else "sources byte-compiled first")
        + f" (PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r})"
    )
    print(f"| {'case':<24} | wall median | wall min | CPU median | CPU min | goal (CPU) | met |")
    print(f"| {'-' * 24} | ----------- | -------- | ---------- | ------- | ---------- | --- |")
    misses = []
    for row in rows:
        goal = GOALS.get(row.label)
        cpu = statistics.median(row.cpu)
        met = "" if goal is None else ("yes" if cpu < goal else "no")
        if met == "no":
            misses.append(f"{row.label}: {cpu:.3f} s CPU, goal < {goal} s")
        goal_text = f"< {goal:.2f} s" if goal else ""
        print(
            f"| {row.label:<24} | {statistics.median(row.wall):9.3f} s | {min(row.wall):6.3f} s | "
            f"{cpu:8.3f} s | {min(row.cpu):5.3f} s | {goal_text:>10} | {met:<3} |"
        )
    if len(sizes) > 1:
        print()
        for mode in ("CLI", "in-process"):
            cpu = {r.label: statistics.median(r.cpu) for r in rows}
            points = [(size, cpu[f"{size} kinds ({mode})"]) for size in sizes]
            per, fixed = slope(points)
            met = per <= PER_KIND_GOAL
            print(
                f"per kind ({mode}, CPU, slope over {args.sizes} kinds): {per * 1000:.2f} ms "
                f"(fixed {fixed:.3f} s); goal <= {PER_KIND_GOAL * 1000:.0f} ms: {'met' if met else 'NOT met'}"
            )
            if not met:
                goal_ms = PER_KIND_GOAL * 1000
                misses.append(f"per kind ({mode}): {per * 1000:.2f} ms, goal <= {goal_ms:.0f} ms")
    for miss in misses:
        print(f"MISSED {miss}")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
