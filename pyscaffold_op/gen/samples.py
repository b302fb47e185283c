"""`config/samples/*.yaml` against their CRDs as the API server takes them: pruned, defaulted, validated."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from pyscaffold_op.apiextensions import apply_defaults, prune, validate

__all__ = ["check_samples"]


def check_samples(samples_dir: Path, crds: list[dict[str, Any]]) -> list[str]:
    """Validate every `*.yaml` document of kinds we define, after pruning; pruned fields are problems."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where built: every run reads them
    by_gvk: dict[tuple[str | None, str | None], dict[str, Any]] = {}
    for crd in crds:
        spec = crd["spec"]
        for version in spec["versions"]:
            api_version = f"{spec['group']}/{version['name']}"
            by_gvk[(api_version, spec["names"]["kind"])] = version["schema"]["openAPIV3Schema"]
    groups = {crd["spec"]["group"] for crd in crds}
    problems: list[str] = []
    for path in sorted(samples_dir.glob("*.yaml")) if samples_dir.is_dir() else []:
        try:
            text = path.read_text(encoding="utf-8")
            docs = [d for d in yaml.load_all(text, Loader=loader) if isinstance(d, dict)]
        except yaml.YAMLError as err:
            problems.append(f"{path.name}: not valid YAML: {str(err).splitlines()[0]}")
            continue
        for doc in docs:
            schema = by_gvk.get((doc.get("apiVersion"), doc.get("kind")))
            if schema is None:
                group = str(doc.get("apiVersion", "")).rpartition("/")[0]
                if group in groups:
                    problems.append(
                        f"{path.name}: no CRD serves {doc.get('kind')} in {doc.get('apiVersion')}"
                    )
                continue  # kustomization.yaml, or a kind of another API
            name = (doc.get("metadata") or {}).get("name", "?")
            obj = copy.deepcopy(doc)
            pruned = prune(obj, schema)
            apply_defaults(obj, schema)  # the server's order: prune, default, validate
            for field_path in pruned:
                problems.append(
                    f"{path.name} ({doc['kind']} {name}): unknown field {field_path!r} would be "
                    "silently dropped by the API server"
                )
            for problem in validate(obj, schema):
                where = f"{path.name} ({doc['kind']} {name}): {problem['field']}"
                problems.append(f"{where}: {problem['message']}")
    return problems
