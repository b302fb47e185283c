"""The finished "cloud native at" operator, `testdata/at/`: scaffold output plus a few hand-finished files.

Every file of `testdata/at/` is byte-identical to a fresh scaffold of the at example (see
`pyscaffold_op.dev.regen`) except the files in `HAND_FINISHED`, which a person wrote, and the files in
`GENERATED`, which `make manifests` derives from the hand-finished types and markers.
`python -m pyscaffold_op.dev.regen` (`make testdata`) refreshes both golden trees;
`tests/test_golden_at.py` fails when either drifts.
"""

from __future__ import annotations

import filecmp
import shutil
import tempfile
from pathlib import Path

from pyscaffold_op.dev.regen import REPO_ROOT, generate_manifests, scaffold_at_example

AT_DIR = REPO_ROOT / "testdata" / "at"

HAND_FINISHED: tuple[str, ...] = (
    "README.md",
    "config/samples/programming-kubernetes_v1alpha1_at.yaml",
    "src/programming_kubernetes/api/v1alpha1/at_types.py",
    "src/programming_kubernetes/controllers/at_controller.py",
    "tests/test_at_controller.py",
    "tests/e2e/test_at_e2e.py",
)
"""Files a person finished (or, like the e2e scenario, added) by hand; everything else stays exactly what
pyop writes."""

GENERATED: tuple[str, ...] = (
    "config/crd/bases/programming-kubernetes.viper.run_ats.yaml",
    "config/rbac/role.yaml",
)
"""Files `make manifests` derives from the hand-finished types and controller markers."""

_IGNORED_PARTS = {"__pycache__", ".pytest_cache", ".ruff_cache"}


def project_files(root: Path) -> set[str]:
    """Relative paths of the files of a project tree, without caches."""
    return {
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.is_file() and not _IGNORED_PARTS.intersection(path.relative_to(root).parts)
    }


def build_at(dest: Path, finished_from: Path) -> None:
    """Fresh scaffold into `dest`, the hand-finished files from `finished_from`, then `make manifests`."""
    scaffold_at_example(dest)
    for relative in HAND_FINISHED:
        shutil.copyfile(finished_from / relative, dest / relative)
    generate_manifests(dest)


def drift(at_dir: Path = AT_DIR) -> list[str]:
    """What differs between `at_dir` and a rebuild of it: missing, extra or changed files."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "at"
        build_at(fresh, finished_from=at_dir)
        expected, actual = project_files(fresh), project_files(at_dir)
        problems = [f"missing {name}" for name in sorted(expected - actual)]
        problems += [f"unexpected {name}" for name in sorted(actual - expected)]
        problems += [
            f"changed {name}"
            for name in sorted(expected & actual)
            if not filecmp.cmp(fresh / name, at_dir / name, shallow=False)
        ]
        return problems


def refresh_at(at_dir: Path = AT_DIR) -> None:
    """Rebuild `at_dir` in place, keeping its hand-finished files."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "at"
        build_at(fresh, finished_from=at_dir)
        shutil.rmtree(at_dir)
        shutil.copytree(fresh, at_dir)
