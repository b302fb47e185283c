"""The kustomize output a chart is made from: `kubectl kustomize config/default`, a file, or stdin.

Also the objects of the optional kustomize folders that config/default leaves commented out
(config/prometheus, config/network-policy), so the chart can offer them behind a value, the way
kubebuilder's chart ships a ServiceMonitor and NetworkPolicies whether or not kustomize deploys them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from pyscaffold_op.errors import ProjectError, ValidationError

OPTIONAL_FOLDERS = ("config/prometheus", "config/network-policy")


def load_documents(text: str, source: str) -> list[dict[str, Any]]:
    """Every object of a multi-document YAML text; anything but objects with a kind is an error."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        documents = [doc for doc in yaml.load_all(text, Loader=loader) if doc is not None]
    except yaml.YAMLError as err:
        first = str(err).strip().splitlines()[0]
        raise ValidationError(f"{source} is not valid YAML: {first}") from err
    for index, doc in enumerate(documents):
        if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str):
            raise ValidationError(f"{source}: document {index + 1} is not a Kubernetes object (no kind)")
        if doc["kind"].endswith("List"):
            raise ValidationError(f"{source}: document {index + 1} is a {doc['kind']}; give the items")
    if not documents:
        raise ValidationError(f"{source} holds no Kubernetes objects")
    return documents


def read_manifests(root: Path, manifests: str | None) -> tuple[list[dict[str, Any]], str]:
    """The objects to chart and where they came from: `manifests` ("-" is stdin) or kustomize."""
    if manifests == "-":
        return load_documents(sys.stdin.read(), "stdin"), "stdin"
    if manifests is not None:
        path = Path(manifests)
        if not path.is_file():
            raise ValidationError(f"--manifests {manifests}: no such file")
        return load_documents(path.read_text(encoding="utf-8"), manifests), manifests
    return load_documents(kustomize(root, "config/default"), "config/default"), "config/default"


def kustomize(root: Path, folder: str) -> str:
    """`$KUBECTL kustomize <folder>` (kubectl by default), what `make deploy` applies."""
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


def optional_objects(root: Path, namespace: str, name_prefix: str) -> list[dict[str, Any]]:
    """The objects of OPTIONAL_FOLDERS as config/default would emit them (namePrefix, namespace).

    Their files hold plain objects (no patches, no cross-object names), so prefixing the name and
    setting the namespace is all kustomize would do to them.
    """
    import yaml

    out: list[dict[str, Any]] = []
    for folder in OPTIONAL_FOLDERS:
        kustomization = root / folder / "kustomization.yaml"
        if not kustomization.is_file():
            continue
        resources = (yaml.safe_load(kustomization.read_text(encoding="utf-8")) or {}).get("resources") or []
        for resource in resources:
            path = root / folder / str(resource)
            if not path.is_file():
                continue
            for doc in load_documents(path.read_text(encoding="utf-8"), f"{folder}/{resource}"):
                meta = doc.setdefault("metadata", {})
                meta["name"] = name_prefix + str(meta.get("name", ""))
                meta["namespace"] = namespace
                out.append(doc)
    return out


def name_prefix(root: Path) -> str:
    """config/default's namePrefix ("" when there is none)."""
    import yaml

    path = root / "config/default/kustomization.yaml"
    if not path.is_file():
        return ""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return str(data.get("namePrefix") or "")
