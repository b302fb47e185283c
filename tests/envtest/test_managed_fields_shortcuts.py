"""`to_fields_v1` must build the same fieldsV1 as the construction it replaced (key order and "."
markers included), on the path sets of seeded random objects: built-in list kinds (containers, ports,
env, finalizers, ownerReferences) and schema ones (list-type map and set, atomic lists), empty maps and
lists, duplicate map keys; and on sets read back from stored fieldsV1."""

from __future__ import annotations

import json
import random
from typing import Any

from pyscaffold_op.envtest.registry.managed import Path, field_paths, from_fields_v1, to_fields_v1

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name", "protocol"],
                    "items": {"type": "object", "properties": {"opts": {"type": "array"}}},
                },
                "tags": {"type": "array", "x-kubernetes-list-type": "set"},
                "matrix": {"type": "array", "items": {"type": "array"}},
                "rules": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["id"],
                    "items": {
                        "type": "object",
                        "properties": {"sub": {"type": "array", "x-kubernetes-list-type": "set"}},
                    },
                },
            },
        },
        "status": {"type": "object", "properties": {"conditions": {"type": "array"}}},
    },
}
NAMES = ["containers", "ports", "env", "tags", "rules", "matrix", "conditions", "data", "x", "sub", "opts"]


def _value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.35:
        return rng.choice([1, "a", True, None, 2.5, {}, [], "b"])
    if roll < 0.65:
        return {rng.choice(NAMES): _value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    items: list[Any] = []
    for _ in range(rng.randint(0, 3)):
        if rng.random() < 0.7:
            keys = rng.sample(["name", "protocol", "id", "port", "containerPort", "type"], 2)
            item = {k: rng.choice(["a", "b", 80, "TCP"]) for k in keys}
            item.update({rng.choice(NAMES): _value(rng, depth + 1)} if rng.random() < 0.5 else {})
            items.append(item)
        else:
            items.append(rng.choice([1, "x", "y", 1.5, None]))
    return items


def _object(rng: random.Random) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "o", "namespace": "default"}
    if rng.random() < 0.5:
        meta["labels"] = {"a": "b", "c": "d"} if rng.random() < 0.8 else {}
    if rng.random() < 0.3:
        meta["finalizers"] = ["x/y", "a/b"]
    if rng.random() < 0.3:
        meta["ownerReferences"] = [{"uid": "u1", "name": "n", "kind": "K", "apiVersion": "v1"}]
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "X", "metadata": meta}
    for top in ("spec", "status", "data"):
        if rng.random() < 0.8:
            obj[top] = {rng.choice(NAMES): _value(rng, 1) for _ in range(rng.randint(0, 4))}
    return obj


def _path_by_path(paths: set[Path] | dict[Path, Any]) -> dict[str, Any]:
    """The construction `to_fields_v1` had up to stop 21 (the oracle), with `.` on every member
    that has children, as structured-merge-diff writes it."""
    root: dict[str, Any] = {}
    for path in sorted(paths):
        node = root
        for elem in path:
            node = node.setdefault(elem, {})

    def mark(node: dict[str, Any], path: Path) -> None:
        for k, child in node.items():
            if k == ".":
                continue
            p = (*path, k)
            # a member with children: list entries, and (issue 25) a map key holding an object
            if child and p in paths:
                child.setdefault(".", {})
            mark(child, p)

    mark(root, ())
    return root


def test_to_fields_v1_equals_the_path_by_path_construction() -> None:
    rng = random.Random(2912)
    seen_entries = 0
    for _ in range(1500):
        obj = _object(rng)
        custom = rng.random() < 0.5
        schema = SCHEMA if custom else None
        for status_only in (False, True):
            paths = field_paths(obj, schema, custom, status_only)
            want = json.dumps(_path_by_path(paths))
            assert json.dumps(to_fields_v1(paths)) == want, obj
            seen_entries += want.count('"k:')
            # sets read back from stored fieldsV1 (entries may lack "."), and parts of them
            back = from_fields_v1(json.loads(want))
            part = {p for p in back if rng.random() < 0.6}
            assert json.dumps(to_fields_v1(part)) == json.dumps(_path_by_path(part))
    assert seen_entries > 500  # the objects do exercise list-map entries
