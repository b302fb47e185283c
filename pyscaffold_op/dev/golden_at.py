"""The finished "cloud native at" operator, `testdata/at/`: scaffold output plus a few hand-finished files.

Every file of `testdata/at/` is byte-identical to a fresh scaffold of the at example (see
`pyscaffold_op.dev.regen`) except the files in `HAND_FINISHED`, which a person wrote, and the files in
`GENERATED`, which `make manifests` derives from the hand-finished types and markers.
`python -m pyscaffold_op.dev.regen` (`make testdata`) refreshes both golden trees;
`tests/test_golden_at.py` fails when either drifts.
"""

from __future__ import annotations

from pyscaffold_op.dev.golden import FinishedExample, project_files
from pyscaffold_op.dev.regen import REPO_ROOT, scaffold_at_example

__all__ = ["AT", "AT_DIR", "GENERATED", "HAND_FINISHED", "drift", "project_files", "refresh_at"]

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

AT = FinishedExample(AT_DIR, scaffold_at_example, HAND_FINISHED, GENERATED)


def drift() -> list[str]:
    """What differs between `testdata/at/` and a rebuild of it: missing, extra or changed files."""
    return AT.drift()


def refresh_at() -> None:
    """Rebuild `testdata/at/` in place, keeping its hand-finished files."""
    AT.refresh()
