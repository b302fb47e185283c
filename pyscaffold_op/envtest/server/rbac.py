"""kube-apiserver's RBAC authorizer over the emulator's store: the Roles, ClusterRoles, RoleBindings
and ClusterRoleBindings stored there, plus the bootstrap bindings every cluster has
(`system:discovery`, `system:basic-user`, `system:public-info-viewer`; `cluster-admin` is the
privileged-group shortcut in `auth.Policy`). The bootstrap roles are evaluated, not stored.

One evaluator serves both the access reviews and, in `authorization="RBAC"` mode, every request:
`auth.Policy.authorize` asks it after its own rules. Matching is rbac/v1's (`*` wildcards,
`*/subresource`, resourceNames, nonResourceURLs with a trailing `*`); a ClusterRole with an
`aggregationRule` has the rules of the ClusterRoles its selectors pick, as the aggregation
controller would have written them; a binding to a missing role is reported in the denial's
reason (`rbac: RBAC: role.rbac.authorization.k8s.io "x" not found`), as the real server words it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyscaffold_op.apimachinery import labels
from pyscaffold_op.envtest.server.auth import AUTHENTICATED, UNAUTHENTICATED, Attributes
from pyscaffold_op.envtest.storage.objectstore import Store

GROUP = "rbac.authorization.k8s.io"
_DISCOVERY_URLS = (
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
)
_PUBLIC_URLS = ("/healthz", "/livez", "/readyz", "/version", "/version/")


def _bootstrap() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(ClusterRoleBinding, ClusterRole) pairs of kube-apiserver's bootstrap policy that matter to a
    client that is not a control-plane component."""

    def pair(
        name: str, groups: tuple[str, ...], rules: list[dict[str, Any]]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        binding = {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": name},
            "subjects": [{"apiGroup": GROUP, "kind": "Group", "name": g} for g in groups],
        }
        return binding, {"metadata": {"name": name}, "rules": rules}

    return [
        pair(
            "system:discovery",
            (AUTHENTICATED,),
            [{"verbs": ["get"], "nonResourceURLs": list(_DISCOVERY_URLS)}],
        ),
        pair(
            "system:basic-user",
            (AUTHENTICATED,),
            [
                {
                    "verbs": ["create"],
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                },
                {
                    "verbs": ["create"],
                    "apiGroups": ["authentication.k8s.io"],
                    "resources": ["selfsubjectreviews"],
                },
            ],
        ),
        pair(
            "system:public-info-viewer",
            (AUTHENTICATED, UNAUTHENTICATED),
            [{"verbs": ["get"], "nonResourceURLs": list(_PUBLIC_URLS)}],
        ),
    ]


BOOTSTRAP = _bootstrap()


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str  # "RBAC: allowed by ..." when allowed; the resolution errors (or "") when not


@dataclass(frozen=True)
class _Grant:
    """Rules reached through one binding, and how to name that path in a reason."""

    rules: list[dict[str, Any]]
    description: str


class RbacAuthorizer:
    """Decides `Attributes` from the RBAC objects in `store` (read at each call: no cache to go stale)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def authorize(self, a: Attributes) -> Decision:
        errors: list[str] = []
        for grant in self._grants(a, errors):
            if any(rule_allows(rule, a) for rule in grant.rules):
                return Decision(True, f"RBAC: allowed by {grant.description}")
        if not errors:
            return Decision(False, "")
        # "rbac: ": kube-apiserver's authorizer chain names the authorizer a denial's reason is from
        joined = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        return Decision(False, f"rbac: RBAC: {joined}")

    def rules_for(self, user: str, groups: tuple[str, ...], namespace: str) -> list[dict[str, Any]]:
        """Every rule that applies to the user in `namespace` (SelfSubjectRulesReview's answer)."""
        a = Attributes(user, groups, "", namespace=namespace)
        return [rule for grant in self._grants(a, []) for rule in grant.rules]

    # -- bindings -> rules -------------------------------------------------------------------------

    def _grants(self, a: Attributes, errors: list[str]) -> Iterator[_Grant]:
        for binding, role in BOOTSTRAP:
            if _binds(binding, a, ""):
                yield _Grant(role["rules"], _describe(binding, "", a))
        for binding in self._list("clusterrolebindings", None):
            if _binds(binding, a, ""):
                rules = self._role_rules(binding.get("roleRef") or {}, "", errors)
                if rules is not None:
                    yield _Grant(rules, _describe(binding, "", a))
        if not a.namespace:
            return
        for binding in self._list("rolebindings", a.namespace):
            if _binds(binding, a, a.namespace):
                rules = self._role_rules(binding.get("roleRef") or {}, a.namespace, errors)
                if rules is not None:
                    yield _Grant(rules, _describe(binding, a.namespace, a))

    def _role_rules(
        self, ref: dict[str, Any], namespace: str, errors: list[str]
    ) -> list[dict[str, Any]] | None:
        kind, name = ref.get("kind", ""), ref.get("name", "")
        if kind == "Role" and namespace:
            role = self.store.find((GROUP, "roles"), namespace, name)
            if role is None:
                errors.append(f'role.{GROUP} "{name}" not found')
                return None
            return list(role.get("rules") or [])
        if kind == "ClusterRole":
            role = self.store.find((GROUP, "clusterroles"), "", name)
            if role is None:
                errors.append(f'clusterrole.{GROUP} "{name}" not found')
                return None
            return self._cluster_role_rules(role)
        errors.append(f'unsupported role reference kind: "{kind}"')
        return None

    def _cluster_role_rules(self, role: dict[str, Any]) -> list[dict[str, Any]]:
        aggregation = role.get("aggregationRule")
        if not isinstance(aggregation, dict):
            return list(role.get("rules") or [])
        # what the clusterrole-aggregation controller writes into `rules`: the union of the rules of
        # every other ClusterRole any selector picks
        selectors = [labels.from_label_selector(s) for s in aggregation.get("clusterRoleSelectors") or []]
        own = role["metadata"]["name"]
        rules: list[dict[str, Any]] = []
        for other in self._list("clusterroles", None):
            meta = other.get("metadata") or {}
            if meta.get("name") == own:
                continue
            if any(s.matches(meta.get("labels") or {}) for s in selectors):
                rules += [r for r in other.get("rules") or [] if r not in rules]
        return rules

    def _list(self, plural: str, namespace: str | None) -> list[dict[str, Any]]:
        info = self.store.registry.get(GROUP, "v1", plural)
        if info is None or not self.store.has_objects(info.bucket):
            return []
        items, *_ = self.store.list(info, namespace)
        return items


# -- rbac/v1 helpers: which subjects a binding names, which requests a rule covers ---------------------


def _binds(binding: dict[str, Any], a: Attributes, namespace: str) -> bool:
    return any(_subject_is(s, a, namespace) for s in binding.get("subjects") or [])


def _subject_is(subject: dict[str, Any], a: Attributes, namespace: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name", "")
    if kind == "User":
        return bool(name) and name == a.user
    if kind == "Group":
        return name in a.groups
    if kind == "ServiceAccount":
        # a RoleBinding's subject without a namespace means one in the binding's namespace
        sa_namespace = subject.get("namespace") or namespace
        return bool(sa_namespace) and a.user == f"system:serviceaccount:{sa_namespace}:{name}"
    return False


def _describe(binding: dict[str, Any], namespace: str, a: Attributes) -> str:
    """The real authorizer's wording: `RoleBinding "name/ns" of Role "r" to User "alice"`."""
    ref = binding.get("roleRef") or {}
    meta = binding.get("metadata") or {}
    if namespace:
        where = f'RoleBinding "{meta.get("name", "")}/{namespace}"'
    else:
        where = f'ClusterRoleBinding "{meta.get("name", "")}"'
    subject: dict[str, Any] = next(
        (s for s in binding.get("subjects") or [] if _subject_is(s, a, namespace)), {}
    )
    who = subject.get("name", "")
    if subject.get("kind") == "ServiceAccount":
        who = f"{subject.get('namespace') or namespace}/{who}"
    return f'{where} of {ref.get("kind", "")} "{ref.get("name", "")}" to {subject.get("kind", "")} "{who}"'


def rule_allows(rule: dict[str, Any], a: Attributes) -> bool:
    if not _has(rule.get("verbs"), a.verb):
        return False
    if not a.resource_request:
        return _url_matches(rule.get("nonResourceURLs") or [], a.path or "")
    return (
        _has(rule.get("apiGroups"), a.api_group)
        and _resource_matches(rule.get("resources") or [], a.resource, a.subresource)
        and _name_matches(rule.get("resourceNames") or [], a.name)
    )


def _has(values: Any, wanted: str) -> bool:
    return isinstance(values, list) and any(v == "*" or v == wanted for v in values)


def _resource_matches(resources: list[str], resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for r in resources:
        if r in ("*", combined):
            return True
        # `*/status` covers the status of every resource
        if subresource and r == f"*/{subresource}":
            return True
    return False


def _name_matches(names: list[str], name: str) -> bool:
    return not names or name in names


def _url_matches(urls: list[str], path: str) -> bool:
    return any(u in ("*", path) or (u.endswith("*") and path.startswith(u[:-1])) for u in urls)
