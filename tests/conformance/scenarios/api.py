"""Families over the API machinery: apply, patches, lists and watches, deletion, errors, discovery,
reviews, impersonation, and the gaps issue 25 (item 4) and issue 28 (item 7) name."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from tests.conformance.harness import Scenario, Step
from tests.conformance.scenarios.steps import apply, at, delete, get, meta, names, patch, post, put, setup

CM = "/api/v1/namespaces/{ns}/configmaps"
DEP = "/apis/apps/v1/namespaces/{ns}/deployments"
W = "/apis/conf.example.com/v1/namespaces/{ns}/widgets"
CONTAINER = {"name": "c", "image": "nginx"}


def cm(name: str = "c", data: Any = None, **meta_: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta_}}
    if data is not None:
        out["data"] = data
    return out


def dep(name: str = "d", containers: Any = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {"containers": containers or [CONTAINER]},
            },
            **spec,
        },
    }


MANAGED_X = {
    "manager": "x",
    "operation": "Update",
    "apiVersion": "v1",
    "fieldsType": "FieldsV1",
    "fieldsV1": {"f:data": {"f:a": {}}},
}


def _scale(replicas: int, name: str = "d") -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": name},
        "spec": {"replicas": replicas},
    }


def _named(*names: str) -> list[dict[str, str]]:
    return [{"name": n, "image": "nginx"} for n in names]


def _container_names(body: Any) -> Any:
    return [c["name"] for c in body["spec"]["template"]["spec"]["containers"]]


def _managers_of_subresources(body: Any) -> Any:
    entries = body["metadata"].get("managedFields") or []
    return [(e.get("manager"), e.get("operation"), e.get("subresource")) for e in entries]


def _managers(body: Any) -> Any:
    return [(e.get("manager"), e.get("operation")) for e in body["metadata"].get("managedFields") or []]


def applies() -> list[Scenario]:
    c = CM + "/c"
    d = DEP + "/d"
    seqs: dict[str, list[Step]] = {
        "create": [apply(c, cm(data={"a": "1"}))],
        "empty-map-then-key": [apply(c, cm(data={})), apply(c, cm(data={"key1": "v"}))],
        "empty-map-only": [apply(c, cm(data={}))],
        "remove-key": [apply(c, cm(data={"a": "1", "b": "2"})), apply(c, cm(data={"a": "1"}))],
        "two-managers": [apply(c, cm(data={"a": "1"})), apply(c, cm(data={"b": "2"}), manager="m2")],
        "conflict": [apply(c, cm(data={"a": "1"})), apply(c, cm(data={"a": "2"}), manager="m2")],
        "force": [apply(c, cm(data={"a": "1"})), apply(c, cm(data={"a": "2"}), manager="m2", force=True)],
        "same-value-shared": [apply(c, cm(data={"a": "1"})), apply(c, cm(data={"a": "1"}), manager="m2")],
        "labels": [apply(c, cm(labels={"x": "1"})), apply(c, cm(labels={"y": "2"}), manager="m2")],
        "no-field-manager": [Step("PATCH", c, cm(data={"a": "1"}), patch="apply")],
        "wrong-name": [apply(c, cm("other", data={"a": "1"}))],
        "no-kind": [apply(c, {"apiVersion": "v1", "metadata": {"name": "c"}})],
        "yaml-body": [apply(c, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '1'\n")],
        "after-create": [setup(post(CM, cm(data={"a": "1"}))), apply(c, cm(data={"b": "2"}))],
        "after-create-conflict": [setup(post(CM, cm(data={"a": "1"}))), apply(c, cm(data={"a": "2"}))],
        "dry-run": [
            Step("PATCH", c + "?fieldManager=m1&dryRun=All", cm(data={"a": "1"}), patch="apply"),
            get(c),
        ],
        "strict-unknown": [
            Step("PATCH", c + "?fieldManager=m1&fieldValidation=Strict", {**cm(), "junk": 1}, patch="apply")
        ],
        "deployment": [apply(d, dep())],
        "deployment-containers-by-name": [
            apply(d, dep()),
            apply(d, dep(containers=[{"name": "side", "image": "busybox"}]), manager="m2"),
        ],
        "deployment-replicas-conflict": [
            apply(d, dep(replicas=2)),
            apply(d, dep(replicas=3), manager="m2"),
        ],
        "deployment-replicas-force": [
            apply(d, dep(replicas=2)),
            apply(d, dep(replicas=3), manager="m2", force=True),
        ],
        "deployment-drop-container": [
            apply(d, dep(containers=[CONTAINER, {"name": "side", "image": "busybox"}])),
            apply(d, dep()),
        ],
        "deployment-wrong-type": [apply(d, dep(replicas="three"))],
        "deployment-unknown-nested": [apply(d, {**dep(), "spec": {**dep()["spec"], "junk": 1}})],
        "field-manager-too-long": [apply(c, cm(data={"a": "1"}), manager="m" * 129)],
        "field-manager-128": [apply(c, cm(data={"a": "1"}), manager="m" * 128)],
        "field-manager-control": [apply(c, cm(data={"a": "1"}), manager="bad%01manager")],
        # issue 25: the texts of conflicts and typed-patch errors, word for word
        "conflicts-message": [
            apply(c, cm(data={"a": "1", "b": "1"})),
            apply(c, cm(data={"a": "2", "b": "2"}), manager="m2", messages=True),
        ],
        # causes of two managers come in Go's map order: compared sorted, without the texts
        "conflicts-two-managers": [
            apply(c, cm(data={"a": "1", "b": "1"})),
            setup(put(c, lambda ctx: {**ctx[0], "data": {"a": "1", "b": "1", "u": "1"}})),
            apply(c, cm(data={"a": "2", "b": "2", "u": "2"}), manager="m2"),
        ],
        "conflict-update-manager-message": [
            setup(post(CM, cm(data={"a": "1"}))),
            apply(c, cm(data={"a": "2"}), messages=True),
        ],
        "force-over-update-manager": [
            setup(post(CM, cm(data={"a": "1", "b": "1"}))),
            apply(c, cm(data={"a": "2"}), force=True),
            apply(c, cm(data={"b": "2"}), manager="m2", force=True),
        ],
        "reapply-unchanged": [apply(c, cm(data={"a": "1"})), apply(c, cm(data={"a": "1"}))],
        "labels-empty": [apply(c, cm(labels={}, data={"a": "1"}))],
        "finalizers-set": [
            apply(c, cm(finalizers=["x.io/a", "x.io/b"])),
            apply(c, cm(finalizers=["x.io/c"]), manager="m2"),
            apply(c, cm(finalizers=["x.io/b"])),
            setup(apply(c, cm(finalizers=[]), manager="m2")),
            setup(apply(c, cm(finalizers=[]))),
        ],
        "deployment-selector-atomic": [
            apply(d, dep()),
            apply(d, {**dep(), "spec": {"selector": {"matchLabels": {"app": "x", "t": "y"}}}}, manager="m2"),
        ],
        "deployment-port-default-key": [
            apply(d, dep(containers=[{**CONTAINER, "ports": [{"containerPort": 80}]}])),
            apply(
                d,
                dep(containers=[{**CONTAINER, "ports": [{"containerPort": 80, "name": "http"}]}]),
                manager="m2",
            ),
        ],
        "deployment-wrong-type-message": [apply(d, dep(replicas="three"), messages=True)],
        "deployment-unknown-nested-message": [
            apply(d, {**dep(), "spec": {**dep()["spec"], "junk": 1}}, messages=True)
        ],
        "unknown-field-warn": [apply(c, {**cm(), "junk": 1}, messages=True)],
        "wrong-type-string": [apply(c, cm(data={"a": 1}), messages=True)],
        "owner-references-atomic-items": [
            apply(
                c,
                cm(
                    ownerReferences=[
                        {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "0000-1"},
                    ]
                ),
            )
        ],
        "deployment-replicas-null": [apply(d, dep(replicas=None))],
        "deployment-status": [
            apply(d, dep()),
            apply(d + "/status", {**dep(), "spec": None, "status": {"replicas": 3}}, manager="st"),
        ],
        # managedFields a client writes or resets, and objects no one manages
        "untracked-after-bare-create": [setup(post(CM, cm())), patch(c, {"data": {"a": "1"}})],
        "before-first-apply": [
            setup(post(CM, cm())),
            setup(patch(c, {"data": {"a": "1"}})),
            apply(c, cm(data={"a": "2"}), messages=True),
            apply(c, cm(data={"b": "2"})),
        ],
        "reset-with-empty-entry": [
            setup(post(CM, cm(data={"a": "1"}))),
            put(c, lambda ctx: {**ctx[0], "metadata": {**ctx[0]["metadata"], "managedFields": [{}]}}),
            patch(c, {"data": {"b": "1"}}),
        ],
        "set-by-client": [
            setup(post(CM, cm(data={"a": "1"}))),
            patch(c, {"metadata": {"managedFields": [MANAGED_X]}}),
            patch(c, {"metadata": {"managedFields": []}}),
        ],
        "undecodable-entries-kept": [
            setup(post(CM, cm(data={"a": "1"}))),
            patch(c, {"metadata": {"managedFields": [{"manager": "y"}]}}),
            patch(c, {"metadata": {"managedFields": [{**MANAGED_X, "apiVersion": ""}]}, "data": {"b": "2"}}),
            patch(c, {"metadata": {"managedFields": [{**MANAGED_X, "fieldsV1": {}}]}}),
        ],
        "reset-with-empty-list": [
            setup(post(CM, cm(data={"a": "1"}))),
            patch(c, {"metadata": {"managedFields": []}}),
        ],
        "default-namespace-managers": [get("/api/v1/namespaces/default", view=_managers)],
        "deployment-scale": [
            apply(d, dep(replicas=2)),
            apply(d + "/scale", _scale(5), manager="hpa", messages=True),
            apply(d + "/scale", _scale(5), manager="hpa", force=True),
            get(d),
            apply(d + "/scale", _scale(6), manager="hpa"),
            apply(d, dep(replicas=2), messages=True),
            apply(d + "/scale", _scale(-1), manager="hpa", messages=True),
        ],
        "deployment-scale-update-manager": [
            apply(d, dep(replicas=2)),
            patch(d + "/scale?fieldManager=kubectl", {"spec": {"replicas": 4}}),
            get(d, view=_managers_of_subresources),
            apply(d, dep(replicas=2), messages=True),
            put(d + "/scale?fieldManager=k2", lambda ctx: {**ctx[1], "spec": {"replicas": 5}}),
            get(d, view=_managers_of_subresources),
        ],
        "null-values": [
            apply(c, cm(data={"a": "1", "b": None})),
            apply(c, {**cm(data=None), "metadata": {"name": "c", "labels": None}}),
        ],
        "invalid-object-type": [
            apply(c, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "c"}}, messages=True),
            apply(c, {"apiVersion": "v2", "kind": "ConfigMap", "metadata": {"name": "c"}}, messages=True),
        ],
        # the merged list keeps both orders as far as they agree (structured-merge-diff's merge)
        "deployment-containers-order": [
            apply(d, dep(containers=_named("a", "b")), view=_container_names),
            apply(d, dep(containers=_named("c")), manager="m2", view=_container_names),
            apply(d, dep(containers=_named("b", "a")), view=_container_names),
            apply(d, dep(containers=_named("z", "b", "a")), view=_container_names),
            apply(d, dep(containers=_named("c", "a")), manager="m2", view=_container_names),
        ],
        "deployment-drop-shared-container": [
            apply(d, dep(containers=[CONTAINER, {"name": "s", "image": "busybox"}])),
            apply(
                d,
                dep(containers=[{"name": "s", "image": "busybox", "env": [{"name": "E", "value": "1"}]}]),
                manager="m2",
            ),
            apply(d, dep()),
        ],
    }
    return [Scenario(f"apply/{k}", "apply", v) for k, v in seqs.items()]


def patches() -> list[Scenario]:
    c = CM + "/c"
    d = DEP + "/d"
    base = setup(post(CM, cm(data={"a": "1", "b": "2"}, labels={"l": "1"})))
    dbase = setup(post(DEP, dep(containers=[CONTAINER, {"name": "side", "image": "busybox"}])))
    seqs: dict[str, list[Step]] = {
        "merge-add": [base, patch(c, {"data": {"c": "3"}})],
        "merge-null-removes": [base, patch(c, {"data": {"a": None}})],
        "merge-not-found": [patch(c, {"data": {"a": "1"}})],
        "merge-invalid-json": [base, Step("PATCH", c, "{nope", patch="merge")],
        "merge-list-body": [base, patch(c, [1, 2])],
        "json-add": [base, patch(c, [{"op": "add", "path": "/data/c", "value": "3"}], "json")],
        "json-remove": [base, patch(c, [{"op": "remove", "path": "/data/a"}], "json")],
        "json-replace": [base, patch(c, [{"op": "replace", "path": "/data/a", "value": "9"}], "json")],
        "json-test-ok": [base, patch(c, [{"op": "test", "path": "/data/a", "value": "1"}], "json")],
        "json-test-fails": [base, patch(c, [{"op": "test", "path": "/data/a", "value": "2"}], "json")],
        "json-remove-missing": [base, patch(c, [{"op": "remove", "path": "/data/zz"}], "json")],
        "json-move": [base, patch(c, [{"op": "move", "from": "/data/a", "path": "/data/z"}], "json")],
        "json-copy": [base, patch(c, [{"op": "copy", "from": "/data/a", "path": "/data/z"}], "json")],
        "json-bad-op": [base, patch(c, [{"op": "frob", "path": "/data/a"}], "json")],
        "json-not-list": [base, patch(c, {"op": "add"}, "json")],
        "json-escaped-path": [
            base,
            patch(c, [{"op": "add", "path": "/metadata/labels/a~1b", "value": "x"}], "json"),
        ],
        "json-rv-test": [
            base,
            patch(c, lambda ctx: [{"op": "test", "path": "/metadata/resourceVersion", "value": "1"}], "json"),
        ],
        "strategic-configmap": [base, patch(c, {"data": {"c": "3"}}, "strategic")],
        "strategic-delete-key": [base, patch(c, {"data": {"a": None}}, "strategic")],
        "strategic-containers-merge": [
            dbase,
            patch(
                d,
                {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "redis"}]}}}},
                "strategic",
            ),
        ],
        "strategic-containers-delete": [
            dbase,
            patch(
                d,
                {"spec": {"template": {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}}}},
                "strategic",
            ),
        ],
        "strategic-replace": [
            dbase,
            patch(
                d,
                {
                    "spec": {
                        "template": {
                            "spec": {"$setElementOrder/containers": [{"name": "side"}, {"name": "c"}]}
                        }
                    }
                },
                "strategic",
            ),
        ],
        "merge-containers-replace": [
            dbase,
            patch(d, {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "redis"}]}}}}),
        ],
        "strategic-on-custom": [
            setup(
                post(W, {"apiVersion": "conf.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
            ),
            patch(W + "/w", {"spec": {"replicas": 2}}, "strategic"),
        ],
        "unsupported-patch-type": [base, Step("PATCH", c, {"data": {}}, content_type="text/plain")],
        "patch-rv-conflict": [base, patch(c, {"metadata": {"resourceVersion": "1"}, "data": {"a": "x"}})],
        "patch-change-name": [base, patch(c, {"metadata": {"name": "other"}})],
        "patch-wrong-type": [base, patch(c, {"data": ["x"]})],
        "patch-deployment-replicas-string": [dbase, patch(d, {"spec": {"replicas": "three"}})],
        "patch-dry-run": [base, patch(c + "?dryRun=All", {"data": {"a": "x"}}), get(c, view=at("data"))],
        "patch-strict-unknown": [base, patch(c + "?fieldValidation=Strict", {"junk": 1})],
        # issue 25: the texts of patch errors, word for word, and unknown fields without Strict
        "json-bad-op-message": [base, patch(c, [{"op": "frob", "path": "/data/a"}], "json", messages=True)],
        "json-replace-missing": [
            base,
            patch(c, [{"op": "replace", "path": "/data/zz", "value": "1"}], "json", messages=True),
        ],
        "json-add-bad-index": [
            base,
            patch(c, [{"op": "add", "path": "/metadata/finalizers/5", "value": "x/y"}], "json"),
        ],
        "json-wrong-type": [base, patch(c, [{"op": "replace", "path": "/data", "value": 5}], "json")],
        "patch-wrong-type-strategic": [base, patch(c, {"data": ["x"]}, "strategic")],
        "patch-warn-unknown": [base, patch(c, {"junk": 1}, compare_headers=("Warning",))],
        "patch-ignore-unknown": [base, patch(c + "?fieldValidation=Ignore", {"junk": 1})],
        "patch-strict-unknown-nested": [
            dbase,
            patch(d + "?fieldValidation=Strict", {"spec": {"template": {"spec": {"junk": 1}}}}),
        ],
        "unsupported-patch-type-message": [
            base,
            Step("PATCH", c, {"data": {}}, content_type="application/json", messages=True),
        ],
        "json-remove-name": [
            base,
            patch(c, [{"op": "remove", "path": "/metadata/name"}], "json", messages=True),
        ],
        # (the object inside these messages is Go's JSON of the patched map: key order not compared)
        "json-api-version-v2": [base, patch(c, {"apiVersion": "v2"})],
        "json-unknown-kind": [base, patch(c, [{"op": "replace", "path": "/kind", "value": "Nope"}], "json")],
        "binary-data-not-base64": [
            base,
            patch(c, [{"op": "copy", "from": "/data", "path": "/binaryData"}], "json"),
            patch(c, {"binaryData": {"x": "YWJj"}}),
            patch(c, {"binaryData": {"y": "ab!d"}}),
        ],
        "strategic-on-custom-message": [
            setup(
                post(W, {"apiVersion": "conf.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
            ),
            patch(W + "/w", {"spec": {"replicas": 2}}, "strategic", messages=True),
        ],
    }
    return [Scenario(f"patch/{k}", "patch", v) for k, v in seqs.items()]


def lists() -> list[Scenario]:
    objs = [
        setup(post(CM, cm(f"c{i}", labels={"i": str(i), "even": str(i % 2 == 0).lower()}))) for i in range(5)
    ]
    sel = {
        "label-eq": "labelSelector=i%3D1",
        "label-neq": "labelSelector=i!%3D1",
        "label-in": "labelSelector=i+in+(1,2)",
        "label-notin": "labelSelector=i+notin+(1,2)",
        "label-exists": "labelSelector=even",
        "label-not-exists": "labelSelector=!nothing",
        "label-and": "labelSelector=even%3Dtrue,i!%3D0",
        "label-invalid": "labelSelector=a%3D%3D%3Db",
        "field-name": "fieldSelector=metadata.name%3Dc2",
        "field-name-neq": "fieldSelector=metadata.name!%3Dc2",
        "field-namespace": "fieldSelector=metadata.namespace%3D{ns}",
        "field-unsupported": "fieldSelector=data.a%3D1",
        "limit-2": "limit=2",
        "limit-0": "limit=0",
        "limit-negative": "limit=-1",
        "limit-with-selector": "limit=2&labelSelector=even%3Dtrue",
        "rv-0": "resourceVersion=0",
        "rv-match-not-older-than": "resourceVersion=1&resourceVersionMatch=NotOlderThan",
        "rv-match-without-rv": "resourceVersionMatch=NotOlderThan",
        "rv-match-invalid": "resourceVersion=1&resourceVersionMatch=Bogus",
        "rv-not-a-number": "resourceVersion=abc",
        "continue-garbage": "continue=garbage",
        "timeout": "timeoutSeconds=5",
    }
    # A list at resourceVersion=0 or NotOlderThan an old version may be answered from the real server's
    # watch cache, which can lag the last write (both answers are correct): first wait for the cache to
    # reach the last write (NotOlderThan that write's version blocks until it does), then ask.
    caught_up = get(
        lambda ctx: (
            f"{CM}?resourceVersion={ctx[len(objs) - 1]['metadata']['resourceVersion']}"
            "&resourceVersionMatch=NotOlderThan"
        ),
        view=names,
    )
    cached = {"rv-0", "rv-match-not-older-than"}
    out = [
        Scenario(
            f"list/{k}", "list", [*objs, *([caught_up] if k in cached else []), get(f"{CM}?{q}", view=names)]
        )
        for k, q in sel.items()
    ]
    out.append(
        Scenario(
            "list/paginate",
            "list",
            [
                *objs,
                get(f"{CM}?limit=2", view=names),
                get(lambda ctx: f"{CM}?limit=2&continue={quote(ctx[5]['metadata']['continue'])}", view=names),
                get(lambda ctx: f"{CM}?limit=2&continue={quote(ctx[6]['metadata']['continue'])}", view=names),
            ],
        )
    )
    out.append(
        Scenario(
            "list/paginate-selector-change",
            "list",
            [
                *objs,
                get(f"{CM}?limit=2", view=names),
                get(
                    lambda ctx: (
                        f"{CM}?limit=2&labelSelector=even%3Dtrue&continue={quote(ctx[5]['metadata']['continue'])}"
                    ),
                    view=names,
                ),
            ],
        )
    )
    out.append(
        Scenario("list/all-namespaces", "list", [get("/api/v1/configmaps?limit=1", view=lambda b: b["kind"])])
    )
    out.append(
        Scenario(
            "list/rv-exact",
            "list",
            [
                *objs,
                get(CM, view=names),
                setup(post(CM, cm("later"))),
                get(lambda ctx: f"{CM}?resourceVersionMatch=Exact&resourceVersion={ctx.rv(5)}", view=names),
            ],
        )
    )
    return out


_TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
FUTURE_RV = 10**12  # a version no test server reaches


def watches() -> list[Scenario]:
    c = CM + "/c"
    return [
        Scenario(
            "watch/from-rv",
            "watch",
            [
                setup(post(CM, cm(data={"a": "1"}))),
                setup(patch(c, {"data": {"a": "2"}})),
                setup(delete(c)),
                get(lambda ctx: f"{CM}?watch=1&resourceVersion={ctx.rv(0)}", watch=2),
            ],
        ),
        Scenario(
            "watch/initial-events-rv0",
            "watch",
            [
                setup(post(CM, cm("a"))),
                setup(post(CM, cm("b"))),
                get(f"{CM}?watch=1&resourceVersion=0", watch=2),
            ],
        ),
        Scenario(
            "watch/label-selector",
            "watch",
            [
                setup(post(CM, cm("a", labels={"k": "1"}))),
                setup(post(CM, cm("b", labels={"k": "2"}))),
                setup(post(CM, cm("c", labels={"k": "1"}))),
                get(f"{CM}?watch=1&resourceVersion=0&labelSelector=k%3D1", watch=2),
            ],
        ),
        Scenario(
            "watch/field-selector",
            "watch",
            [
                setup(post(CM, cm("a"))),
                setup(post(CM, cm("b"))),
                get(f"{CM}?watch=1&resourceVersion=0&fieldSelector=metadata.name%3Db", watch=1),
            ],
        ),
        Scenario(
            "watch/selector-leaves",
            "watch",
            [
                setup(post(CM, cm("a", labels={"k": "1"}))),
                setup(patch(CM + "/a", {"metadata": {"labels": {"k": "2"}}})),
                get(lambda ctx: f"{CM}?watch=1&resourceVersion={ctx.rv(0)}&labelSelector=k%3D1", watch=1),
            ],
        ),
        Scenario(
            "watch/table",  # the column definitions in the first event only
            "watch",
            [
                setup(post(CM, cm("a", data={"k": "v"}))),
                setup(post(CM, cm("b"))),
                get(f"{CM}?watch=1&resourceVersion=0", watch=2, headers={"Accept": _TABLE}),
            ],
        ),
        Scenario(
            "watch/table-include-object",
            "watch",
            [
                setup(post(CM, cm("a"))),
                get(
                    f"{CM}?watch=1&resourceVersion=0&includeObject=Object",
                    watch=1,
                    headers={"Accept": _TABLE},
                ),
                get(
                    f"{CM}?watch=1&resourceVersion=0&includeObject=None", watch=1, headers={"Accept": _TABLE}
                ),
            ],
        ),
        Scenario(
            "watch/table-custom",
            "watch",
            [
                setup(
                    post(
                        W,
                        {
                            "apiVersion": "conf.example.com/v1",
                            "kind": "Widget",
                            "metadata": {"name": "w"},
                            "spec": {"replicas": 2},
                        },
                    )
                ),
                get(f"{W}?watch=1&resourceVersion=0", watch=1, headers={"Accept": _TABLE}),
            ],
        ),
        Scenario(
            "errors/table-include-object-bad",
            "errors",
            [get(f"{CM}?includeObject=All", headers={"Accept": _TABLE})],
        ),
        Scenario("watch/too-old", "watch", [get(f"{CM}?watch=1&resourceVersion=1", watch=1)]),
        # issue 38: a watch from a version the server has not reached (it restarted with fresh state)
        # is accepted and stays silent, no ERROR event; a list or get there waits for the watch cache
        # (3 s on the real server) and answers 504 with a ResourceVersionTooLarge cause and Retry-After
        Scenario(
            "watch/future-rv",
            "watch",
            [get(f"{CM}?watch=1&resourceVersion={FUTURE_RV}&allowWatchBookmarks=true", watch=1)],
        ),
        Scenario(
            "list/future-rv",
            "list",
            [
                get(f"{CM}?resourceVersion={FUTURE_RV}", compare_headers=("retry-after",)),
                get(f"{CM}?resourceVersion={FUTURE_RV}&limit=1&resourceVersionMatch=NotOlderThan"),
                setup(post(CM, cm("a"))),
                get(f"{CM}/a?resourceVersion={FUTURE_RV}", compare_headers=("retry-after",)),
            ],
        ),
        Scenario("watch/bad-rv", "watch", [get(f"{CM}?watch=1&resourceVersion=abc", watch=1)]),
        Scenario(
            "watch/custom",
            "watch",
            [
                setup(
                    post(
                        W, {"apiVersion": "conf.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
                    )
                ),
                get(f"{W}?watch=1&resourceVersion=0", watch=1),
            ],
        ),
    ]


def deletions() -> list[Scenario]:
    c = CM + "/c"
    d = DEP + "/d"
    owner = setup(post(CM, cm("owner")))

    def child(name: str) -> Step:
        return setup(
            post(
                CM,
                lambda ctx: cm(
                    name,
                    ownerReferences=[
                        {
                            "apiVersion": "v1",
                            "kind": "ConfigMap",
                            "name": "owner",
                            "uid": ctx[0]["metadata"]["uid"],
                        }
                    ],
                ),
            )
        )

    def opts(policy: str) -> dict[str, Any]:
        return {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": policy}

    seqs: dict[str, list[Step]] = {
        "background": [owner, child("k"), delete(CM + "/owner", opts("Background"))],
        "foreground": [
            owner,
            child("k"),
            delete(CM + "/owner", opts("Foreground")),
            get(CM + "/owner", view=meta),
        ],
        "orphan": [owner, child("k"), delete(CM + "/owner", opts("Orphan")), get(CM + "/owner", view=meta)],
        "foreground-query": [owner, delete(CM + "/owner?propagationPolicy=Foreground", view=meta)],
        "orphan-query": [owner, delete(CM + "/owner?propagationPolicy=Orphan", view=meta)],
        "invalid-policy": [owner, delete(CM + "/owner", opts("Sometimes"))],
        "deployment-foreground": [setup(post(DEP, dep())), delete(d, opts("Foreground"), view=meta)],
        "finalizer-blocks": [
            setup(post(CM, cm(finalizers=["example.com/hold"]))),
            delete(c, view=meta),
            get(c, view=meta),
            patch(c, {"metadata": {"finalizers": None}}, view=meta),
            get(c),
        ],
        "finalizer-add-while-deleting": [
            setup(post(CM, cm(finalizers=["example.com/hold"]))),
            setup(delete(c)),
            patch(c, {"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}}),
        ],
        "finalizer-invalid": [post(CM, cm(finalizers=["nodomain"]))],
        "precondition-uid": [
            setup(post(CM, cm())),
            delete(c, {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "nope"}}),
        ],
        "precondition-rv": [
            setup(post(CM, cm())),
            delete(
                c, {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"resourceVersion": "1"}}
            ),
        ],
        "dry-run": [setup(post(CM, cm())), delete(c + "?dryRun=All"), get(c, view=meta)],
        "collection": [
            setup(post(CM, cm("a", labels={"x": "1"}))),
            setup(post(CM, cm("b"))),
            delete(CM + "?labelSelector=x%3D1", view=lambda b: b.get("kind")),
            get(CM, view=names),
        ],
        "grace-period": [setup(post(CM, cm())), delete(c + "?gracePeriodSeconds=0")],
        "namespace-terminating-create": [
            setup(post("/api/v1/namespaces", {"metadata": {"name": "t-{ns}"}})),
            setup(post("/api/v1/namespaces/t-{ns}/configmaps", cm("keep", finalizers=["example.com/hold"]))),
            delete("/api/v1/namespaces/t-{ns}", view=lambda b: b.get("status")),
            post("/api/v1/namespaces/t-{ns}/configmaps", cm("new")),
        ],
    }
    return [Scenario(f"delete/{k}", "delete", v) for k, v in seqs.items()]


MIB = 1024 * 1024


def errors() -> list[Scenario]:
    c = CM + "/c"
    big = "x" * (MIB + 10)
    seqs: dict[str, list[Step]] = {
        "404-get": [get(c)],
        "404-namespace": [get("/api/v1/namespaces/nope-{ns}")],
        "404-path": [get("/api/v1/nothing")],
        "404-group": [get("/apis/nothing.example.com/v1")],
        "409-exists": [setup(post(CM, cm())), post(CM, cm())],
        "409-conflict": [
            setup(post(CM, cm())),
            put(c, {**cm(), "metadata": {"name": "c", "resourceVersion": "1"}}),
        ],
        "422-causes": [post(CM, cm("Bad Name", labels={"bad key!": "v"}))],
        "422-label-value": [post(CM, cm(labels={"k": "v" * 70}))],
        "422-annotations-too-big": [post(CM, cm(annotations={"a": "x" * (256 * 1024 + 1)}))],
        "400-malformed-json": [Step("POST", CM, "{not json")],
        "400-body-not-object": [post(CM, [1, 2])],
        "400-namespace-mismatch": [post(CM, cm(namespace="other"))],
        "415-content-type": [Step("POST", CM, "x", content_type="text/plain")],
        "415-patch-on-post": [Step("POST", CM, cm(), patch="merge")],
        "406-accept": [get(CM, headers={"Accept": "text/plain"})],
        "405-method": [Step("PUT", CM, cm())],
        "configmap-over-1mib": [post(CM, cm(data={"a": big}))],
        "secret-over-1mib": [
            post("/api/v1/namespaces/{ns}/secrets", {**cm(), "kind": "Secret", "stringData": {"a": big}})
        ],
        "configmap-1mib-binarydata": [post(CM, {**cm(), "binaryData": {"a": "eHg=" * (MIB // 4 + 10)}})],
        "custom-over-1.5mib": [
            post(
                "/apis/conf.example.com/v1/namespaces/{ns}/blobs",
                {
                    "apiVersion": "conf.example.com/v1",
                    "kind": "Blob",
                    "metadata": {"name": "b"},
                    "x": "y" * (MIB * 2),
                },
            )
        ],
        "custom-1.6mib": [  # past etcd's request limit: a 500 from etcd
            post(
                "/apis/conf.example.com/v1/namespaces/{ns}/blobs",
                {
                    "apiVersion": "conf.example.com/v1",
                    "kind": "Blob",
                    "metadata": {"name": "b"},
                    "x": "y" * (MIB * 16 // 10),
                },
            ),
            get("/apis/conf.example.com/v1/namespaces/{ns}/blobs/b"),
        ],
        "custom-over-3mib": [  # past the API server's body limit: 413 before decoding
            post(
                "/apis/conf.example.com/v1/namespaces/{ns}/blobs",
                {
                    "apiVersion": "conf.example.com/v1",
                    "kind": "Blob",
                    "metadata": {"name": "b"},
                    "x": "y" * (MIB * 3),
                },
            )
        ],
        "custom-1.2mib": [
            post(
                "/apis/conf.example.com/v1/namespaces/{ns}/blobs",
                {
                    "apiVersion": "conf.example.com/v1",
                    "kind": "Blob",
                    "metadata": {"name": "b"},
                    "x": "y" * (MIB + MIB // 5),
                },
                view=meta,
            )
        ],
        "field-manager-too-long": [post(CM + "?fieldManager=" + "m" * 129, cm())],
        "field-manager-control": [post(CM + "?fieldManager=a%0Ab", cm())],
        "dry-run-invalid": [post(CM + "?dryRun=Some", cm())],
        "field-validation-invalid": [post(CM + "?fieldValidation=Loud", cm())],
        "duplicate-field-strict": [
            Step(
                "POST",
                CM + "?fieldValidation=Strict",
                '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1","a":"2"}}',
            )
        ],
        "duplicate-field-warn": [
            Step(
                "POST",
                CM + "?fieldValidation=Warn",
                '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1","a":"2"}}',
                compare_headers=("Warning",),
            )
        ],
        "yaml-invalid": [Step("POST", CM, "a: [", content_type="application/yaml")],
    }
    return [Scenario(f"errors/{k}", "errors", v) for k, v in seqs.items()]


def _resources(body: Any) -> Any:
    return sorted(
        (r["name"], r["kind"], r["namespaced"], tuple(sorted(r["verbs"])), tuple(r.get("shortNames", [])))
        for r in body.get("resources", [])
    )


def discovery() -> list[Scenario]:
    gvs = [
        "/api/v1",
        "/apis/apps/v1",
        "/apis/batch/v1",
        "/apis/autoscaling/v1",
        "/apis/autoscaling/v2",
        "/apis/rbac.authorization.k8s.io/v1",
        "/apis/networking.k8s.io/v1",
        "/apis/policy/v1",
        "/apis/storage.k8s.io/v1",
        "/apis/node.k8s.io/v1",
        "/apis/coordination.k8s.io/v1",
        "/apis/scheduling.k8s.io/v1",
        "/apis/authentication.k8s.io/v1",
        "/apis/authorization.k8s.io/v1",
        "/apis/flowcontrol.apiserver.k8s.io/v1",
        "/apis/admissionregistration.k8s.io/v1",
        "/apis/discovery.k8s.io/v1",
        "/apis/events.k8s.io/v1",
        "/apis/certificates.k8s.io/v1",
        "/apis/apiextensions.k8s.io/v1",
        "/apis/apiregistration.k8s.io/v1",
        "/apis/conf.example.com/v1",
    ]
    out = [Scenario(f"discovery{gv}", "discovery", [get(gv, view=_resources)], namespace=False) for gv in gvs]
    out.append(
        Scenario(
            "discovery/api",
            "discovery",
            [get("/api", view=lambda b: (b["kind"], b["versions"]))],
            namespace=False,
        )
    )
    out.append(
        Scenario(
            "discovery/groups",
            "discovery",
            [get("/apis", view=lambda b: sorted(g["name"] for g in b["groups"]))],
            namespace=False,
        )
    )
    out.append(
        Scenario(
            "discovery/version", "discovery", [get("/version", view=lambda b: sorted(b))], namespace=False
        )
    )
    return out


def reviews() -> list[Scenario]:
    ssar = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"

    def review(attrs: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": attrs}

    seqs: dict[str, list[Step]] = {
        "ssar-allowed": [
            post(
                ssar,
                review({"resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "{ns}"}}),
                view=at("status"),
            )
        ],
        "ssar-nonresource": [
            post(
                ssar,
                review({"nonResourceAttributes": {"verb": "get", "path": "/healthz"}}),
                view=at("status"),
            )
        ],
        "ssar-empty": [post(ssar, review({}))],
        "ssar-both": [
            post(
                ssar,
                review(
                    {
                        "resourceAttributes": {"verb": "get"},
                        "nonResourceAttributes": {"verb": "get", "path": "/"},
                    }
                ),
            )
        ],
        "ssrr": [
            post(
                "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                {
                    "apiVersion": "authorization.k8s.io/v1",
                    "kind": "SelfSubjectRulesReview",
                    "spec": {"namespace": "{ns}"},
                },
                # the real server gathers rules from its authorizers in map order: compare them as a set
                view=lambda b: (
                    b["kind"],
                    b["status"].get("incomplete"),
                    sorted(json.dumps(r, sort_keys=True) for r in b["status"]["resourceRules"]),
                ),
            )
        ],
        "lsar": [
            post(
                "/apis/authorization.k8s.io/v1/namespaces/{ns}/localsubjectaccessreviews",
                {
                    "apiVersion": "authorization.k8s.io/v1",
                    "kind": "LocalSubjectAccessReview",
                    "spec": {
                        "user": "nobody",
                        "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "{ns}"},
                    },
                },
                view=lambda b: (b["kind"], b["status"].get("allowed")),
            )
        ],
        "lsar-namespace-mismatch": [
            post(
                "/apis/authorization.k8s.io/v1/namespaces/{ns}/localsubjectaccessreviews",
                {
                    "apiVersion": "authorization.k8s.io/v1",
                    "kind": "LocalSubjectAccessReview",
                    "spec": {
                        "user": "nobody",
                        "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "x"},
                    },
                },
            )
        ],
        "selfsubjectreview": [
            post(
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
                view=lambda b: (b["kind"], sorted(b["status"]["userInfo"])),
            )
        ],
        "impersonate-user": [
            post(
                ssar,
                review({"resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "{ns}"}}),
                headers={"Impersonate-User": "jane"},
                view=lambda b: b["status"].get("allowed"),
            )
        ],
        "impersonate-masters": [
            post(
                ssar,
                review({"resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "{ns}"}}),
                headers={"Impersonate-User": "jane", "Impersonate-Group": "system:masters"},
                view=lambda b: b["status"].get("allowed"),
            )
        ],
        "impersonate-whoami": [
            post(
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
                headers={"Impersonate-User": "jane", "Impersonate-Group": "devs"},
                view=lambda b: (
                    b["status"]["userInfo"]["username"],
                    sorted(b["status"]["userInfo"]["groups"]),
                ),
            )
        ],
        "impersonate-group-without-user": [
            get(CM, headers={"Impersonate-Group": "devs"}, status_only=True),
        ],
        "impersonated-user-denied": [get(CM, headers={"Impersonate-User": "jane"}, status_only=True)],
    }
    return [Scenario(f"reviews/{k}", "reviews", v) for k, v in seqs.items()]


def gaps() -> list[Scenario]:
    """Resources issue 25 found missing: each created (or listed) the way kubectl would."""
    seqs: dict[str, list[Step]] = {
        "componentstatuses": [get("/api/v1/componentstatuses", view=lambda b: b["kind"])],
        "binding": [
            setup(
                post(
                    "/api/v1/namespaces/{ns}/pods",
                    {"metadata": {"name": "p"}, "spec": {"containers": [CONTAINER]}},
                )
            ),
            post(
                "/api/v1/namespaces/{ns}/bindings",
                {
                    "apiVersion": "v1",
                    "kind": "Binding",
                    "metadata": {"name": "p"},
                    "target": {"kind": "Node", "name": "n1"},
                },
            ),
            get("/api/v1/namespaces/{ns}/pods/p", view=lambda b: b["spec"].get("nodeName")),
        ],
        "csinode": [
            post(
                "/apis/storage.k8s.io/v1/csinodes",
                {"metadata": {"name": "n-{ns}"}, "spec": {"drivers": []}},
                view=meta,
            )
        ],
        "volumeattachment": [
            post(
                "/apis/storage.k8s.io/v1/volumeattachments",
                {
                    "metadata": {"name": "va-{ns}"},
                    "spec": {
                        "attacher": "x.example.com",
                        "nodeName": "n",
                        "source": {"persistentVolumeName": "pv"},
                    },
                },
                view=meta,
            )
        ],
        "flowschemas": [get("/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas", view=lambda b: b["kind"])],
        "prioritylevelconfigurations": [
            get("/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations", view=lambda b: b["kind"])
        ],
        "validatingadmissionpolicy": [
            post(
                "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
                {
                    "metadata": {"name": "vap-{ns}"},
                    "spec": {
                        "matchConstraints": {
                            "resourceRules": [
                                {
                                    "apiGroups": [""],
                                    "apiVersions": ["v1"],
                                    "operations": ["CREATE"],
                                    "resources": ["configmaps"],
                                }
                            ]
                        },
                        "validations": [{"expression": "true"}],
                    },
                },
                view=lambda b: (b["metadata"]["name"], b["spec"].get("failurePolicy")),
            )
        ],
        "validatingadmissionpolicybindings": [
            get(
                "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
                view=lambda b: b["kind"],
            )
        ],
        "hpa-v1-cpu": [
            post(
                "/apis/autoscaling/v1/namespaces/{ns}/horizontalpodautoscalers",
                {
                    "metadata": {"name": "h"},
                    "spec": {
                        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                        "maxReplicas": 3,
                        "targetCPUUtilizationPercentage": 50,
                    },
                },
                view=at("spec"),
            ),
            get("/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers/h", view=at("spec")),
        ],
        "get-without-http-version": [],  # filled by the raw-socket test in test_wire.py
    }
    seqs.pop("get-without-http-version")
    return [Scenario(f"gaps/{k}", "gaps", v) for k, v in seqs.items()]


SCENARIOS: list[Scenario] = [
    *applies(),
    *patches(),
    *lists(),
    *watches(),
    *deletions(),
    *errors(),
    *discovery(),
    *reviews(),
    *gaps(),
]
