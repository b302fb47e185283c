"""The at example's bundle, built once per session (`make bundle`'s steps, in-process but for kubectl)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pyscaffold_op.dev.golden_at import AT_DIR


def build_at_bundle(dest: Path) -> Path:
    """Copy the at example to `dest` and make its bundle; the bundle directory."""
    from pyscaffold_op.olm.bundle import BundleOptions, generate_bundle
    from pyscaffold_op.olm.csvbase import generate_kustomize_manifests
    from pyscaffold_op.olm.kustomize import read_manifests

    shutil.copytree(
        AT_DIR, dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", ".ruff_cache")
    )
    generate_kustomize_manifests(dest)
    generate_bundle(dest, read_manifests(dest, None, "config/manifests"), BundleOptions(version="0.0.1"))
    return dest / "bundle"


@pytest.fixture(scope="session")
def at_bundle_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    return build_at_bundle(tmp_path_factory.mktemp("olm") / "at")


@pytest.fixture
def at_bundle(at_bundle_template: Path, tmp_path: Path) -> Path:
    """A private copy of the at bundle, for a test to break."""
    copy = tmp_path / "bundle"
    shutil.copytree(at_bundle_template, copy)
    return copy
