"""Kinds of other APIs for `create api`: built-in (core) kinds and external kinds (cert-manager, ...).

kubebuilder records them in PROJECT with `core: true` or `external: true` and no `api` block: no types,
no CRD, no sample; only a controller (or webhooks) for the kind, with RBAC markers for its group.

An external kind's model is a Python module: `--external-api-module` when it names one (for example
one `pyop generate models --from-crd` wrote), else a placeholder the scaffolder writes into the
project (`src/<pkg>/external/<group>/<version>/<kind>_types.py`: a `KubeObject` with the kind's
GVK that keeps every field, `extra="allow"`), so kubebuilder's spelling (a Go module such as
`github.com/cert-manager/cert-manager@v1.21.1`) works as given and is recorded in PROJECT as given.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass

from pyscaffold_op.errors import ValidationError

# kubebuilder's core groups and the domain it records for each ("" = none: `apps`, `batch`, ...).
CORE_GROUPS: dict[str, str] = {
    "admission": "k8s.io",
    "admissionregistration": "k8s.io",
    "apiextensions": "k8s.io",
    "apps": "",
    "auditregistration": "k8s.io",
    "authentication": "k8s.io",
    "authorization": "k8s.io",
    "autoscaling": "",
    "batch": "",
    "certificates": "k8s.io",
    "coordination": "k8s.io",
    "core": "",
    "events": "k8s.io",
    "extensions": "",
    "imagepolicy": "k8s.io",
    "metrics": "k8s.io",
    "networking": "k8s.io",
    "node": "k8s.io",
    "policy": "",
    "rbac.authorization": "k8s.io",
    "scheduling": "k8s.io",
    "setting": "k8s.io",
    "storage": "k8s.io",
}
_PY_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def is_core(group: str) -> bool:
    return group == "" or group in CORE_GROUPS


@dataclass(frozen=True)
class OtherKind:
    """A kind this project watches but does not define."""

    group: str
    """As PROJECT records it (`core` for the core group)."""
    domain: str
    version: str
    kind: str
    module: str
    """The Python module holding the typed model."""
    path: str
    """PROJECT's `path` (kubebuilder: the Go import path of the types)."""
    plural: str
    namespaced: bool
    core: bool
    recorded_module: str | None = None
    """PROJECT's `module` (`--external-api-module` as given); None for built-in kinds."""
    placeholder: bool = False
    """`module` is the placeholder model the scaffolder writes (no Python module was given)."""

    @property
    def qualified_group(self) -> str:
        if self.group == "core":
            return ""
        return f"{self.group}.{self.domain}" if self.domain else self.group


def core_kind(group: str, version: str, kind: str) -> OtherKind:
    """A built-in kind, typed by `pyscaffold_op.models.<group>_<version>`; ValidationError if none."""
    from pyscaffold_op.models import MODULES

    group = group or "core"
    module_name = f"{group.split('.')[0]}_{version}"
    if module_name not in MODULES:
        shipped = ", ".join(m for m in MODULES if m != "meta_v1")
        raise ValidationError(
            f"no built-in models for {group}/{version}: pyscaffold_op.models ships {shipped}; "
            "for another API use --external-api-path with --external-api-module"
        )
    module = importlib.import_module(f"pyscaffold_op.models.{module_name}")
    cls = getattr(module, kind, None)
    gvk = getattr(cls, "gvk", None)
    if cls is None or gvk is None or gvk.kind != kind:
        raise ValidationError(
            f"kind {kind!r} is not a kind of {group}/{version} (pyscaffold_op.models.{module_name})"
        )
    return OtherKind(
        group=group,
        domain=CORE_GROUPS[group],
        version=version,
        kind=kind,
        module=f"pyscaffold_op.models.{module_name}",
        path=f"k8s.io/api/{group.split('.')[0]}/{version}",
        plural=cls.plural,
        namespaced=cls.namespaced,
        core=True,
    )


def external_kind(
    group: str,
    version: str,
    kind: str,
    *,
    path: str,
    domain: str | None,
    module: str | None,
    plural: str,
    namespaced: bool,
    package: str,
) -> OtherKind:
    """A kind of another project's API. Its model lives in `module` when that (or else `path`) is a
    dotted Python module; otherwise in the placeholder module `placeholder_module` names."""
    if not domain:
        raise ValidationError(
            "--external-api-domain is required with --external-api-path (the API group is <group>.<domain>)"
        )
    python = next((m for m in (module, path) if m and _PY_MODULE.fullmatch(m)), None)
    return OtherKind(
        group,
        domain,
        version,
        kind,
        python or placeholder_module(package, group, version, kind),
        path,
        plural,
        namespaced,
        core=False,
        recorded_module=module,
        placeholder=python is None,
    )


def placeholder_module(package: str, group: str, version: str, kind: str) -> str:
    """Where the scaffolder writes an external kind's placeholder model."""
    from pyscaffold_op.project import group_module_name

    return f"{package}.external.{group_module_name(group)}.{version}.{kind.lower()}_types"
