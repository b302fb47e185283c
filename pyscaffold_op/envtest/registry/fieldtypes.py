"""The structural types server-side apply reads: a custom resource's openAPIV3Schema, or for built-ins
the kind's definition in the models' compact spec (`pyscaffold_op/models/_spec.json`, `$ref`s
followed), the same patch metadata strategic merge reads (registry/patch.py).

structured-merge-diff's semantics come from the schema's extensions: `x-kubernetes-list-type`
(`map` with `x-kubernetes-list-map-keys`: an associative list; `set`; anything else, or none, is
`atomic`) and `x-kubernetes-map-type: atomic` (a struct or map owned and replaced as one value).
Also here: the typed conversion of an applied object ("failed to create typed patch object"), which
refuses unknown fields and wrongly typed scalars of built-ins with the server's texts.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from pyscaffold_op.apimachinery.gofmt import go_type, go_value
from pyscaffold_op.models import spec

Schema = dict[str, Any]
ListKind = tuple[Any, ...]  # ("map", keys) | ("set",) | ("atomic",)

OBJECT_META = "meta_v1.ObjectMeta"


@functools.cache
def _definition(name: str) -> Schema | None:
    try:
        return spec.definition(name)
    except KeyError:
        return None


def resolve(node: Schema | None) -> Schema | None:
    """`node` with its `$ref` followed (the property's own list extensions win over the target's)."""
    if not node or "$ref" not in node:
        return node
    target = _definition(node["$ref"])
    if target is None:
        return None
    own = {k: v for k, v in node.items() if k != "$ref"}
    return {**target, **own} if own else target


def kind_schema(api_version: str, kind: str) -> Schema | None:
    """A built-in kind's definition, None for kinds the models lack (no type information: maps are
    granular, lists atomic)."""
    group, _, version = api_version.rpartition("/")
    name = spec.kinds().get((group, version, kind))
    return _definition(name) if name else None


def object_meta() -> Schema | None:
    return _definition(OBJECT_META)


def child(node: Schema | None, key: str) -> Schema | None:
    """The type of field `key` of the struct or map `node`."""
    node = resolve(node)
    if not node:
        return None
    props = node.get("properties")
    if props and key in props:
        return resolve(props[key])
    extra = node.get("additionalProperties")
    return resolve(extra) if isinstance(extra, dict) else None


def items(node: Schema | None) -> Schema | None:
    node = resolve(node)
    return resolve(node.get("items")) if node else None


def list_kind(node: Schema | None) -> ListKind:
    node = resolve(node)
    if not node:
        return ("atomic",)
    list_type = node.get("x-kubernetes-list-type")
    if list_type == "map":
        return ("map", list(node.get("x-kubernetes-list-map-keys") or []))
    if list_type == "set":
        return ("set",)
    return ("atomic",)


def atomic_map(node: Schema | None) -> bool:
    """A struct or map applied and owned as one value (`+structType=atomic`, `+mapType=atomic`)."""
    node = resolve(node)
    return node is not None and node.get("x-kubernetes-map-type") == "atomic"


def is_map(node: Schema | None) -> bool:
    """A Go map (additionalProperties, no declared fields): `omitempty` drops it when empty."""
    node = resolve(node)
    if node is None:
        return False
    return isinstance(node.get("additionalProperties"), dict) and not node.get("properties")


# -- the typed conversion of an applied built-in (structured-merge-diff's typed.AsTyped) -----------


def typed_error(obj: dict[str, Any], schema: Schema) -> str | None:
    """The first reason `obj` is not a value of `schema`, as `.path: reason` (unknown fields, scalars
    of the wrong type), or None. `metadata` and the type fields are the server's to check."""
    for key in sorted(obj):
        if key in ("apiVersion", "kind", "metadata"):
            continue
        found = _check(obj[key], _field(schema, key), f".{key}")
        if found:
            return found
    return None


_UNDECLARED = object()


def _field(node: Schema | None, key: str) -> Any:
    node = resolve(node)
    if node is None:
        return None
    if node.get("x-kubernetes-embedded-resource") and key in ("apiVersion", "kind", "metadata"):
        return None  # an embedded object's type fields are implied
    props = node.get("properties") or {}
    if key in props:
        return resolve(props[key])
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        return resolve(extra)
    if node.get("x-kubernetes-preserve-unknown-fields") or not props:
        return None
    return _UNDECLARED


def _check(value: Any, node: Any, at: str) -> str | None:
    if node is _UNDECLARED:
        return f"{at}: field not declared in schema"
    if node is None or value is None or node.get("x-kubernetes-preserve-unknown-fields"):
        return None
    kind = node.get("type")
    if node.get("x-kubernetes-int-or-string"):
        if isinstance(value, (dict, list)):
            return f"{at}: expected any scalar, got {go_type(value)}"
        return None
    if kind == "object" or "properties" in node or "additionalProperties" in node:
        if not isinstance(value, dict):
            return f"{at}: expected map, got {go_value(value)}"
        for key in sorted(value):
            found = _check(value[key], _field(node, key), f"{at}.{key}")
            if found:
                return found
        return None
    if kind == "array":
        if not isinstance(value, list):
            return f"{at}: expected list, got {go_value(value)}"
        return _check_list(value, node, at)
    return _scalar(value, kind, at)


def _check_list(value: list[Any], node: Schema, at: str) -> str | None:
    """Each item as its path element names it (`[name="c"]` in an associative list, `[="a"]` in a
    set, `[0]` otherwise): an associative list's item needs a key (a missing key field may take its
    default), no two items of a set or an associative list share one, and each item is checked."""
    list_type = list_kind(node)
    item = resolve(node.get("items"))
    seen: set[str] = set()
    for i, v in enumerate(value):
        element = f"[{i}]"
        if list_type[0] == "set":
            element = f"[={_json(v)}]"
        elif list_type[0] == "map" and isinstance(v, dict):
            keys = list_type[1]
            present = {}
            for k in keys:
                default = (child(item, k) or {}).get("default")
                if k in v or default is not None:
                    present[k] = v.get(k, default)
            if keys and not present:
                names = "[" + " ".join(json.dumps(k) for k in keys) + "]"
                return (
                    f"{at}: element {i}: associative list with keys has an element that omits all "
                    f"key fields {names} (and doesn't have default values for any key fields)"
                )
            element = "[" + ",".join(f"{k}={_json(present[k])}" for k in sorted(present)) + "]"
        if list_type[0] != "atomic":
            if element in seen:
                return f"{at}: duplicate entries for key {element}"
            seen.add(element)
        found = _check(v, item, f"{at}{element}")
        if found:
            return found
    return None


def _json(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"))


def _scalar(value: Any, kind: Any, at: str) -> str | None:
    if kind in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{at}: expected numeric (int or float), got {go_type(value)}"
    elif kind == "string":
        if not isinstance(value, str):
            return f"{at}: expected string, got &value.valueUnstructured{{Value:{go_value(value)}}}"
    elif kind == "boolean" and not isinstance(value, bool):
        return f"{at}: expected boolean, got {go_value(value)}"
    return None


# -- strict decoding of a built-in (sigs.k8s.io/json's unknown-field paths) --------------------------


def unknown_fields(obj: dict[str, Any], schema: Schema, *, drop: bool = False) -> list[str]:
    """The paths (`junk`, `metadata.bar`, `spec.template.spec.containers[0].junk`) of the fields of
    `obj` its kind does not declare, in the order sent; `drop` removes them, as decoding into the Go
    type does."""
    found: list[str] = []
    for key in list(obj):
        if key in ("apiVersion", "kind"):
            continue
        node = object_meta() if key == "metadata" else _field(schema, key)
        _unknown(obj, key, node, key, found, drop)
    return found


def _unknown(parent: Any, key: Any, node: Any, at: str, found: list[str], drop: bool) -> None:
    if node is _UNDECLARED:
        found.append(at)
        if drop:
            del parent[key]
        return
    value = parent[key]
    if node is None or node.get("x-kubernetes-preserve-unknown-fields"):
        return
    if isinstance(value, dict):
        for k in list(value):
            _unknown(value, k, _field(node, k), f"{at}.{k}", found, drop)
    elif isinstance(value, list):
        item = resolve(node.get("items"))
        if item is not None:
            for i in range(len(value)):
                _unknown(value, i, item, f"{at}[{i}]", found, drop)
