"""Who a token is and what it may do: the policy behind the emulator's review APIs.

This policy answers `TokenReview`s (authentication.k8s.io/v1) and `SubjectAccessReview`s /
`SelfSubjectAccessReview`s (authorization.k8s.io/v1), which is what a server doing delegated
authentication asks — a manager serving its metrics with `metrics_secure=True`, kube-rbac-proxy, an
aggregated API server. It also decides impersonated requests and, in `authorization="RBAC"` mode,
every request (`access.AccessControl`); otherwise the emulator lets every request through.

* The kubeconfig's token is user `envtest-admin` in group `system:masters` (allowed everything, as
  the real server's privileged-group authorizer does). `add_token()` registers more users; every
  authenticated user is also in `system:authenticated`. Unknown tokens are not authenticated.
* `allow()` adds a rule for a user or group name; `add_authorizer()` adds a callable consulted before
  the rules. Then the RBAC objects stored in the emulator decide (`rbac.RbacAuthorizer`, set by the
  `Api`): the same evaluator that gates every request in `authorization="RBAC"` mode.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

ADMIN_USER = "envtest-admin"
MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS_USER = "system:anonymous"


@dataclass(frozen=True)
class UserInfo:
    username: str
    groups: tuple[str, ...] = ()
    uid: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"username": self.username}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        return out


@dataclass(frozen=True)
class Attributes:
    """What a SubjectAccessReview asks: `user`/`groups` may `verb` on `path` (non-resource URL) or on
    `resource` (plural) in `api_group`, optionally `subresource`, `namespace` and `name`."""

    user: str
    groups: tuple[str, ...]
    verb: str
    path: str | None = None
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    @property
    def resource_request(self) -> bool:
        return self.path is None


# A callable authorizer: True allows, False denies (no later rule can allow), None has no opinion.
Authorizer = Callable[[Attributes], bool | None]


class Verdict(Protocol):
    @property
    def allowed(self) -> bool: ...
    @property
    def reason(self) -> str: ...


class RoleBased(Protocol):
    """The RBAC authorizer (`rbac.RbacAuthorizer`), the policy's last word."""

    def authorize(self, a: Attributes) -> Verdict: ...
    def rules_for(self, user: str, groups: tuple[str, ...], namespace: str) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class AccessRule:
    subject: str  # a user name or a group name
    verbs: frozenset[str]
    paths: tuple[str, ...] = ()  # non-resource URLs; a trailing `*` is a prefix match
    resources: tuple[str, ...] = ()  # `plural` (core group), `plural.group`, or `*`

    def matches(self, a: Attributes) -> bool:
        if self.subject != a.user and self.subject not in a.groups:
            return False
        if "*" not in self.verbs and a.verb not in self.verbs:
            return False
        if not self.paths and not self.resources:
            return True
        if a.path is not None:
            return any(p == a.path or (p.endswith("*") and a.path.startswith(p[:-1])) for p in self.paths)
        plural = a.resource + (f"/{a.subresource}" if a.subresource else "")
        qualified = f"{plural}.{a.api_group}" if a.api_group else plural
        return any(r in ("*", qualified) for r in self.resources)

    def describe(self) -> str:
        what = ", ".join(self.paths + self.resources) or "everything"
        return f"{'/'.join(sorted(self.verbs))} on {what} to {self.subject}"


@dataclass
class Policy:
    tokens: dict[str, UserInfo] = field(default_factory=dict)
    rules: list[AccessRule] = field(default_factory=list)
    authorizers: list[Authorizer] = field(default_factory=list)
    # The reviews answered, newest last (for tests: "was a TokenReview sent?"); bounded.
    reviews: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=1000))
    counts: Counter[str] = field(default_factory=Counter)  # kind -> reviews answered (unbounded)
    # Who a SelfSubjectAccessReview without a bearer token is: client-go (kubectl) sends no token
    # over plain HTTP, so the Environment makes this its kubeconfig's user.
    tokenless: UserInfo | None = None
    rbac: RoleBased | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add_token(self, token: str, username: str, groups: Iterable[str] = (), uid: str = "") -> None:
        """TokenReviews of `token` authenticate `username` in `groups` (plus system:authenticated)."""
        if not token:
            raise ValueError("a token must not be empty")
        groups = tuple(groups)
        if AUTHENTICATED not in groups:
            groups += (AUTHENTICATED,)
        with self._lock:
            # a static token's uid is its user's name unless given (kube-apiserver's token file
            # has a uid column; the control plane's writes the name there)
            self.tokens[token] = UserInfo(username, groups, uid or username)

    def allow(
        self,
        subject: str,
        verbs: str | Iterable[str] = "*",
        *,
        paths: str | Iterable[str] = (),
        resources: str | Iterable[str] = (),
    ) -> None:
        """SubjectAccessReviews allow user or group `subject` to do `verbs` on non-resource `paths`
        (`"/metrics"`, a trailing `*` matches a prefix) or on `resources` (`"pods"`, `"deployments.apps"`,
        `"pods/log"`, `"*"`); with neither, on everything."""
        vs = frozenset([verbs] if isinstance(verbs, str) else verbs)
        ps = (paths,) if isinstance(paths, str) else tuple(paths)
        rs = (resources,) if isinstance(resources, str) else tuple(resources)
        with self._lock:
            self.rules.append(AccessRule(subject, vs, ps, rs))

    def add_authorizer(self, fn: Authorizer) -> None:
        """`fn(attributes) -> True | False | None` is asked before the `allow` rules (False denies)."""
        with self._lock:
            self.authorizers.append(fn)

    def authenticate(self, token: str) -> UserInfo | None:
        return self.tokens.get(token) if token else None

    def authorize(self, a: Attributes) -> tuple[bool, bool, str]:
        """(allowed, denied, reason), as a SubjectAccessReview's status says them."""
        if MASTERS in a.groups:
            return True, False, ""
        for fn in list(self.authorizers):
            verdict = fn(a)
            if verdict is True:
                return True, False, "envtest: allowed by an authorizer"
            if verdict is False:
                return False, True, "envtest: denied by an authorizer"
        for rule in list(self.rules):
            if rule.matches(a):
                return True, False, f"envtest: allowed by rule {rule.describe()}"
        if self.rbac is not None:
            decision = self.rbac.authorize(a)
            return decision.allowed, False, decision.reason
        return False, False, ""

    def record(self, review: dict[str, Any]) -> None:
        with self._lock:
            self.reviews.append(review)
            self.counts[review.get("kind", "")] += 1


def impersonation(headers: dict[str, str]) -> UserInfo | None:
    """The user an `Impersonate-User` header (with `Impersonate-Group`s) names; None without one.
    Groups without a user are a 400, as kube-apiserver's impersonation filter answers. A service
    account impersonated without groups gets its groups, as there."""
    user = headers.get("impersonate-user")
    groups_header = headers.get("impersonate-group")
    if not user:
        if groups_header:
            from pyscaffold_op.envtest import status as E

            raise E.bad_request("requested [{Group  " + groups_header + "  }] without impersonating a user")
        return None
    groups = tuple(g.strip() for g in (groups_header or "").split(",") if g.strip())
    if not groups and (sa := service_account(user)) is not None:
        groups = service_account_groups(sa[0])
    # as kube-apiserver answers: an impersonated user is authenticated, system:anonymous
    # unauthenticated, unless the groups asked for already say either way
    if AUTHENTICATED not in groups and UNAUTHENTICATED not in groups:
        groups += (UNAUTHENTICATED,) if user == ANONYMOUS_USER else (AUTHENTICATED,)
    return UserInfo(user, groups)


SA_PREFIX = "system:serviceaccount:"


def service_account(user: str) -> tuple[str, str] | None:
    """(namespace, name) of a `system:serviceaccount:<ns>:<name>` user name, else None."""
    if not user.startswith(SA_PREFIX):
        return None
    ns, sep, name = user[len(SA_PREFIX) :].partition(":")
    return (ns, name) if sep and ns and name and ":" not in name else None


def service_account_groups(namespace: str) -> tuple[str, ...]:
    return ("system:serviceaccounts", f"system:serviceaccounts:{namespace}")
