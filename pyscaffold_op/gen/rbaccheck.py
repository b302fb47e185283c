"""`+kubebuilder:rbac` markers checked before role.yaml is written (issue 27): a verb Kubernetes does not
know (`verbs=create;pach`) or a resource its group does not have (`groups="",resources=event`) would
go into the role as written and the manager would be forbidden at run time. Both are one error line
naming the marker's file:line, with a did-you-mean. Only groups whose resources are known are checked:
the built-in groups of `pyscaffold_op.models` and the project's own groups (from PROJECT)."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable
from typing import Any

from pyscaffold_op.errors import GenerateError
from pyscaffold_op.gen.markers import Marker

# Kubernetes' resource verbs, plus the special ones of RBAC, PodSecurityPolicy, CSRs and impersonation.
RESOURCE_VERBS = (
    "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection",
    "use", "bind", "escalate", "impersonate", "approve", "sign", "attest", "*",
)  # fmt: skip
# verbs of nonResourceURLs rules (HTTP methods, lower case)
URL_VERBS = ("get", "post", "put", "patch", "delete", "head", "options", "*")


@functools.cache
def builtin_resources() -> dict[str, frozenset[str]]:
    """group -> the plurals of its kinds in `pyscaffold_op.models`."""
    from pyscaffold_op.models import spec

    out: dict[str, set[str]] = {}
    for name in spec.kinds().values():
        definition = spec.definition(name)
        gvk = definition["x-kubernetes-group-version-kind"]
        plural = (definition.get("x-pyop-resource") or {}).get("plural")
        if plural:
            out.setdefault(gvk["group"], set()).add(plural)
    return {group: frozenset(plurals) for group, plurals in out.items()}


def _suggest(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def check_rbac_markers(markers: list[Marker], own: dict[str, set[str]] | None = None) -> None:
    """Raise GenerateError for the first unknown verb or resource; `own` maps the project's groups
    (`<group>.<domain>`) to their plurals."""
    known: dict[str, Any] = {**builtin_resources()}
    for group, plurals in (own or {}).items():
        known[group] = frozenset(known.get(group, frozenset()) | plurals)
    for marker in markers:
        where = f"{marker.where}: " if marker.where else ""
        urls = bool(marker.get("urls")) and not marker.get("resources")
        valid = URL_VERBS if urls else RESOURCE_VERBS
        for verb in marker.get("verbs") or []:
            if verb not in valid:
                raise GenerateError(
                    f"{where}+kubebuilder:rbac: unknown verb {verb!r}{_suggest(verb, valid)}; "
                    f"valid verbs: {', '.join(valid)}"
                )
        groups = marker.get("groups") or []
        for resource in marker.get("resources") or []:
            base = resource.split("/", 1)[0]
            if base == "*" or "*" in groups:
                continue
            checked = [g for g in groups if g in known]
            if len(checked) != len(groups) or any(base in known[g] for g in checked):
                continue  # a group we do not know, or the resource is in one of them
            choices = set().union(*(known[g] for g in checked))
            shown = ",".join(f'"{g}"' if g == "" else g for g in groups)
            raise GenerateError(
                f"{where}+kubebuilder:rbac: group {shown} has no resource {base!r}"
                f"{_suggest(base, choices)}; resources are plural and lower case, as kubectl api-resources "
                "lists them"
            )
