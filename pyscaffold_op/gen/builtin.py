"""The schema controller-gen writes for a built-in type embedded in a CRD (a `JobTemplateSpec` field).

Read from the compact Kubernetes spec the models were generated from (`pyscaffold_op.models.spec`), not
from the pydantic models: the spec keeps what the models cannot carry (int32/int64 formats, list/map
types and keys, required lists, the `+default`s). controller-gen's special cases are applied on top:
- `metav1.ObjectMeta` below the root is a bare `type: object` (controller-gen's default, without
  `crd:generateEmbeddedObjectMeta`);
- `metav1.Time`/`MicroTime` are `date-time` strings; `intstr.IntOrString` is an int-or-string and
  `resource.Quantity` one with the quantity pattern;
- `runtime.RawExtension` is an object that keeps unknown fields; `apiextensions JSON` keeps anything;
- descriptions are controller-gen's own (the Go comments of k8s.io/api, not the OpenAPI's text):
  `_builtin_descriptions.json.xz`, written with the overlay below, read only when a CRD embeds a
  built-in type; enums are left out (the spec drops them; controller-gen ignores `+enum`);
- where the Go markers of k8s.io/api say otherwise than the published OpenAPI (`+structType=atomic`,
  `+default=false`, `+required`), controller-gen's reading wins: `_builtin_overlay.json`, written by
  `python -m pyscaffold_op.dev.builtin_overlay` from controller-gen's own output over k8s.io/api at the
  pinned release, patches the schema keywords per definition and relative path.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

from pyscaffold_op.errors import GenerateError
from pyscaffold_op.gen.shared import share

_MODELS_PACKAGE = "pyscaffold_op.models."
_META = "meta_v1."
_INT_OR_STRING = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}


def _quantity() -> dict[str, Any]:
    from pyscaffold_op.apimachinery.fields import QUANTITY_PATTERN

    return {**_INT_OR_STRING, "pattern": QUANTITY_PATTERN}


_PRESERVE = {"x-kubernetes-preserve-unknown-fields": True}
# spec name -> the schema controller-gen writes for that Go type wherever it is embedded
_KNOWN: dict[str, Any] = {
    _META + "ObjectMeta": lambda: {"type": "object"},
    _META + "Time": lambda: {"type": "string", "format": "date-time"},
    _META + "MicroTime": lambda: {"type": "string", "format": "date-time"},
    _META + "FieldsV1": lambda: {"type": "object", **_PRESERVE},
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": lambda: copy.deepcopy(_INT_OR_STRING),
    "io.k8s.apimachinery.pkg.api.resource.Quantity": _quantity,
    "io.k8s.apimachinery.pkg.runtime.RawExtension": lambda: {"type": "object", **_PRESERVE},
    "apiextensions_v1.JSON": lambda: dict(_PRESERVE),
    "apiextensions_v1.JSONSchemaPropsOrArray": lambda: dict(_PRESERVE),
    "apiextensions_v1.JSONSchemaPropsOrBool": lambda: dict(_PRESERVE),
    "apiextensions_v1.JSONSchemaPropsOrStringArray": lambda: dict(_PRESERVE),
}
# The schema keywords of the spec a CRD keeps (the rest is the spec's own bookkeeping).
_KEEP = (
    "type",
    "format",
    "default",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
)
# pyop's own classes standing for meta/v1 types (the models use them instead of generated copies)
_APIMACHINERY = {
    "pyscaffold_op.apimachinery.resource:ObjectMeta": _META + "ObjectMeta",
    "pyscaffold_op.apimachinery.resource:OwnerReference": _META + "OwnerReference",
}


_OVERLAY = Path(__file__).with_name("_builtin_overlay.json")
_DESCRIPTIONS = Path(__file__).with_name("_builtin_descriptions.json.xz")


@functools.cache
def _overlay() -> dict[str, dict[str, dict[str, Any]]]:
    """definition -> relative path ("" for the type itself, `properties/x`, `.../items`) -> keyword ->
    value controller-gen writes there (None: controller-gen writes no such keyword)."""
    patches: dict[str, dict[str, dict[str, Any]]] = json.loads(_OVERLAY.read_text(encoding="utf-8"))[
        "patches"
    ]
    return patches


@functools.cache
def _descriptions() -> dict[str, dict[str, str]]:
    """definition -> relative path -> the description controller-gen writes there ("": the type's own,
    for the types seen embedded by a field without a comment)."""
    import lzma

    table: dict[str, dict[str, str]] = json.loads(lzma.decompress(_DESCRIPTIONS.read_bytes()))["descriptions"]
    return table


def _patch(out: dict[str, Any], owner: str | None, path: str) -> dict[str, Any]:
    """controller-gen's keywords and description at `path` inside definition `owner`."""
    # owner None: the user's field, described by its docstring; the kind's own `metadata` goes this
    # way too, so a CRD embedding no built-in type never loads the descriptions
    text = _descriptions().get(owner, {}).get(path) if owner is not None else None
    if text:
        out["description"] = text
    patch = _overlay().get(owner or "", {}).get(path)
    if patch:
        for key, value in patch.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = copy.deepcopy(value)
    return out


def definition_of(cls: type) -> str | None:
    """The spec definition a built-in model class was generated from (`batch_v1.JobTemplateSpec`),
    or None for any other class."""
    key = f"{cls.__module__}:{cls.__qualname__}"
    if key in _APIMACHINERY:
        return _APIMACHINERY[key]
    if not cls.__module__.startswith(_MODELS_PACKAGE):
        return None
    from pyscaffold_op.models import spec

    group_version = cls.__module__[len(_MODELS_PACKAGE) :].split(".", 1)[0]  # core_v1._pod -> core_v1
    name = f"{group_version}.{cls.__qualname__}"
    return name if name in spec.load()["definitions"] else None


def complete_builtin_models(module: object) -> None:
    """Build the built-in models a project module imported (`JobTemplateSpec`) before pydantic's
    JSON schema builds a class of that module. They are deferred (built on first use), and a
    deferred model is rebuilt inline by every class that embeds it: PodSpec's ~130 classes again for
    each kind (~20 ms). Once built, later classes reuse it."""
    from pydantic import BaseModel

    for value in vars(module).values() if module is not None else ():
        if (
            isinstance(value, type)
            and issubclass(value, BaseModel)
            and value.__module__.startswith(_MODELS_PACKAGE)
            and not value.__pydantic_complete__
        ):
            value.model_rebuild()


def builtin_schema(name: str) -> dict[str, Any]:
    """The structural schema of spec definition `name`, as controller-gen writes the Go type: a new
    top-level dict (markers and docstrings add keys to it) over subtrees shared by every use (a
    PodSpec is converted once per process, and written to YAML once; see `gen.shared`)."""
    return dict(_schema(name))


@functools.cache
def _schema(name: str) -> dict[str, Any]:
    schema = _convert({"$ref": name}, ())
    for value in schema.values():
        if isinstance(value, dict):
            share(value)
    return schema


def _convert(
    node: dict[str, Any], stack: tuple[str, ...], owner: str | None = None, path: str = ""
) -> dict[str, Any]:
    """`node` converted; it sits at `path` inside definition `owner` (None: the embedding field)."""
    if "$ref" in node:
        name = node["$ref"]
        if name in _KNOWN:
            return _patch(_KNOWN[name](), owner, path)
        if name in stack:
            raise GenerateError(
                f"the built-in type {name} is recursive ({' -> '.join((*stack, name))}); a structural "
                "schema cannot embed it (use FreeForm)"
            )
        from pyscaffold_op.models import spec

        own = _convert(spec.definition(name), (*stack, name), name, "")
        return _patch(own, owner, path)
    out = {key: copy.deepcopy(node[key]) for key in _KEEP if key in node}
    if out.get("x-kubernetes-int-or-string"):
        out.update(copy.deepcopy(_INT_OR_STRING))
    prefix = f"{path}/" if path else ""
    if "items" in node:
        out["items"] = _convert(node["items"], stack, owner, prefix + "items")
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = _convert(
            node["additionalProperties"], stack, owner, prefix + "additionalProperties"
        )
    if "properties" in node:
        out["properties"] = {
            prop: _convert(sub, stack, owner, f"{prefix}properties/{prop}")
            for prop, sub in node["properties"].items()
        }
    if node.get("required"):
        out["required"] = sorted(node["required"])
    return _patch(out, owner, path)
