"""Families over custom resources: schemas, defaults, pruning, x-kubernetes-*, CEL, status and scale."""

from __future__ import annotations

from typing import Any

from tests.conformance.harness import Scenario
from tests.conformance.scenarios.steps import apply, at, delete, get, names, patch, post, put, setup

W = "/apis/conf.example.com/v1/namespaces/{ns}/widgets"
G = "/apis/conf.example.com/v1/gadgets"
B = "/apis/conf.example.com/v1/namespaces/{ns}/blobs"


def widget(name: str = "w", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "conf.example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


# (name, spec) created: the response (defaults, pruning, validation) is compared
SPECS: list[tuple[str, dict[str, Any]]] = [
    ("empty", {}),
    ("defaults-kept", {"replicas": 3, "size": "S"}),
    ("replicas-negative", {"replicas": -1}),
    ("replicas-too-many", {"replicas": 11}),
    ("replicas-string", {"replicas": "three"}),
    ("replicas-float", {"replicas": 1.5}),
    ("size-enum", {"size": "XL"}),
    ("name-pattern", {"name": "ABC"}),
    ("name-too-long", {"name": "abcdefghijklmnop"}),
    ("unknown-pruned", {"junk": 1, "replicas": 2}),
    ("tags-set", {"tags": ["a", "b"]}),
    ("tags-duplicate", {"tags": ["a", "a"]}),
    ("ports-map", {"ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]}),
    ("ports-duplicate-key", {"ports": [{"name": "http", "port": 80}, {"name": "http", "port": 81}]}),
    ("ports-missing-key", {"ports": [{"port": 80}]}),
    ("labels-map", {"labels": {"a": "b"}}),
    ("labels-wrong-type", {"labels": {"a": 1}}),
    ("free-form", {"free": {"anything": {"goes": [1, 2]}}}),
    ("int-or-string-int", {"port": 80}),
    ("int-or-string-string", {"port": "http"}),
    ("int-or-string-bool", {"port": True}),
    ("nested-default", {"nested": {}}),
    ("nested-explicit", {"nested": {"deep": "no"}}),
    ("count-max", {"count": 101}),
    ("count-int32", {"count": 5}),
    ("ratio-int", {"ratio": 1}),
    ("ratio-string", {"ratio": "1"}),
    ("enabled-string", {"enabled": "true"}),
    ("date-time", {"when": "2024-01-01T00:00:00Z"}),
    ("date-time-bad", {"when": "yesterday"}),
    ("max-items", {"items": [1, 2, 3, 4]}),
    ("nullable-null", {"nullable": None}),
    ("not-nullable-null", {"name": None}),
    ("atomic-map", {"atomic": {"a": "x"}}),
    ("spec-wrong-type", "spec-as-string"),  # type: ignore[list-item]
]


def creates() -> list[Scenario]:
    out = []
    for name, spec in SPECS:
        body = widget() if spec == "spec-as-string" else widget(**spec)
        if spec == "spec-as-string":
            body["spec"] = "nope"
        out.append(Scenario(f"custom/create/{name}", "custom", [post(W, body)]))
        out.append(
            Scenario(
                f"custom/create-strict/{name}",
                "custom",
                [post(W + "?fieldValidation=Strict", body)],
            )
        )
    return out


def lifecycle() -> list[Scenario]:
    w = W + "/w"
    return [
        Scenario("custom/get", "custom", [setup(post(W, widget())), get(w)]),
        Scenario(
            "custom/list",
            "custom",
            [setup(post(W, widget("b"))), setup(post(W, widget("a"))), get(W, view=names)],
        ),
        Scenario(
            "custom/update-generation",
            "custom",
            [
                setup(post(W, widget())),
                patch(w, {"spec": {"replicas": 2}}),
                patch(w, {"metadata": {"labels": {"a": "b"}}}),
            ],
        ),
        Scenario(
            "custom/status-ignores-spec",
            "status",
            [
                setup(post(W, widget())),
                patch(w + "/status", {"spec": {"replicas": 5}, "status": {"ready": 1}}),
            ],
        ),
        Scenario(
            "custom/main-ignores-status",
            "status",
            [setup(post(W, widget())), patch(w, {"status": {"ready": 1}})],
        ),
        Scenario("custom/status-get", "status", [setup(post(W, widget())), get(w + "/status")]),
        Scenario("custom/status-missing", "status", [get(w + "/status")]),
        Scenario(
            "custom/status-put",
            "status",
            [setup(post(W, widget())), put(w + "/status", lambda ctx: {**ctx[0], "status": {"phase": "Up"}})],
        ),
        Scenario("custom/scale-get", "scale", [setup(post(W, widget(replicas=2))), get(w + "/scale")]),
        Scenario(
            "custom/scale-patch",
            "scale",
            [
                setup(post(W, widget(replicas=2))),
                patch(w + "/scale", {"spec": {"replicas": 4}}),
                get(w, view=at("spec")),
            ],
        ),
        Scenario(
            "custom/scale-put",
            "scale",
            [
                setup(post(W, widget(replicas=2))),
                put(
                    w + "/scale",
                    {
                        "apiVersion": "autoscaling/v1",
                        "kind": "Scale",
                        "metadata": {"name": "w"},
                        "spec": {"replicas": 3},
                    },
                ),
            ],
        ),
        Scenario(
            "custom/scale-invalid",
            "scale",
            [setup(post(W, widget(replicas=2))), patch(w + "/scale", {"spec": {"replicas": 20}})],
        ),
        Scenario("custom/scale-missing", "scale", [get(w + "/scale")]),
        Scenario(
            "custom/transition-rule",
            "cel",
            [setup(post(W, widget(size="L"))), patch(w, {"spec": {"size": "S"}})],
        ),
        Scenario(
            "custom/transition-rule-ok",
            "cel",
            [setup(post(W, widget(size="S"))), patch(w, {"spec": {"size": "L"}})],
        ),
        Scenario(
            "custom/immutable",
            "cel",
            [setup(post(W, widget(immutable="a"))), patch(w, {"spec": {"immutable": "b"}})],
        ),
        Scenario(
            "custom/immutable-same",
            "cel",
            [setup(post(W, widget(immutable="a"))), patch(w, {"spec": {"immutable": "a", "replicas": 2}})],
        ),
        Scenario(
            "custom/cluster-scoped",
            "custom",
            [
                post(
                    G,
                    {
                        "apiVersion": "conf.example.com/v1",
                        "kind": "Gadget",
                        "metadata": {"name": "g-{ns}"},
                        "spec": {"color": "red"},
                    },
                )
            ],
        ),
        Scenario(
            "custom/cluster-scoped-in-namespace-path",
            "errors",
            [get("/apis/conf.example.com/v1/namespaces/{ns}/gadgets")],
        ),
        Scenario(
            "custom/preserve-unknown",
            "custom",
            [
                post(
                    B,
                    {
                        "apiVersion": "conf.example.com/v1",
                        "kind": "Blob",
                        "metadata": {"name": "b"},
                        "anything": {"x": [1]},
                    },
                )
            ],
        ),
        Scenario("custom/wrong-kind", "errors", [post(W, {**widget(), "kind": "Gadget"})]),
        Scenario(
            "custom/wrong-api-version", "errors", [post(W, {**widget(), "apiVersion": "conf.example.com/v2"})]
        ),
        Scenario(
            "custom/no-kind",
            "errors",
            [post(W, {"apiVersion": "conf.example.com/v1", "metadata": {"name": "w"}})],
        ),
        Scenario("custom/delete", "custom", [setup(post(W, widget())), delete(w), get(w)]),
        Scenario(
            "custom/unknown-resource", "errors", [get("/apis/conf.example.com/v1/namespaces/{ns}/nothings")]
        ),
        Scenario(
            "custom/unknown-version", "errors", [get("/apis/conf.example.com/v9/namespaces/{ns}/widgets")]
        ),
        Scenario(
            "custom/table",
            "table",
            [
                setup(post(W, widget())),
                get(W, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}, view=_rows),
            ],
        ),
        Scenario(
            "custom/table-wide",
            "table",
            [
                setup(post(W, widget())),
                get(
                    W + "?includeObject=None",
                    headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
                ),
            ],
        ),
        Scenario(
            "custom/apply-create",
            "apply",
            [apply(w, widget(replicas=2, tags=["a"]))],
        ),
        Scenario(
            "custom/apply-list-map",
            "apply",
            [
                apply(w, widget(ports=[{"name": "a", "port": 1}])),
                apply(w, widget(ports=[{"name": "b", "port": 2}]), manager="m2"),
                apply(w, widget(ports=[]), manager="m1"),
            ],
        ),
        Scenario(
            "custom/apply-set",
            "apply",
            [
                apply(w, widget(tags=["a", "b"])),
                apply(w, widget(tags=["c"]), manager="m2"),
                apply(w, widget(tags=["b"])),
            ],
        ),
        Scenario(
            "custom/apply-atomic",
            "apply",
            [
                apply(w, widget(atomic={"a": "1", "b": "2"})),
                apply(w, widget(atomic={"a": "3"}), manager="m2"),
            ],
        ),
        Scenario(
            "custom/apply-atomic-force",
            "apply",
            [
                apply(w, widget(atomic={"a": "1", "b": "2"})),
                apply(w, widget(atomic={"a": "3"}), manager="m2", force=True),
            ],
        ),
        Scenario(
            "custom/apply-invalid",
            "apply",
            [apply(w, widget(replicas=50))],
        ),
        Scenario(
            "custom/apply-status",
            "apply",
            [
                setup(post(W, widget())),
                apply(w + "/status", {**widget(), "status": {"ready": 2}}),
            ],
        ),
        # what `create api --ssa`'s controller relies on: the same status apply again changes nothing
        # (the JSON patch's test op fails unless the resourceVersion is still the first apply's), and
        # another field manager's value for an owned status field conflicts until forced
        Scenario(
            "custom/apply-status-repeat-is-a-no-op",
            "apply",
            [
                setup(post(W, widget())),
                apply(w + "/status", {**widget(), "status": {"ready": 2}}),
                apply(w + "/status", {**widget(), "status": {"ready": 2}}),
                patch(
                    w,
                    lambda ctx: [{"op": "test", "path": "/metadata/resourceVersion", "value": ctx.rv(1)}],
                    kind="json",
                ),
            ],
        ),
        Scenario(
            "custom/apply-status-conflict",
            "apply",
            [
                setup(post(W, widget())),
                apply(w + "/status", {**widget(), "status": {"ready": 2}}),
                apply(w + "/status", {**widget(), "status": {"ready": 3}}, manager="m2"),
                apply(w + "/status", {**widget(), "status": {"ready": 3}}, manager="m2", force=True),
            ],
        ),
    ]


def _scale(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "w"},
        "spec": {"replicas": replicas},
    }


def validation_order() -> list[Scenario]:
    """Issue 25: the causes of an invalid custom resource word for word, in the server's order
    (schema, the scale subresource's replica paths, then CEL or the cause saying it was skipped)."""
    w = W + "/w"
    status = lambda ready: lambda ctx: {**ctx[0], "status": {"ready": ready}}  # noqa: E731
    cases: dict[str, list[Any]] = {
        "replicas-float": [post(W, widget(replicas=1.5), messages=True)],
        "replicas-negative": [post(W, widget(replicas=-1), messages=True)],
        "size-enum": [post(W, widget(size="XL"), messages=True)],
        "date-time-bad": [post(W, widget(when="yesterday"), messages=True)],
        "int-or-string-bool": [post(W, {**widget(), "spec": {"port": True}}, messages=True)],
        "update-replicas-string": [
            setup(post(W, widget())),
            put(w, lambda ctx: {**ctx[0], "spec": {"replicas": "x"}}, messages=True),
        ],
        "status-ready-negative": [setup(post(W, widget())), put(w + "/status", status(-1), messages=True)],
        "status-ready-string": [setup(post(W, widget())), put(w + "/status", status("x"))],
        "wrong-kind": [post(W, {**widget(replicas=2), "kind": "Gadget"}, messages=True)],
        "wrong-kind-update": [
            setup(post(W, widget())),
            put(w, lambda ctx: {**ctx[0], "kind": "Gadget"}, messages=True),
        ],
        "wrong-kind-cel-error": [post(W, {**widget(), "kind": "Gadget"}, messages=True)],
        # an apply is made a typed object first: what does not fit the schema is the server's 500
        "apply-unknown-field": [apply(w, widget(junk=1, replicas=2), messages=True)],
        "apply-wrong-type": [apply(w, widget(replicas="three"), messages=True)],
        "apply-list-map-no-key": [apply(w, widget(ports=[{"port": 80}]), messages=True)],
        "apply-list-map-duplicate": [
            apply(w, widget(ports=[{"name": "a", "port": 1}, {"name": "a", "port": 2}]), messages=True)
        ],
        "apply-set-duplicate": [apply(w, widget(tags=["a", "a"]), messages=True)],
        "apply-nested-item-wrong-type": [apply(w, widget(ports=[{"name": "a", "port": "x"}]), messages=True)],
        "apply-scale": [
            apply(w + "/scale", _scale(3)),
            apply(w, widget(replicas=2)),
            apply(w + "/scale", _scale(3), messages=True),
            apply(w + "/scale", _scale(3), force=True, messages=True),
            get(w),
            apply(w + "/scale", _scale(-1), messages=True),
        ],
        "apply-untyped-objects": [
            apply(w, widget(labels={"a": "1"}, atomic={"a": "1"}, free={"x": {"y": 1}})),
            apply(w, widget(labels={"b": "1"}, free={"x": {"z": 1}}), manager="m2"),
            apply(w, widget(free={"q": 1, "a": {"b": {"c": 1}}, "l": [1]})),
        ],
        "apply-nulls": [
            apply(w, widget(nullable=None, replicas=None)),
            apply(w, widget(nullable="x", replicas=3)),
            apply(w, widget(nullable=None)),
        ],
        "scale-update-manager": [
            apply(w, widget(replicas=2)),
            patch(w + "/scale?fieldManager=kubectl", {"spec": {"replicas": 4}}),
            apply(w, widget(replicas=2), messages=True),
        ],
        "apply-invalid-object-type": [
            apply(w, {**widget(), "apiVersion": "conf.example.com/v2"}, messages=True)
        ],
        "patch-strict-unknown": [
            setup(post(W, widget(replicas=2))),
            # (the message holds the object, uid and times included: not compared word for word)
            patch(w + "?fieldValidation=Strict", {"spec": {"junk": 1}}),
            patch(w + "?fieldValidation=Strict", [{"op": "add", "path": "/spec/junk", "value": 1}], "json"),
        ],
        "patch-warn-unknown": [
            setup(post(W, widget(replicas=2))),
            patch(w, {"spec": {"junk": 1}}, compare_headers=("Warning",)),
        ],
        "patch-type-meta": [
            setup(post(W, widget(replicas=2))),
            patch(w, {"apiVersion": "conf.example.com/v2"}, messages=True),
            patch(w, {"kind": "Gadget"}, messages=True),
            patch(w, [{"op": "remove", "path": "/metadata/name"}], "json", messages=True),
        ],
        "status-schema-message": [
            setup(post(W, widget(replicas=2))),
            patch(w + "/status", {"status": {"ready": "x"}}, messages=True),
            patch(w + "/status", {"status": "x"}),
        ],
        "apply-order": [
            apply(w, widget(tags=["x", "y"]), view=at("spec")),
            apply(w, widget(tags=["z", "x"]), manager="m2", view=at("spec")),
            apply(w, widget(tags=["y", "x", "q"]), view=at("spec")),
            apply(
                w, widget(tags=["y", "x", "q"], ports=[{"name": "p", "port": 1}, {"name": "o", "port": 2}])
            ),
            apply(w, widget(ports=[{"name": "n", "port": 3}, {"name": "o", "port": 2}]), manager="m2"),
        ],
        "delete-collection": [
            setup(post(W, widget("a"))),
            delete(W + "?labelSelector=x%3Dy"),
            delete(W),
            get(W, view=names),
        ],
        "apply-preserve-unknown": [
            apply(
                B + "/b",
                {"apiVersion": "conf.example.com/v1", "kind": "Blob", "metadata": {"name": "b"}, "x": 1},
            )
        ],
    }
    return [Scenario(f"custom/validation/{k}", "custom", v) for k, v in cases.items()]


def _rows(body: Any) -> Any:
    return {
        "columns": [(c["name"], c["type"], c.get("priority", 0)) for c in body["columnDefinitions"]],
        "cells": [r["cells"] for r in body["rows"]],
    }


SCENARIOS: list[Scenario] = [*creates(), *lifecycle(), *validation_order()]
