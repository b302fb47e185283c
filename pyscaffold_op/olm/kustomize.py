"""The kustomize output a bundle is made from: `kubectl kustomize config/manifests`, a file, or stdin."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from pyscaffold_op.errors import ProjectError, ValidationError


def read_manifests(root: Path, manifests: str | None, folder: str) -> str:
    """The text of `manifests` ("-": stdin), or `$KUBECTL kustomize <folder>` run in `root`."""
    if manifests == "-":
        return sys.stdin.read()
    if manifests is not None:
        path = Path(manifests)
        if not path.is_file():
            raise ValidationError(f"--manifests {manifests}: no such file")
        return path.read_text(encoding="utf-8")
    kubectl = os.environ.get("KUBECTL") or "kubectl"
    if shutil.which(kubectl) is None:
        raise ProjectError(
            f"cannot build {folder}: {kubectl} is not on PATH (install kubectl, or pass --manifests)"
        )
    result = subprocess.run(
        [kubectl, "kustomize", folder], cwd=root, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines() or [f"exit status {result.returncode}"]
        raise ProjectError(f"`{kubectl} kustomize {folder}` failed: {lines[-1]}")
    return result.stdout
