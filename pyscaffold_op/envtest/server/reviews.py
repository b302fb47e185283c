"""The review APIs: TokenReview, SubjectAccessReview, SelfSubjectAccessReview.

Create-only and never stored: the answer is the posted object with `status` filled, from the
`auth.Policy` (who a token is, what a user may do).
"""

from __future__ import annotations

from typing import Any

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.registry.resources import ServedResource
from pyscaffold_op.envtest.server import wire
from pyscaffold_op.envtest.server.auth import MASTERS, Attributes, Policy, UserInfo, impersonation
from pyscaffold_op.envtest.server.protocol import HttpRequest, Response, Target, json_response
from pyscaffold_op.envtest.storage.objectstore import now_rfc3339

ANONYMOUS = ("system:anonymous", ("system:unauthenticated",))


class ReviewVerbs:
    """TokenReview and (Self)SubjectAccessReview answered from the policy."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def review(self, req: HttpRequest, t: Target) -> Response:
        if t.subresource:
            raise E.not_found_path()
        if req.method != "POST" or t.name is not None:
            raise E.method_not_allowed(req.method)
        obj = wire.read_body(req, t.info)
        spec = obj.get("spec")
        if spec is None:
            spec = {}
        _expect(t.info, "spec", spec, dict)
        obj = {
            "apiVersion": t.info.api_version,
            "kind": t.info.kind,
            "metadata": obj.get("metadata") or {},
            **{k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata", "status")},
            "spec": spec,
        }
        if t.info.kind == "LocalSubjectAccessReview":
            obj["metadata"] = {**obj["metadata"], "namespace": t.namespace}
        if t.info.kind == "TokenReview":
            obj["status"] = self._token_review(t.info, spec)
        elif t.info.kind == "SelfSubjectReview":
            obj.pop("spec", None)
            obj["metadata"] = {**obj["metadata"], "creationTimestamp": now_rfc3339()}
            obj["status"] = {"userInfo": self.requester(req).to_dict()}
        elif t.info.kind == "SelfSubjectRulesReview":
            obj["status"] = self._rules_review(self.requester(req), str(spec.get("namespace") or ""))
        else:
            obj["status"] = self._access_review(req, t.info, spec, t.namespace)
        self.policy.record(obj)
        return json_response(201, obj)

    def _token_review(self, info: ServedResource, spec: dict[str, Any]) -> dict[str, Any]:
        token = spec.get("token")
        _expect(info, "spec.token", token, str)
        audiences = spec.get("audiences")
        if audiences is not None:
            _expect_strings(info, "spec.audiences", audiences)
        if not token:
            raise E.bad_request("token is required for TokenReview in authentication")
        user = self.policy.authenticate(token)
        if user is None:
            return {"user": {}}
        status: dict[str, Any] = {"authenticated": True, "user": user.to_dict()}
        if audiences:  # the emulator's tokens are audience-agnostic: they are good for any audience
            status["audiences"] = list(audiences)
        return status

    def requester(self, req: HttpRequest) -> UserInfo:
        """Who sent the request: the impersonated user, else the bearer token's (kubectl's tokenless
        user over plain HTTP), else anonymous."""
        who = impersonation(req.headers) if req.user is None else req.user
        if who is not None:
            return who
        auth = req.headers.get("authorization", "")
        token = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
        who = self.policy.authenticate(token) if token else self.policy.tokenless
        return who if who is not None else UserInfo(ANONYMOUS[0], ANONYMOUS[1])

    def _rules_review(self, who: UserInfo, namespace: str) -> dict[str, Any]:
        """What the user may do in `namespace`: everything for system:masters, then the rules of the
        RBAC bindings that name the user (the bootstrap ones every authenticated user has first)."""
        everything = MASTERS in who.groups
        resource_rules: list[dict[str, Any]] = [
            {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}
        ] * everything
        nonresource_rules: list[dict[str, Any]] = [{"verbs": ["*"], "nonResourceURLs": ["*"]}] * everything
        rbac = self.policy.rbac
        for rule in rbac.rules_for(who.username, who.groups, namespace) if rbac is not None else []:
            if rule.get("nonResourceURLs"):
                nonresource_rules.append(
                    {"verbs": rule.get("verbs") or [], "nonResourceURLs": rule["nonResourceURLs"]}
                )
                continue
            out = {k: rule[k] for k in ("verbs", "apiGroups", "resources", "resourceNames") if rule.get(k)}
            resource_rules.append({"verbs": out.pop("verbs", []), **out})
        return {"resourceRules": resource_rules, "nonResourceRules": nonresource_rules, "incomplete": False}

    def _access_review(
        self, req: HttpRequest, info: ServedResource, spec: dict[str, Any], namespace: str | None = None
    ) -> dict[str, Any]:
        res, nonres = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        for name, value in (("resourceAttributes", res), ("nonResourceAttributes", nonres)):
            if value is not None:
                _expect(info, f"spec.{name}", value, dict)
                for k, v in value.items():
                    if k in ("fieldSelector", "labelSelector"):
                        continue
                    _expect(info, f"spec.{name}.{k}", v, str)
        causes = []
        if res is not None and nonres is not None:
            causes.append(
                E.cause(
                    "FieldValueInvalid",
                    "spec",
                    'Invalid value: "{...}": cannot be specified in combination with resourceAttributes',
                )
            )
        elif res is None and nonres is None:
            causes.append(
                E.cause(
                    "FieldValueInvalid",
                    "spec",
                    'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes '
                    "must be specified",
                )
            )
        if info.kind == "SelfSubjectAccessReview":
            who = self.requester(req)
            user, groups = who.username, who.groups
        else:
            user = spec.get("user") or ""
            _expect(info, "spec.user", user, str)
            raw_groups = spec.get("groups") or []
            _expect_strings(info, "spec.groups", raw_groups)
            groups = tuple(raw_groups)
            if not user and not groups:
                causes.append(
                    E.cause(
                        "FieldValueInvalid",
                        "spec.user",
                        'Invalid value: "": at least one of user or group must be specified',
                    )
                )
        if (
            info.kind == "LocalSubjectAccessReview"
            and res is not None
            and res.get("namespace", "") != (namespace or "")
        ):
            causes.append(
                E.cause(
                    "FieldValueInvalid",
                    "spec.resourceAttributes.namespace",
                    f'Invalid value: "{res.get("namespace", "")}": must match metadata.namespace',
                )
            )
        if causes:
            raise E.invalid(info.group, "", "", causes)
        if nonres is not None:
            attrs = Attributes(user, groups, nonres.get("verb", ""), path=nonres.get("path", ""))
        else:
            assert res is not None
            attrs = Attributes(
                user,
                groups,
                res.get("verb", ""),
                api_group=res.get("group", ""),
                resource=res.get("resource", ""),
                subresource=res.get("subresource", ""),
                namespace=res.get("namespace", ""),
                name=res.get("name", ""),
            )
        allowed, denied, reason = self.policy.authorize(attrs)
        status: dict[str, Any] = {"allowed": allowed}
        if denied:
            status["denied"] = True
        if reason:
            status["reason"] = reason
        return status


_GO_TYPES: dict[type, str] = {dict: "object", str: "string", list: "array"}


def _expect(info: ServedResource, path: str, value: Any, typ: type) -> None:
    if not isinstance(value, typ):
        go = _GO_TYPES[typ]
        raise E.bad_request(
            f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
            f"{path}: expected {go}, got {_json_type(value)}"
        )


def _expect_strings(info: ServedResource, path: str, value: Any) -> None:
    _expect(info, path, value, list)
    for i, item in enumerate(value):
        _expect(info, f"{path}[{i}]", item, str)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return _GO_TYPES.get(type(value), type(value).__name__)
