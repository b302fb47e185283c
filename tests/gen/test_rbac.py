# ruff: noqa: E501 - expected rules read best on one line
"""RBAC markers normalized like controller-gen's NormalizeRules (its own testdata scenario)."""

from __future__ import annotations

import yaml

from pyscaffold_op.gen import generate_rbac
from pyscaffold_op.gen.markers import parse_marker
from pyscaffold_op.gen.rbac import build_roles


def roles(*texts: str) -> list[dict]:
    markers = [parse_marker(f"kubebuilder:rbac:{t}", "c.py:1") for t in texts]
    return build_roles([m for m in markers if m is not None])


def test_controller_gen_normalization() -> None:
    docs = roles(
        "groups=batch.io,resources=cronjobs,verbs=get;watch;create",
        "groups=batch.io,resources=cronjobs/status,verbs=get;update;patch",
        "groups=art,resources=jobs,verbs=get,namespace=zoo",
        "groups=wave,resources=jobs,verbs=get,namespace=zoo",
        "groups=art,resources=jobs,verbs=get,namespace=park",
        "groups=batch.io,resources=cronjobs,resourceNames=foo;bar;baz,verbs=get;watch",
        "groups=deduplicate-verbs,resources=some,verbs=get",
        "groups=deduplicate-verbs,resources=some,verbs=list",
        "groups=deduplicate-resources,resources=one,verbs=create",
        "groups=deduplicate-resources,resources=two;three,verbs=create",
        "groups=deduplicate-groups1;deduplicate-groups2,resources=foo,verbs=patch",
        "groups=deduplicate-groups3,resources=foo,verbs=patch",
        "groups=core,resources=me,verbs=list",
        'groups="",resources=deduplicate,verbs=list',
        "urls=/url-to-duplicate,verbs=get",
        "urls=/another/url-to-duplicate,verbs=get",
        "groups=all,resources=everything,verbs=get;*",
    )
    assert [(d["kind"], d["metadata"]) for d in docs] == [
        ("ClusterRole", {"name": "manager-role"}),
        ("Role", {"name": "manager-role", "namespace": "park"}),
        ("Role", {"name": "manager-role", "namespace": "zoo"}),
    ]
    cluster = docs[0]["rules"]
    assert cluster == [
        {"nonResourceURLs": ["/another/url-to-duplicate", "/url-to-duplicate"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["deduplicate", "me"], "verbs": ["list"]},
        {"apiGroups": ["all"], "resources": ["everything"], "verbs": ["*"]},
        {"apiGroups": ["batch.io"], "resources": ["cronjobs"], "verbs": ["create", "get", "watch"]},
        {"apiGroups": ["batch.io"], "resourceNames": ["bar", "baz", "foo"], "resources": ["cronjobs"], "verbs": ["get", "watch"]},
        {"apiGroups": ["batch.io"], "resources": ["cronjobs/status"], "verbs": ["get", "patch", "update"]},
        {"apiGroups": ["deduplicate-groups1", "deduplicate-groups2", "deduplicate-groups3"], "resources": ["foo"], "verbs": ["patch"]},
        {"apiGroups": ["deduplicate-resources"], "resources": ["one", "three", "two"], "verbs": ["create"]},
        {"apiGroups": ["deduplicate-verbs"], "resources": ["some"], "verbs": ["get", "list"]},
    ]  # fmt: skip
    assert docs[2]["rules"] == [{"apiGroups": ["art", "wave"], "resources": ["jobs"], "verbs": ["get"]}]


def test_no_markers_still_gives_an_empty_cluster_role() -> None:
    assert roles() == [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "manager-role"}, "rules": []}
    ]  # fmt: skip


def test_markers_anywhere_in_the_controllers_package(project) -> None:
    builder = project()
    builder.controller(
        "a_controller",
        '''\
        """Docs."""


        def helper():
            # +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch
            return 1
        ''',
    )
    sub = builder.root / "src" / "demo" / "controllers" / "sub"
    sub.mkdir()
    (sub / "b.py").write_text(
        "# +kubebuilder:rbac:groups=apps,resources=deployments,verbs=create\n"
        '# +kubebuilder:rbac:groups="",resources=secrets,verbs=get,namespace=team\n'
    )
    builder.write_project()
    generate_rbac(builder.root)
    text = (builder.root / "config/rbac/role.yaml").read_text()
    docs = list(yaml.safe_load_all(text))
    assert docs[0]["rules"] == [{"apiGroups": ["apps"], "resources": ["deployments"],
                                 "verbs": ["create", "get", "list", "watch"]}]  # fmt: skip
    assert docs[1]["kind"] == "Role" and docs[1]["metadata"]["namespace"] == "team"
    assert text.count("---\n") == 2


def test_only_namespaced_markers_give_only_roles() -> None:
    docs = roles("groups=apps,resources=deployments,verbs=get,namespace=system")
    assert [(d["kind"], d["metadata"]) for d in docs] == [
        ("Role", {"name": "manager-role", "namespace": "system"})
    ]
    assert build_roles([], empty_namespace="system")[0]["kind"] == "Role"
