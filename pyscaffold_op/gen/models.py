"""CRD -> pydantic models with datamodel-code-generator, so controllers can use third-party kinds typed.

The root model becomes a `CustomResource` subclass with `gvk`, `plural` and `namespaced` from the CRD;
nested objects become `KubeModel`s. Kubernetes extensions (`x-kubernetes-*`) are kept in
`Field(json_schema_extra=...)`, so `pyop generate crd` on the result gives back the same schema.
datamodel-code-generator is imported on first use only: it is slow to import.
"""

from __future__ import annotations

import ast
import json
import warnings
from pathlib import Path
from typing import Any

from pyscaffold_op.errors import GenerateError

_ROOT_FIELDS = ("apiVersion", "kind", "metadata")
_NULLABLE = "x-pyop-nullable"
_FORMAT = "x-pyop-format"


def pick_version(crd: dict[str, Any], version: str | None) -> dict[str, Any]:
    """The requested version of a CRD, or its storage version."""
    versions = crd.get("spec", {}).get("versions") or []
    if version is None:
        found = next((v for v in versions if v.get("storage")), versions[0] if versions else None)
    else:
        found = next((v for v in versions if v.get("name") == version), None)
    if found is None:
        names = ", ".join(v.get("name", "?") for v in versions) or "none"
        name = crd.get("metadata", {}).get("name")
        raise GenerateError(f"CRD {name} has no version {version} (has: {names})")
    if not (found.get("schema") or {}).get("openAPIV3Schema"):
        raise GenerateError(f"version {found.get('name')} of the CRD has no openAPIV3Schema")
    return found


def models_from_crd(crd: dict[str, Any], *, version: str | None = None) -> str:
    """Python source of pydantic models for one version of `crd`."""
    if crd.get("kind") != "CustomResourceDefinition":
        raise GenerateError(f"not a CustomResourceDefinition (kind: {crd.get('kind')!r})")
    from pyscaffold_op.apiextensions.crdvalidation import check_crd

    problems = check_crd(crd)
    if problems:  # the generator would make up a model for a schema no server serves
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        name = (crd.get("metadata") or {}).get("name")
        raise GenerateError(f"CRD {name} would be rejected by the API server: {problems[0]}{more}")
    spec = crd["spec"]
    entry = pick_version(crd, version)
    kind = spec["names"]["kind"]
    schema = json.loads(json.dumps(entry["schema"]["openAPIV3Schema"]))
    for name in _ROOT_FIELDS:  # CustomResource declares these itself
        schema.get("properties", {}).pop(name, None)
    if "required" in schema:
        schema["required"] = [r for r in schema["required"] if r not in _ROOT_FIELDS]
    code = _generate(_mark_nullable(schema), kind).replace(f"'{_NULLABLE}': True", "'nullable': True")
    code = code.replace(f"'{_FORMAT}': ", "'format': ")
    module = _as_custom_resource(
        code,
        _kind_markers(crd, entry),
        kind,
        group=spec["group"],
        version=entry["name"],
        plural=spec["names"]["plural"],
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
    )
    _check_imports(module, kind)
    return module


def models_from_crd_file(path: Path, *, version: str | None = None) -> str:
    """Python source for the (first) CRD in a YAML file."""
    import yaml

    try:
        docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if isinstance(d, dict)]
    except yaml.YAMLError as err:
        raise GenerateError(f"{path}: not valid YAML: {str(err).splitlines()[0]}") from err
    crds = [d for d in docs if d.get("kind") == "CustomResourceDefinition"]
    if not crds:
        raise GenerateError(f"{path}: no CustomResourceDefinition in the file")
    return models_from_crd(crds[0], version=version)


def _check_imports(code: str, kind: str) -> None:
    """Run the generated module once (never exit 0 with a module that fails to import)."""
    import sys
    import types

    from pyscaffold_op.apimachinery import CustomResource

    saved = dict(CustomResource.registry)
    module = types.ModuleType("_pyop_generated_models")
    sys.modules[module.__name__] = module  # pydantic resolves the annotations through it
    try:
        exec(compile(code, f"<models of {kind}>", "exec"), module.__dict__)
        getattr(module, kind).model_rebuild()
    except Exception as err:  # anything the generated code raises means broken output
        first = (str(err).strip().splitlines() or [""])[0]
        raise GenerateError(
            f"the models generated for {kind} do not import ({type(err).__name__}: {first}); nothing written"
        ) from err
    finally:
        sys.modules.pop(module.__name__, None)
        CustomResource.registry.clear()
        CustomResource.registry.update(saved)


def _generate(schema: dict[str, Any], kind: str) -> str:
    try:
        from datamodel_code_generator import DataModelType, InputFileType, generate
    except ImportError as err:  # pragma: no cover - a declared dependency
        raise GenerateError("datamodel-code-generator is not installed") from err
    options: dict[str, Any] = {
        "input_file_type": InputFileType.JsonSchema,
        "output_model_type": DataModelType.PydanticV2BaseModel,
        "class_name": kind,
        "base_class": "pyscaffold_op.apimachinery.KubeModel",
        "use_union_operator": True,
        "use_standard_collections": True,
        "snake_case_field": True,
        "use_annotated": True,
        "field_include_all_keys": True,  # keeps x-kubernetes-* in json_schema_extra
        "use_schema_description": True,
        "use_field_description": True,
        "enum_field_as_literal": "all",
        "disable_timestamp": True,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            code = generate(json.dumps(schema), **options)
        except Exception as err:  # the generator raises many types; one line for the user
            first = (str(err).strip().splitlines() or [type(err).__name__])[0]
            raise GenerateError(f"datamodel-code-generator failed: {first}") from err
    if not isinstance(code, str):
        raise GenerateError("datamodel-code-generator produced several modules; expected one")
    return code


def _mark_nullable(node: Any) -> Any:
    """`nullable: true` and integer formats -> private extension keys, so the generator keeps them in
    json_schema_extra (it would otherwise fold `nullable` into `X | None`, which our CRD generator
    reads as "optional", and drop `format: int32` for a plain `int`)."""
    if isinstance(node, dict):
        integer = node.get("type") == "integer"
        out = {}
        for k, v in node.items():
            if k == "nullable" and v is True:
                k = _NULLABLE
            elif k == "format" and integer and v in ("int32", "int64"):
                k = _FORMAT
            out[k] = _mark_nullable(v)
        return out
    if isinstance(node, list):
        return [_mark_nullable(v) for v in node]
    return node


def _quote(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str) else str(value)


def _kind_markers(crd: dict[str, Any], entry: dict[str, Any]) -> list[str]:
    """The kind markers that give back this CRD's names, subresources and columns."""
    names = crd["spec"]["names"]
    lines = ["# +kubebuilder:object:root=true"]
    resource = []
    if names.get("shortNames"):
        resource.append("shortName=" + ";".join(names["shortNames"]))
    if names.get("categories"):
        resource.append("categories=" + ";".join(names["categories"]))
    if names.get("singular") and names["singular"] != names["kind"].lower():
        resource.append(f"singular={names['singular']}")
    if resource:
        lines.append("# +kubebuilder:resource:" + ",".join(resource))
    subresources = entry.get("subresources") or {}
    if "status" in subresources:
        lines.append("# +kubebuilder:subresource:status")
    scale = subresources.get("scale")
    if scale:
        args = f"specpath={scale['specReplicasPath']},statuspath={scale['statusReplicasPath']}"
        if scale.get("labelSelectorPath"):
            args += f",selectorpath={scale['labelSelectorPath']}"
        lines.append(f"# +kubebuilder:subresource:scale:{args}")
    for column in entry.get("additionalPrinterColumns") or []:
        args = [f"name={_quote(column['name'])}", f"type={_quote(column['type'])}",
                f"JSONPath={_quote(column['jsonPath'])}"]  # fmt: skip
        args += [
            f"{key}={_quote(column[key])}" for key in ("description", "format", "priority") if key in column
        ]
        lines.append("# +kubebuilder:printcolumn:" + ",".join(args))
    if len(crd["spec"].get("versions") or []) > 1 and entry.get("storage"):
        lines.append("# +kubebuilder:storageversion")
    if entry.get("served") is False:
        lines.append("# +kubebuilder:unservedversion")
    if entry.get("deprecated"):
        warning = entry.get("deprecationWarning")
        lines.append("# +kubebuilder:deprecatedversion" + (f":warning={_quote(warning)}" if warning else ""))
    return lines


def _as_custom_resource(
    code: str, markers: list[str], kind: str, *, group: str, version: str, plural: str, namespaced: bool
) -> str:
    """Make the root class a CustomResource with gvk/plural/namespaced, by splicing lines."""
    tree = ast.parse(code)
    root = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == kind), None)
    if root is None:
        raise GenerateError(f"datamodel-code-generator produced no class {kind}")
    lines = code.splitlines()
    header = root.lineno - 1
    lines[header] = f"class {kind}(CustomResource):"
    first = root.body[0]
    has_doc = isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant)
    insert_at = first.end_lineno if has_doc else header + 1
    attrs = [
        "",
        f"    gvk = GroupVersionKind({group!r}, {version!r}, {kind!r})",
        f"    plural = {plural!r}",
        f"    namespaced = {namespaced}",
    ]
    if not has_doc:
        attrs = [*attrs[1:], ""]
    lines[insert_at:insert_at] = attrs
    lines[header:header] = markers
    text = "\n".join(lines) + "\n"
    old_import = "from pyscaffold_op.apimachinery import KubeModel"
    new_import = "from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel"
    if old_import not in text:
        raise GenerateError("unexpected datamodel-code-generator output: no KubeModel import")
    header_comment = f"# Generated by `pyop generate models` from the {plural}.{group} CRD ({version}).\n"
    body = text.replace(old_import, new_import, 1)
    body = "\n".join(line for line in body.splitlines() if not line.startswith("#   filename:"))
    body = body.replace("# generated by datamodel-codegen:\n", "", 1)
    return header_comment + body.lstrip("\n") + "\n"
