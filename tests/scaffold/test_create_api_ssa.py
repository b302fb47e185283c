"""`pyop create api --ssa` (kubebuilder's): PROJECT records `api.ssa`, the controller writes its status with
server-side apply under a field owner named after it, the flag's rules, and the scaffolded tests pass."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from .conftest import PACKAGE, RunPyop, assert_one_line_error

REPO_ROOT = Path(__file__).resolve().parents[2]


def navigator(*extra: str) -> list[str]:
    return ["create", "api", "--group", "crew", "--version", "v1", "--kind", "Navigator", "--no-make", *extra]


def recorded_api(root: Path, kind: str) -> dict[str, object]:
    project = yaml.safe_load((root / "PROJECT").read_text())
    return next(r["api"] for r in project["resources"] if r["kind"] == kind)


def test_ssa_is_recorded_in_project_as_kubebuilder_does(pyop: RunPyop, initialized: Path) -> None:
    assert pyop(*navigator("--ssa"), cwd=initialized).code == 0
    assert recorded_api(initialized, "Navigator") == {"crdVersion": "v1", "namespaced": True, "ssa": True}
    assert pyop(*navigator("--kind", "Pilot"), cwd=initialized).code == 0
    assert "ssa" not in recorded_api(initialized, "Pilot")  # left out when false, like kubebuilder


def test_the_controller_applies_with_a_field_owner_named_after_it(pyop: RunPyop, initialized: Path) -> None:
    assert pyop(*navigator("--ssa"), cwd=initialized).code == 0
    controller = (initialized / f"src/{PACKAGE}/controllers/navigator_controller.py").read_text()
    assert 'FIELD_OWNER = "navigator-controller"' in controller
    assert "await self.client.status().apply(applied, field_owner=FIELD_OWNER, force=True)" in controller
    plain = navigator("--kind", "Pilot")
    assert pyop(*plain, cwd=initialized).code == 0
    assert "apply" not in (initialized / f"src/{PACKAGE}/controllers/pilot_controller.py").read_text()


def test_ssa_needs_a_resource(pyop: RunPyop, initialized: Path) -> None:
    run = pyop(*navigator("--ssa", "--resource=false"), cwd=initialized)
    assert_one_line_error(run, "'--ssa' can only be used when creating an API resource")


def test_a_controller_added_later_keeps_ssa(pyop: RunPyop, initialized: Path) -> None:
    assert pyop(*navigator("--ssa", "--no-controller"), cwd=initialized).code == 0
    assert pyop(*navigator("--resource=false", "--controller"), cwd=initialized).code == 0
    controller = (initialized / f"src/{PACKAGE}/controllers/navigator_controller.py").read_text()
    assert "apply_configuration(Navigator" in controller
    assert recorded_api(initialized, "Navigator")["ssa"] is True


def test_the_scaffolded_ssa_tests_pass(pyop: RunPyop, initialized: Path) -> None:
    """Against the emulator: the status apply, the no-op re-apply, and another owner's conflict
    (tests/envtest/test_realmode.py runs them against the real kube-apiserver)."""
    for args in (navigator("--ssa"), navigator("--ssa", "--kind", "Harbor", "--cluster-scoped")):
        assert pyop(*args, cwd=initialized).code == 0, args
    generated = subprocess.run(
        [sys.executable, "-m", "pyscaffold_op", "generate", "manifests"],
        cwd=initialized,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert generated.returncode == 0, generated.stderr
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=initialized,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": f"{REPO_ROOT}:{initialized / 'src'}", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "8 passed" in run.stdout.strip().splitlines()[-1], run.stdout


def test_a_kind_shadowing_a_name_of_the_ssa_controller_is_refused(pyop: RunPyop, initialized: Path) -> None:
    run = pyop(*navigator("--ssa", "--kind", "Available"), cwd=initialized)
    assert_one_line_error(run, "'available'", "with --ssa")
    assert pyop(*navigator("--kind", "Available"), cwd=initialized).code == 0  # fine without --ssa
