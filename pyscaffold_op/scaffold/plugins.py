"""kubebuilder's optional plugins as `pyop edit --plugins` takes them, and PROJECT's `plugins` record.

kubebuilder records each optional plugin it ran under its full key (`grafana.kubebuilder.io/v1-alpha`)
with the plugin's settings (`{}` when it has none); pyop records the same keys, so a PROJECT reads the
same on both sides and `pyop edit` knows what ran before.
"""

from __future__ import annotations

from typing import Any

from pyscaffold_op.errors import ValidationError
from pyscaffold_op.project import Project

GRAFANA = "grafana.kubebuilder.io/v1-alpha"
AUTOUPDATE = "autoupdate.kubebuilder.io/v1-alpha"
HELM = "helm.kubebuilder.io/v2-alpha"

# Every spelling kubebuilder accepts for a plugin (its short names too), by the key it records.
SPELLINGS: dict[str, tuple[str, ...]] = {
    GRAFANA: (GRAFANA, "grafana/v1-alpha", "grafana"),
    AUTOUPDATE: (AUTOUPDATE, "autoupdate/v1-alpha", "autoupdate"),
    HELM: (HELM, "helm/v2-alpha", "helm"),
}


def parse_plugins(value: str) -> list[str]:
    """`--plugins a,b` as the keys kubebuilder records, in the order given; ValidationError if unknown."""
    keys: list[str] = []
    for name in (part.strip() for part in value.split(",") if part.strip()):
        key = next((k for k, spellings in SPELLINGS.items() if name in spellings), None)
        if key is None:
            known = ", ".join(spellings[1] for spellings in SPELLINGS.values())
            raise ValidationError(f"--plugins {value}: unknown plugin {name!r}; pyop edit knows {known}")
        if key not in keys:
            keys.append(key)
    return keys


def with_plugin(project: Project, key: str, settings: dict[str, Any] | None = None) -> Project:
    """PROJECT recording that `key` ran, with its settings (kept when none are given)."""
    plugins = dict(project.plugins or {})
    plugins[key] = settings if settings is not None else plugins.get(key, {})
    return project.model_copy(update={"plugins": dict(sorted(plugins.items()))})
