"""Who sends a request and whether they may: kube-apiserver's authentication, impersonation and
authorization filters, in that order, for `authorization="RBAC"` mode (and authentication alone for
`tls=True`).

* Authentication: a client certificate the environment's CA signed (CN user, O groups), else a
  bearer token the policy knows (the admin token, `Environment.add_user`'s, TokenRequest's service
  account tokens); a credential that fails either is 401 Unauthorized; no credential at all is
  `system:anonymous` in `system:unauthenticated`.
* Impersonation: `Impersonate-User`/`-Group` need the `impersonate` verb on `users`/`groups` (or
  `serviceaccounts` in the account's namespace), checked for the real user first.
* Authorization: the request's attributes (k8s.io/apiserver's RequestInfoFactory: verb from method
  and path, `list`/`watch`/`deletecollection` for collections, the namespace of a namespace is
  itself) decided by the policy; a denial is the real server's 403 Status, word for word.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.server.auth import (
    ANONYMOUS_USER,
    AUTHENTICATED,
    UNAUTHENTICATED,
    Attributes,
    Policy,
    UserInfo,
    impersonation,
    service_account,
)
from pyscaffold_op.envtest.server.pki import Authority
from pyscaffold_op.envtest.server.protocol import HttpRequest

ANONYMOUS = UserInfo(ANONYMOUS_USER, (UNAUTHENTICATED,))
_WRITE_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


@dataclass
class AccessControl:
    """Authenticates every request over HTTPS; with `enforce`, authorizes every request too. Without
    it, only an impersonated request is authorized (as the user it names): the emulator's own
    callers are cluster admins, who may impersonate anyone."""

    policy: Policy
    authority: Authority | None = None  # the CA whose client certificates authenticate
    authenticating: bool = False  # HTTPS: credentials are checked (401 for bad ones)
    enforce: bool = False  # RBAC mode: every request authorized

    def admit(self, req: HttpRequest) -> UserInfo | None:
        """The user the request acts as (None when nothing is checked); raises the 401 or 403 Status
        the real server answers."""
        user = self.authenticate(req) if self.authenticating else None
        acting = impersonation(req.headers)
        if not self.enforce:
            if acting is not None:
                self._authorize(request_attributes(req, acting))
                return acting
            return user
        assert user is not None, "RBAC mode authenticates every request"
        if acting is not None:
            self._may_impersonate(user, acting)
            user = acting
        self._authorize(request_attributes(req, user))
        return user

    def _authorize(self, a: Attributes) -> None:
        allowed, _denied, reason = self.policy.authorize(a)
        if not allowed:
            raise forbidden(a, reason)

    def authenticate(self, req: HttpRequest) -> UserInfo:
        presented = False
        if req.client_cert and self.authority is not None:
            presented = True
            user = self.authority.verify_client(req.client_cert)
            if user is not None:
                return user
        auth = req.headers.get("authorization", "")
        if auth[:7].lower() == "bearer ":
            presented = True
            token_user = self.policy.authenticate(auth[7:].strip())
            if token_user is not None:
                return token_user
        if presented:
            raise unauthorized()
        return ANONYMOUS

    def _may_impersonate(self, user: UserInfo, acting: UserInfo) -> None:
        checks: list[Attributes] = []
        sa = service_account(acting.username)
        if sa is not None:
            checks.append(_impersonate(user, "serviceaccounts", sa[1], sa[0]))
        else:
            checks.append(_impersonate(user, "users", acting.username))
        # system:authenticated is added, not asked for: it needs no permission
        checks += [_impersonate(user, "groups", g) for g in acting.groups if g != AUTHENTICATED]
        for a in checks:
            self._authorize(a)


def _impersonate(user: UserInfo, resource: str, name: str, namespace: str = "") -> Attributes:
    return Attributes(
        user.username, user.groups, "impersonate", resource=resource, name=name, namespace=namespace
    )


def request_attributes(req: HttpRequest, user: UserInfo) -> Attributes:
    """The authorizer's view of a request, as k8s.io/apiserver's RequestInfoFactory derives it."""
    parts = [p for p in req.path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 2:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        rest = []
    if not rest:  # discovery, /healthz, /version ...: a non-resource URL, verb the method's name
        return Attributes(user.username, user.groups, req.method.lower(), path=req.path or "/")
    verb = "get" if req.method in ("GET", "HEAD") else _WRITE_VERBS.get(req.method, req.method.lower())
    if rest[0] == "watch":  # legacy /watch/ paths
        verb, rest = "watch", rest[1:]
    namespace = ""
    if rest[:1] == ["namespaces"] and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if not name and verb == "get":
        verb = "watch" if req.flag("watch") else "list"
        name = _exact_name(req.q("fieldSelector"))
    elif not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(
        user.username,
        user.groups,
        verb,
        api_group=group,
        resource=resource,
        subresource=subresource,
        namespace=namespace,
        name=name,
    )


def _exact_name(selector: str | None) -> str:
    """`metadata.name=x` in a field selector names the object a list or watch is about."""
    for term in (selector or "").split(","):
        key, sep, value = term.partition("=")
        if sep and key.strip() == "metadata.name" and not value.startswith("="):
            return value.strip()
    return ""


def unauthorized() -> E.StatusError:
    return E.StatusError(401, "Unauthorized", "Unauthorized")


def forbidden(a: Attributes, reason: str) -> E.StatusError:
    """apiserver's ForbiddenStatusError: `pods is forbidden: User "alice" cannot list resource "pods"
    in API group "" in the namespace "default"`, then the authorizer's reason if it gave one."""
    if not a.resource_request:
        why = f'User "{a.user}" cannot {a.verb} path "{a.path}"'
    else:
        resource = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
        where = f'in the namespace "{a.namespace}"' if a.namespace else "at the cluster scope"
        why = f'User "{a.user}" cannot {a.verb} resource "{resource}" in API group "{a.api_group}" {where}'
    if reason:
        why = f"{why}: {reason}"
    qualified = f"{a.resource}.{a.api_group}" if a.api_group and a.resource else a.resource
    if not qualified and not a.name:
        head = "forbidden"
    elif not a.name:
        head = f"{qualified} is forbidden"
    else:
        head = f'{qualified} "{a.name}" is forbidden'
    details: dict[str, str] = {}
    if a.name:
        details["name"] = a.name
    if a.api_group:
        details["group"] = a.api_group
    if a.resource:
        details["kind"] = a.resource
    return E.StatusError(403, "Forbidden", f"{head}: {why}", details)
