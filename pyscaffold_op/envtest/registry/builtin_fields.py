"""The fields of the built-in kinds' Go types, at every depth, and ObjectMeta's.

kube-apiserver decodes a built-in object into its Go struct, so a field the struct lacks is dropped
(reported with `fieldValidation=Warn`, refused with `Strict`). The emulator stores built-ins as
dicts: without these checks an unknown field of any size would be kept and served back. The Go
structs' fields come from k8s.io/api (`_go_fields.json`, `python -m pyscaffold_op.dev.go_types`). The
JSON types of every field are checked as a body is read (`server/godecode.py`).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from pyscaffold_op.apimachinery.objectmeta import OBJECT_META_FIELDS
from pyscaffold_op.models import spec

_SPEC_STATUS = ("spec", "status")

# (group, kind) -> fields besides apiVersion, kind and metadata, for the kinds k8s.io/api lacks
# (apiextensions-apiserver's)
_FIELDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _SPEC_STATUS,
}


@functools.cache
def _model_fields() -> dict[tuple[str, str], tuple[str, ...]]:
    """The top-level fields of every kind the models carry (`models/_spec.json`), for kinds `_FIELDS`
    does not list."""
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    for (group, _version, kind), name in spec.kinds().items():
        props = spec.definition(name).get("properties") or {}
        out.setdefault((group, kind), tuple(p for p in props if p not in ("apiVersion", "kind", "metadata")))
    return out


def prune_unknown(group: str, kind: str, obj: dict[str, Any], version: str = "") -> list[str]:
    """Drop the top-level and metadata fields the kind's Go type does not have; returns their paths
    (`foo`, `metadata.bar`) in the order sent. The Go struct's own fields when k8s.io/api has the
    kind (`_go_fields.json`), else the tables above; kinds missing everywhere are left alone."""
    known: tuple[str, ...] | frozenset[str] | None = _go_fields().get(_go_type(group, version, kind))
    if known is None:
        known = _FIELDS.get((group, kind)) or _model_fields().get((group, kind))
        if known is None:
            return []
    found: list[str] = []
    for key in list(obj):
        if key not in known and key not in ("apiVersion", "kind", "metadata"):
            found.append(key)
            del obj[key]
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        for key in list(meta):
            if key not in OBJECT_META_FIELDS:
                found.append(f"metadata.{key}")
                del meta[key]
    return found


# Deeper fields: every struct's JSON field names as k8s.io/api's Go types declare them
# (`_go_fields.json`, written by `python -m pyscaffold_op.dev.go_types`), walked along the models'
# definitions (`models/_spec.json`, whose `$ref`s say which struct each field holds).
_GO_FIELDS = Path(__file__).with_name("_go_fields.json")


@functools.cache
def _go_fields() -> dict[str, frozenset[str]]:
    raw: dict[str, list[str]] = json.loads(_GO_FIELDS.read_text())
    return {name: frozenset(fields) for name, fields in raw.items()}


def _go_type(group: str, version: str, kind: str) -> str:
    """The key of a kind's Go struct: k8s.io/api's package directory is the group's first label."""
    return f"{group.split('.')[0] or 'core'}_{version}.{kind}"


def _definition(name: str) -> dict[str, Any]:
    try:
        return spec.definition(name)
    except KeyError:
        return {}


def prune_nested(group: str, kind: str, obj: dict[str, Any], version: str = "") -> list[str]:
    """Drop the fields below the top level that the Go structs lack, at any depth (ObjectMeta of
    templates included); returns their paths (`spec.junk`, `spec.ports[0].junk`). A field the Go
    type has but the models do not describe is kept, and not looked into."""
    kinds = spec.kinds()
    name = kinds.get((group, version, kind)) or next(
        (n for (g, _v, k), n in kinds.items() if (g, k) == (group, kind)), None
    )
    if name is None:
        return []
    props = _definition(name).get("properties") or {}
    found: list[str] = []
    for key, value in obj.items():
        if key not in ("apiVersion", "kind", "metadata") and key in props:
            _prune(value, props[key], key, found)
    return found


def _prune(value: Any, schema: dict[str, Any], at: str, found: list[str]) -> None:
    ref = schema.get("$ref")
    if ref is not None:
        props = _definition(ref).get("properties")
        if not props or not isinstance(value, dict):
            return
        known = _go_fields().get(ref) or frozenset(props)
        for key in [k for k in value if k not in known]:
            found.append(f"{at}.{key}")
            del value[key]
        for key, sub in value.items():
            if key in props:
                _prune(sub, props[key], f"{at}.{key}", found)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _prune(item, schema["items"], f"{at}[{i}]", found)
