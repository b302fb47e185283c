"""`+kubebuilder:rbac` markers -> ClusterRole `manager-role` (and Roles for `namespace=`).

Rules are normalized exactly like controller-gen's `NormalizeRules`: split per resource, merge verbs
of identical rules, then merge resources, groups and URLs of rules that differ only in them, sort
every list, sort rules by their key, and collapse verbs to `*` when a rule has it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyscaffold_op.gen.markers import Marker, file_markers

ROLE_NAME = "manager-role"


@dataclass
class Rule:
    groups: list[str] = field(default_factory=list)
    resources: list[str] = field(default_factory=list)
    resource_names: list[str] = field(default_factory=list)
    verbs: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)

    def normalize(self) -> None:
        for name in ("groups", "resources", "resource_names", "verbs", "urls"):
            setattr(self, name, sorted(set(getattr(self, name))))

    def key(self) -> tuple[str, str, str, str]:
        self.normalize()
        return (
            "&".join(self.groups),
            "&".join(self.resources),
            "&".join(self.resource_names),
            "&".join(self.urls),
        )

    def key_string(self) -> str:
        return " + ".join(self.key())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.groups:
            out["apiGroups"] = self.groups
        if self.urls:
            out["nonResourceURLs"] = self.urls
        if self.resource_names:
            out["resourceNames"] = self.resource_names
        if self.resources:
            out["resources"] = self.resources
        out["verbs"] = self.verbs
        return out


def _merge_on(rules: list[Rule], attr: str) -> list[Rule]:
    """Merge rules equal in everything but `attr` (a union of `attr`)."""
    buckets: dict[tuple[Any, ...], list[Rule]] = {}
    for rule in rules:
        k = rule.key()
        parts = {"groups": k[0], "resources": k[1], "resource_names": k[2], "urls": k[3]}
        parts.pop(attr)
        buckets.setdefault((*parts.values(), "&".join(rule.verbs)), []).append(rule)
    merged = []
    for bucket in buckets.values():
        first = bucket[0]
        for other in bucket[1:]:
            setattr(first, attr, [*getattr(first, attr), *getattr(other, attr)])
        first.normalize()
        merged.append(first)
    return merged


def normalize_rules(rules: list[Rule]) -> list[dict[str, Any]]:
    by_key: dict[tuple[str, str, str, str], Rule] = {}
    for rule in rules:
        rule.groups = ["" if g == "core" else g for g in rule.groups]
        k = rule.key()
        if k in by_key:
            by_key[k].verbs = sorted({*by_key[k].verbs, *rule.verbs})
        else:
            by_key[k] = rule
    merged = list(by_key.values())
    for attr in ("resources", "groups", "urls"):
        merged = _merge_on(merged, attr)
    merged.sort(key=Rule.key_string)
    for rule in merged:
        if "*" in rule.verbs:
            rule.verbs = ["*"]
    return [rule.to_dict() for rule in merged]


def collect_markers(controllers_dir: Path) -> list[Marker]:
    if not controllers_dir.is_dir():
        return []
    markers: list[Marker] = []
    for path in sorted(controllers_dir.rglob("*.py")):
        markers += file_markers(path, ("kubebuilder:rbac",))
    return markers


def build_roles(
    markers: list[Marker], role_name: str = ROLE_NAME, empty_namespace: str | None = None
) -> list[dict[str, Any]]:
    """ClusterRole first, then one Role per namespace (sorted), like controller-gen.

    With no markers at all, an empty role is still written so kustomize finds role.yaml: a ClusterRole,
    or a Role in `empty_namespace` for namespace-scoped projects.
    """
    by_target: dict[tuple[str, str], list[Rule]] = {}
    for marker in markers:
        target = (marker.get("namespace") or "", marker.get("roleName") or role_name)
        rules = by_target.setdefault(target, [])
        common = {
            "groups": list(marker.get("groups") or []),
            "resource_names": list(marker.get("resourceNames") or []),
            "verbs": list(marker.get("verbs") or []),
            "urls": list(marker.get("urls") or []),
        }
        resources = marker.get("resources") or []
        if not resources:
            rules.append(Rule(**common))
        for resource in resources:
            rules.append(Rule(resources=[resource], **{k: list(v) for k, v in common.items()}))
    docs = []
    for namespace, name in sorted(by_target):
        normalized = normalize_rules(by_target[(namespace, name)])
        if normalized:
            docs.append(_role(name, namespace, normalized))
    return docs or [_role(role_name, empty_namespace or "", [])]


def _role(name: str, namespace: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role" if namespace else "ClusterRole",
        "metadata": metadata,
        "rules": rules,
    }
