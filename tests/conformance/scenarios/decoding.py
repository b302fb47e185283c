"""Strict decoding of built-in kinds (issues 38 and 40): a body is decoded into the kind's Go type, so
every field of the wrong JSON type, a number that is no integer of the field's size, a time, quantity,
int-or-string or base64 value that does not parse is Go's 400 (`cannot unmarshal ... into Go struct
field ...`), word for word, for JSON and YAML bodies, creates, updates, patches and applies.

Beside the hand-picked cases, every scalar and collection of every corpus kind's body (builtin.KINDS)
is sent with the wrong JSON type once."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from tests.conformance.harness import Scenario, Step
from tests.conformance.scenarios.builtin import KINDS
from tests.conformance.scenarios.steps import apply, at, patch, post, put, setup

PODS = "/api/v1/namespaces/{ns}/pods"
CM = "/api/v1/namespaces/{ns}/configmaps"
SECRETS = "/api/v1/namespaces/{ns}/secrets"
SERVICES = "/api/v1/namespaces/{ns}/services"
DEPLOYMENTS = "/apis/apps/v1/namespaces/{ns}/deployments"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
CONTAINER = {"name": "c", "image": "nginx"}


def _pod(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [CONTAINER], **spec},
    }


def _container(**fields: Any) -> dict[str, Any]:
    return _pod(containers=[{**CONTAINER, **fields}])


def _deployment(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [CONTAINER]}},
            **spec,
        },
    }


def _raw(path: str, text: str, ctype: str = "application/json", **kw: Any) -> Step:
    return Step("POST", path, text, content_type=ctype, messages=True, **kw)


def cases() -> list[Scenario]:
    """Hand-picked: each JSON kind into each Go kind, number literals, the self-decoding types, and
    which error wins when there are several."""
    big = "1234567890123456789012345678901234567890"
    seqs: dict[str, list[Step]] = {
        "number-into-string": [post(PODS, _container(image=5), messages=True)],
        "string-into-int32": [post(PODS, _container(ports=[{"containerPort": "eighty"}]), messages=True)],
        "string-into-int64": [post(PODS, _pod(activeDeadlineSeconds="soon"), messages=True)],
        "string-into-bool": [post(PODS, _container(tty="yes"), messages=True)],
        "bool-into-string": [post(PODS, _pod(restartPolicy=True), messages=True)],
        "object-into-slice": [post(PODS, _pod(containers={"name": "c"}), messages=True)],
        "array-into-struct": [post(PODS, _pod(securityContext=[]), messages=True)],
        "string-into-struct-inline": [
            post(PODS, _pod(volumes=[{"name": "v", "configMap": "x"}]), messages=True)
        ],
        "number-into-named-string": [
            post(PODS, _container(ports=[{"containerPort": 80, "protocol": 5}]), messages=True)
        ],
        "number-into-map-value": [post(PODS, _pod(nodeSelector={"a": 5}), messages=True)],
        "array-into-map": [post(PODS, _pod(nodeSelector=["a"]), messages=True)],
        "number-into-slice-item": [post(PODS, _container(args=["a", 5]), messages=True)],
        "float-into-int32": [
            _raw(
                PODS,
                json.dumps(_container(ports=[{"containerPort": 0}])).replace(
                    '"containerPort": 0', '"containerPort": 80.0'
                ),
            )
        ],
        "exponent-into-int32": [
            _raw(
                PODS,
                json.dumps(_container(ports=[{"containerPort": 0}])).replace(
                    '"containerPort": 0', '"containerPort": 1e2'
                ),
            )
        ],
        "fraction-into-int32": [post(PODS, _container(ports=[{"containerPort": 80.5}]), messages=True)],
        "int32-overflow": [post(PODS, _container(ports=[{"containerPort": 3000000000}]), messages=True)],
        "int64-overflow-metadata": [
            _raw(
                CM, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","generation":' + big + "}}"
            )
        ],
        "negative-into-int": [post(PODS, _pod(terminationGracePeriodSeconds=-1.5), messages=True)],
        "time-number": [post(CM, {"metadata": {"name": "c", "creationTimestamp": 5}}, messages=True)],
        "time-words": [
            post(CM, {"metadata": {"name": "c", "creationTimestamp": "yesterday"}}, messages=True)
        ],
        "time-month": [
            post(CM, {"metadata": {"name": "c", "creationTimestamp": "2024-13-01T00:00:00Z"}}, messages=True)
        ],
        "time-day": [
            post(CM, {"metadata": {"name": "c", "creationTimestamp": "2024-02-30T00:00:00Z"}}, messages=True)
        ],
        "time-no-zone": [
            post(CM, {"metadata": {"name": "c", "creationTimestamp": "2024-01-01T00:00:00"}}, messages=True)
        ],
        "time-extra": [
            post(CM, {"metadata": {"name": "c", "creationTimestamp": "2024-01-01T00:00:00Zx"}}, messages=True)
        ],
        "time-fraction-accepted": [
            post(
                CM,
                {"metadata": {"name": "c", "creationTimestamp": "2024-01-01T00:00:00.5Z"}},
                status_only=True,
            )
        ],
        "microtime-without-micros": [
            post(
                LEASES,
                {"metadata": {"name": "l"}, "spec": {"renewTime": "2024-01-01T00:00:00Z"}},
                messages=True,
            )
        ],
        "intorstring-bool": [
            post(
                SERVICES,
                {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80, "targetPort": True}]}},
                messages=True,
            )
        ],
        "intorstring-fraction": [
            post(
                SERVICES,
                {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80, "targetPort": 1.5}]}},
                messages=True,
            )
        ],
        "intorstring-object": [
            post(
                SERVICES,
                {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80, "targetPort": {}}]}},
                messages=True,
            )
        ],
        "quantity-bool": [post(PODS, _container(resources={"limits": {"cpu": True}}), messages=True)],
        "quantity-object": [
            post(PODS, _container(resources={"requests": {"memory": {"a": 1}}}), messages=True)
        ],
        "bytes-number": [post(SECRETS, {"metadata": {"name": "s"}, "data": {"a": 5}}, messages=True)],
        "bytes-base64": [post(SECRETS, {"metadata": {"name": "s"}, "data": {"a": "!!!"}}, messages=True)],
        "bytes-array": [
            post(CM, {"metadata": {"name": "c"}, "binaryData": {"a": [1, 2, 3]}}, view=at("binaryData"))
        ],
        "bytes-array-overflow": [
            post(CM, {"metadata": {"name": "c"}, "binaryData": {"a": [1, 256]}}, messages=True)
        ],
        "first-error-wins": [post(PODS, _pod(activeDeadlineSeconds="x", restartPolicy=5), messages=True)],
        "quantity-beats-earlier-error": [
            post(PODS, _container(tty="yes", resources={"limits": {"cpu": True}}), messages=True)
        ],
        "time-beats-earlier-error": [
            post(CM, {"metadata": {"name": "c", "labels": {"a": 5}, "creationTimestamp": "x"}}, messages=True)
        ],
        "null-everywhere": [
            post(
                PODS,
                _container(ports=None, tty=None, resources={"limits": None})
                | {"metadata": {"name": "p", "labels": None}},
                status_only=True,
            )
        ],
        "unknown-field-not-typed": [
            post(CM, {"metadata": {"name": "c"}, "junk": {"deep": [1]}, "data": {"a": "1"}}, view=at("data"))
        ],
    }
    return [Scenario(f"decoding/{k}", "decoding", v) for k, v in seqs.items()]


def yaml_bodies() -> list[Scenario]:
    template = "template: {metadata: {labels: {app: x}}, spec: {containers: [{name: c, image: nginx}]}}"
    deployment = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"
        "spec:\n  selector: {matchLabels: {app: x}}\n  " + template + "\n"
    )
    seqs: dict[str, list[Step]] = {
        "replicas-fraction": [_raw(DEPLOYMENTS, deployment + "  replicas: 1.5\n", "application/yaml")],
        "replicas-whole-float": [
            _raw(
                DEPLOYMENTS, deployment + "  replicas: 2.0\n", "application/yaml", view=at("spec", "replicas")
            )
        ],
        "replicas-string": [_raw(DEPLOYMENTS, deployment + "  replicas: three\n", "application/yaml")],
        "generation-40-digits": [
            _raw(
                CM,
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
                "  generation: 1234567890123456789012345678901234567890\n",
                "application/yaml",
            )
        ],
        "port-exponent": [
            _raw(
                SERVICES,
                "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 8.0e+1}]}\n",
                "application/yaml",
                view=at("spec", "ports"),
            )
        ],
    }
    return [Scenario(f"decoding/yaml/{k}", "decoding", v) for k, v in seqs.items()]


def verbs() -> list[Scenario]:
    """The same decoding on updates, patches, applies and status writes."""
    good = _deployment()
    item = f"{DEPLOYMENTS}/d"
    seqs: dict[str, list[Step]] = {
        "update": [setup(post(DEPLOYMENTS, good)), put(item, _deployment(replicas="three"), messages=True)],
        "update-status": [
            setup(post(DEPLOYMENTS, good)),
            put(f"{item}/status", {**good, "status": {"replicas": "x"}}, messages=True),
        ],
        "merge-patch": [setup(post(DEPLOYMENTS, good)), patch(item, {"spec": {"replicas": "three"}})],
        "json-patch": [
            setup(post(DEPLOYMENTS, good)),
            patch(item, [{"op": "replace", "path": "/spec/replicas", "value": 1.5}], "json"),
        ],
        "strategic-patch": [
            setup(post(DEPLOYMENTS, good)),
            patch(item, {"spec": {"minReadySeconds": "x"}}, "strategic"),
        ],
        "status-patch": [
            setup(post(DEPLOYMENTS, good)),
            patch(f"{item}/status", {"status": {"replicas": True}}),
        ],
        "patch-metadata-time": [
            setup(post(DEPLOYMENTS, good)),
            patch(item, {"metadata": {"labels": {"a": "b"}, "deletionTimestamp": "soon"}}),
        ],
        "apply-wrong-type": [apply(DEPLOYMENTS + "/d", _deployment(replicas="three"))],
        "apply-then-wrong-type": [
            setup(apply(DEPLOYMENTS + "/d", good)),
            apply(DEPLOYMENTS + "/d", _deployment(minReadySeconds=True)),
        ],
        "dry-run": [post(DEPLOYMENTS + "?dryRun=All", _deployment(replicas=[]), messages=True)],
    }
    return [Scenario(f"decoding/verb/{k}", "decoding", v) for k, v in seqs.items()]


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every value under `value` with its path (dict keys, list indices), the containers included."""
    if path:
        yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))


def _wrong(value: Any) -> Any:
    """A value of another JSON type than `value`."""
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float)):
        return "seven"
    if isinstance(value, str):
        return 7
    if isinstance(value, list):
        return {"not": "a list"}
    return "not an object"


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> None:
    for step in path[:-1]:
        obj = obj[step]
    obj[path[-1]] = value


def every_field() -> list[Scenario]:
    """Each corpus kind's body with one of its values (a scalar, a map, a list, a struct) of the wrong
    JSON type; the type fields, names and quantities' strings aside (a quantity reads a number too)."""
    out = []
    for kind in KINDS:
        body = kind.body(kind.name("obj"))
        body["metadata"]["labels"] = {"l": "v"}
        for path, value in _leaves(body):
            if path[0] in ("apiVersion", "kind") or path == ("metadata", "name"):
                continue
            if isinstance(value, str) and value[:1].isdigit():
                continue  # `1Gi`, `10`: a quantity's number would parse
            wrong = copy.deepcopy(body)
            _set(wrong, path, _wrong(value))
            name = ".".join(str(p) for p in path)
            out.append(
                Scenario(
                    f"decoding/field/{kind.api_version}/{kind.kind.lower()}/{name}",
                    "decoding",
                    [post(kind.collection(), wrong, messages=True)],
                )
            )
    return out


SCENARIOS: list[Scenario] = [*cases(), *yaml_bodies(), *verbs(), *every_field()]
