"""RBAC decisions and 403 bodies, word for word (issue 25): the corpus's admin impersonates users and
service accounts, so both servers authorize the same requests for someone who is not a cluster admin.
The emulator's RBAC evaluator (envtest/server/rbac.py) answers impersonated requests in every mode."""

from __future__ import annotations

import json
from typing import Any

from tests.conformance.harness import Scenario, Step
from tests.conformance.scenarios.steps import at, get, post, setup

RBAC = "/apis/rbac.authorization.k8s.io/v1"
ALICE = {"Impersonate-User": "alice"}
SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews"


def _denied(path: str, headers: dict[str, str] = ALICE, method: str = "GET") -> Step:
    return Step(method, path, headers=headers, messages=True)


def _role(name: str, rules: list[dict[str, Any]]) -> Step:
    return setup(post(f"{RBAC}/namespaces/{{ns}}/roles", {"metadata": {"name": name}, "rules": rules}))


def _binding(name: str, kind: str, role: str, subject: dict[str, str]) -> Step:
    return setup(
        post(
            f"{RBAC}/namespaces/{{ns}}/rolebindings",
            {
                "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
                "subjects": [subject],
            },
        )
    )


ALICE_SUBJECT = {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}
READER = [
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]},
    {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"], "resourceNames": ["mine"]},
    {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]},
]


def _settled(
    user: str, allowed: bool, reason: str = "", groups: tuple[str, ...] = (), **attributes: str
) -> Step:
    """A setup SubjectAccessReview sent until the server's decision is `allowed` (and its reason has
    `reason`): the real authorizer sees new bindings a moment after they are stored."""
    step = setup(_sar(user, groups, **attributes))
    step.until = lambda r: (
        r.body["status"].get("allowed", False) is allowed and reason in r.body["status"].get("reason", "")
    )
    return step


def _sar(user: str, groups: tuple[str, ...] = (), **attributes: str) -> Step:
    return post(
        SAR,
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": user,
                "groups": list(groups),
                "resourceAttributes": {"namespace": "{ns}", **attributes},
            },
        },
        view=at("status"),
    )


def scenarios() -> list[Scenario]:
    seqs: dict[str, list[Step]] = {
        "forbidden-list": [_denied("/api/v1/namespaces/{ns}/pods")],
        "forbidden-named-in-a-group": [_denied("/apis/apps/v1/namespaces/{ns}/deployments/web")],
        "forbidden-cluster-scope": [_denied("/api/v1/nodes")],
        "forbidden-all-namespaces": [_denied("/api/v1/configmaps")],
        "forbidden-path": [_denied("/logs")],
        "forbidden-subresource": [_denied("/api/v1/namespaces/{ns}/pods/p/log")],
        "forbidden-deletecollection": [_denied("/api/v1/namespaces/{ns}/configmaps", method="DELETE")],
        "forbidden-namespace-itself": [_denied("/api/v1/namespaces/{ns}")],
        "forbidden-service-account": [
            _denied("/api/v1/namespaces/{ns}/pods", {"Impersonate-User": "system:serviceaccount:{ns}:bot"})
        ],
        "role-grants": [
            _role("reader", READER),
            _binding("alice-reads", "Role", "reader", ALICE_SUBJECT),
            _settled("alice", True, verb="list", resource="configmaps"),
            get("/api/v1/namespaces/{ns}/configmaps", headers=ALICE, view=at("kind")),
            get("/api/v1/namespaces/{ns}/secrets/mine", headers=ALICE, messages=True),  # allowed: 404
            _denied("/api/v1/namespaces/{ns}/secrets/theirs"),
            _denied("/api/v1/namespaces/{ns}/secrets"),
            get("/api/v1/namespaces/{ns}/pods/p/log", headers=ALICE, messages=True),  # allowed: 404
            _denied("/api/v1/namespaces/{ns}/pods/p"),
            _denied("/api/v1/namespaces/{ns}/configmaps/x", method="DELETE"),
        ],
        "role-grants-service-account": [
            _role("reader", READER),
            _binding("bot-reads", "Role", "reader", {"kind": "ServiceAccount", "name": "bot"}),
            _settled("system:serviceaccount:{ns}:bot", True, verb="list", resource="configmaps"),
            get(
                "/api/v1/namespaces/{ns}/configmaps",
                headers={"Impersonate-User": "system:serviceaccount:{ns}:bot"},
                view=at("kind"),
            ),
            _denied(
                "/api/v1/namespaces/{ns}/configmaps", {"Impersonate-User": "system:serviceaccount:other:bot"}
            ),
        ],
        "cluster-role-in-a-namespace": [
            setup(
                post(
                    f"{RBAC}/clusterroles",
                    {
                        "metadata": {"name": "cm-lister-{ns}"},
                        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}],
                    },
                )
            ),
            _binding("devs", "ClusterRole", "cm-lister-{ns}", {"kind": "Group", "name": "devs"}),
            _settled("bob", True, groups=("devs",), verb="list", resource="configmaps"),
            get(
                "/api/v1/namespaces/{ns}/configmaps",
                headers={"Impersonate-User": "bob", "Impersonate-Group": "devs"},
                view=at("kind"),
            ),
            _denied("/api/v1/configmaps", {"Impersonate-User": "bob", "Impersonate-Group": "devs"}),
        ],
        "missing-role": [
            _binding("dangling", "Role", "gone", ALICE_SUBJECT),
            _settled("alice", False, "not found", verb="list", resource="pods"),
            _denied("/api/v1/namespaces/{ns}/pods"),
        ],
        "anonymous-denied": [
            _denied("/api/v1/namespaces/{ns}/pods", {"Impersonate-User": "system:anonymous"})
        ],
        "anonymous-healthz": [
            get("/healthz", headers={"Impersonate-User": "system:anonymous"}, messages=True)
        ],
        "anonymous-group-healthz": [
            get(
                "/version",
                headers={
                    "Impersonate-User": "system:anonymous",
                    "Impersonate-Group": "system:unauthenticated",
                },
                status_only=True,
            )
        ],
        "anonymous-whoami": [
            post(
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
                headers={"Impersonate-User": "system:anonymous"},
                messages=True,
            )
        ],
        "unauthenticated-group-whoami": [
            post(
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
                headers={"Impersonate-User": "alice", "Impersonate-Group": "system:unauthenticated"},
                messages=True,
            )
        ],
        "rules-review": [
            _role("reader", READER),
            _binding("alice-reads", "Role", "reader", ALICE_SUBJECT),
            _settled("alice", True, verb="list", resource="configmaps"),
            post(
                "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                {
                    "apiVersion": "authorization.k8s.io/v1",
                    "kind": "SelfSubjectRulesReview",
                    "spec": {"namespace": "{ns}"},
                },
                headers=ALICE,
                # gathered from the authorizers in map order: compared as sets
                view=lambda b: (
                    sorted(json.dumps(r, sort_keys=True) for r in b["status"]["resourceRules"]),
                    sorted(json.dumps(r, sort_keys=True) for r in b["status"]["nonResourceRules"]),
                    b["status"].get("incomplete"),
                ),
            ),
        ],
        "sar-reason": [
            _role("reader", READER),
            _binding("alice-reads", "Role", "reader", ALICE_SUBJECT),
            _settled("alice", True, verb="list", resource="configmaps"),
            _sar("alice", verb="get", resource="configmaps"),
            _sar("alice", verb="get", resource="secrets", name="mine"),
            _sar("alice", verb="get", resource="pods", subresource="log", name="p"),
            _sar("alice", verb="delete", resource="configmaps"),
        ],
    }
    return [Scenario(f"rbac/{k}", "rbac", v) for k, v in seqs.items()]


SCENARIOS = scenarios()
