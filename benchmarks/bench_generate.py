"""Time `pyop generate manifests` on the at project and on a project with 50 kinds.

    python benchmarks/bench_generate.py [--runs 15]

Each CLI run is a fresh process (import costs count, as in `make manifests`); the in-process rows
time `pyscaffold_op.gen.generate_manifests` after a warm-up, as the scaffolder calls it. The files
are rewritten on every run (their content is changed in between), so writing counts too.
Prints median / min / max wall time against the goals.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

GOALS = {"at (CLI)": 0.4, "50 kinds (CLI)": 2.0}

PROJECT = """\
domain: example.com
layout:
- python.pyop.io/v1
projectName: {name}
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
  version: v1alpha1
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

    gvk = GroupVersionKind("{group}", "v1alpha1", "{kind}")
    plural = "{plural}"
    spec: {kind}Spec = Field(default_factory={kind}Spec)
    status: {kind}Status | None = None
'''
CONTROLLER = """\
# +kubebuilder:rbac:groups={group},resources={plural},verbs=get;list;watch;create;update;patch;delete
# +kubebuilder:rbac:groups={group},resources={plural}/status,verbs=get;update;patch
# +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
"""


def make_project(root: Path, kinds: list[str], group: str, domain: str, name: str) -> None:
    package = name.replace("-", "_")
    api = root / "src" / package / "api" / "v1alpha1"
    controllers = root / "src" / package / "controllers"
    api.mkdir(parents=True)
    controllers.mkdir(parents=True)
    for init in (root / "src" / package, root / "src" / package / "api", api, controllers):
        (init / "__init__.py").write_text("")
    full_group = f"{group}.{domain}"
    for kind in kinds:
        plural = kind.lower() + "s"
        (api / f"{kind.lower()}_types.py").write_text(
            AT_TYPES.format(kind=kind, plural=plural, group=full_group)
        )
        (controllers / f"{kind.lower()}_controller.py").write_text(
            CONTROLLER.format(group=full_group, plural=plural)
        )
    resources = "".join(RESOURCE.format(domain=domain, group=group, kind=k) for k in kinds)
    (root / "PROJECT").write_text(
        PROJECT.format(name=name, resources=resources).replace("example.com", domain, 1)
    )


def pyop_command() -> list[str]:
    script = Path(sys.executable).parent / "pyop"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "pyscaffold_op"]


def dirty(root: Path) -> None:
    """Change every generated file so each run writes them all."""
    for path in [*root.glob("config/crd/bases/*.yaml"), root / "config/rbac/role.yaml"]:
        if path.exists():
            path.write_text("---\n")


def timed(action: Callable[[], None], root: Path, runs: int) -> list[float]:
    action()
    samples = []
    for _ in range(runs):
        dirty(root)
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    from pyscaffold_op.gen import generate_manifests

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        at = Path(tmp) / "at"
        make_project(at, ["At"], "programming-kubernetes", "viper.run", "programming-kubernetes")
        many = Path(tmp) / "many"
        make_project(many, [f"Kind{i:02d}" for i in range(50)], "fleet", "example.com", "fleet")
        help_cmd = [*pyop_command(), "--help"]
        floor = timed(lambda: subprocess.run(help_cmd, check=True, capture_output=True), at, args.runs)
        rows.append(("pyop --help (floor)", floor))
        for label, root in (("at", at), ("50 kinds", many)):
            cli = [*pyop_command(), "generate", "manifests"]
            samples = timed(
                lambda r=root, c=cli: subprocess.run(c, cwd=r, check=True, capture_output=True),
                root,
                args.runs,
            )
            rows.append((f"{label} (CLI)", samples))
            samples = timed(lambda r=root: generate_manifests(r), root, args.runs)
            rows.append((f"{label} (in-process)", samples))
    print(f"pyop generate manifests - {platform.machine()} {platform.processor() or ''} Python "
          f"{platform.python_version()}, {args.runs} runs")  # fmt: skip
    print(f"{'case':<26} {'median':>8} {'min':>8} {'max':>8} {'goal':>8}")
    failed = False
    for label, samples in rows:
        goal = GOALS.get(label)
        median = statistics.median(samples)
        mark = "" if goal is None else (" ok" if median < goal else " SLOW")
        failed |= goal is not None and median >= goal
        goal_text = f"{goal:.2f}s" if goal else "-"
        print(f"{label:<26} {median:>7.3f}s {min(samples):>7.3f}s {max(samples):>7.3f}s {goal_text:>8}{mark}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
