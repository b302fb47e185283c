"""CustomResourceDefinitions: validation of the CRD itself, its status, and the resources it serves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from pyscaffold_op import apiextensions
from pyscaffold_op.apimachinery.fielderrors import Cause, cause
from pyscaffold_op.envtest import jsonutil
from pyscaffold_op.envtest.registry.resources import ServedResource

CRD_GROUP = "apiextensions.k8s.io"
# libyaml's parser where PyYAML has it (5x the pure-Python one); the same YAML 1.1 reading either way
_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def crd_causes(crd: dict[str, Any]) -> list[Cause]:
    """apiextensions validation of a CRD: its shape first (what the real server fails to decode), then
    every rule the server checks (names, versions, structural schemas)."""
    shape = _shape_causes(crd.get("spec") or {})
    if shape:
        return shape
    from pyscaffold_op.apiextensions import schemacache

    # the rules read the name and the spec only: a CRD installed before (another environment of this
    # process, the same file) is not checked again
    key = schemacache.digest([(crd.get("metadata") or {}).get("name", ""), crd.get("spec")])
    return list(schemacache.memo("crd_causes", key, lambda: _checked(crd)))


def _checked(crd: dict[str, Any]) -> list[Cause]:
    try:
        return apiextensions.crd_causes(crd)
    except (AttributeError, TypeError):  # an ill-typed schema deep inside: the server cannot decode it
        return [cause("FieldValueInvalid", "spec.versions", "Invalid value: not a valid JSONSchemaProps")]


def _shape_causes(spec: Any) -> list[Cause]:
    """Ill-typed CRD specs (the real server fails to decode them; we answer 422 naming the field)."""

    def bad(field: str, want: str) -> list[Cause]:
        return [cause("FieldValueInvalid", field, f"Invalid value: must be {want}")]

    if not isinstance(spec, dict):
        return bad("spec", "an object")
    for key in ("group", "scope"):
        if key in spec and not isinstance(spec[key], str):
            return bad(f"spec.{key}", "a string")
    names = spec.get("names") or {}
    if not isinstance(names, dict) or not all(
        isinstance(v, str) or (k in ("shortNames", "categories") and isinstance(v, list))
        for k, v in names.items()
    ):
        return bad("spec.names", "an object of strings")
    versions = spec.get("versions") or []
    if not isinstance(versions, list):
        return bad("spec.versions", "a list")
    for i, v in enumerate(versions):
        if not isinstance(v, dict) or not isinstance(v.get("name", ""), str):
            return bad(f"spec.versions[{i}]", "an object with a string name")
        for key in ("schema", "subresources"):
            if key in v and v[key] is not None and not isinstance(v[key], dict):
                return bad(f"spec.versions[{i}].{key}", "an object")
        schema = (v.get("schema") or {}).get("openAPIV3Schema")
        if schema is not None and not isinstance(schema, dict):
            return bad(f"spec.versions[{i}].schema.openAPIV3Schema", "an object")
        cols = v.get("additionalPrinterColumns")
        if cols is not None and not (
            isinstance(cols, list)
            and all(isinstance(c, dict) and isinstance(c.get("jsonPath", ""), str) for c in cols)
        ):
            return bad(f"spec.versions[{i}].additionalPrinterColumns", "a list of columns")
        sel = v.get("selectableFields")
        if sel is not None and not (
            isinstance(sel, list)
            and all(isinstance(c, dict) and isinstance(c.get("jsonPath", ""), str) for c in sel)
        ):
            return bad(f"spec.versions[{i}].selectableFields", "a list of fields")
    return []


def with_status(crd: dict[str, Any]) -> dict[str, Any]:
    """Conditions Established/NamesAccepted true at once: no controllers run, names are accepted."""
    spec = crd.get("spec") or {}
    names = dict(spec.get("names") or {})
    names.setdefault("singular", names.get("kind", "").lower())
    names.setdefault("listKind", names.get("kind", "") + "List")
    ts = (crd.get("metadata") or {}).get("creationTimestamp")
    cond = {"status": "True", "lastTransitionTime": ts}
    crd["status"] = {
        "acceptedNames": names,
        "conditions": [
            {"type": "NamesAccepted", **cond, "reason": "NoConflicts", "message": "no conflicts found"},
            {
                "type": "Established",
                **cond,
                "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted",
            },
        ],
        "storedVersions": [v["name"] for v in spec.get("versions") or [] if v.get("storage")],
    }
    return crd


def resource_infos(crd: dict[str, Any]) -> list[ServedResource]:
    from pyscaffold_op.apiextensions import schemacache

    spec = crd["spec"]
    names = spec["names"]
    conversion = spec.get("conversion") or {}
    out = []
    for v in spec.get("versions") or []:
        if not v.get("served", True):
            continue
        sub = v.get("subresources") or {}
        scale = sub.get("scale")
        out.append(
            ServedResource(
                group=spec["group"],
                version=v["name"],
                kind=names["kind"],
                plural=names["plural"],
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                singular=names.get("singular") or names["kind"].lower(),
                short_names=list(names.get("shortNames") or []),
                categories=list(names.get("categories") or []),
                status="status" in sub,
                scale=scale,
                generation=True,
                custom=True,
                # the process's one instance of this content (apiextensions.schemacache), read-only
                schema=schemacache.canonical((v.get("schema") or {}).get("openAPIV3Schema")),
                printer_columns=v.get("additionalPrinterColumns"),
                field_selectors=tuple(f["jsonPath"].lstrip(".") for f in v.get("selectableFields") or []),
                storage=bool(v.get("storage")),
                list_kind=names.get("listKind") or names["kind"] + "List",
                conversion_webhook=conversion if conversion.get("strategy") == "Webhook" else None,
            )
        )
    return out


class CrdFileError(ValueError):
    """A CRD file cannot be read or is not YAML; the message starts with the file's path."""


def load_crd_files(paths: list[str | Path]) -> list[dict[str, Any]]:
    """Every CustomResourceDefinition document in the given files or folders (*.yaml, *.yml, *.json),
    fresh objects the caller may keep and change. Raises `CrdFileError` naming the file (and line)
    that cannot be read or parsed. A file read before with the same content is not parsed again."""
    docs: list[dict[str, Any]] = []
    for p in paths:
        path = Path(p)
        files = (
            sorted(f for ext in ("*.yaml", "*.yml", "*.json") for f in path.rglob(ext))
            if path.is_dir()
            else [path]
        )
        for f in files:
            try:
                raw = f.read_bytes()
            except OSError as err:
                raise CrdFileError(f"{f}: cannot be read: {err.strerror or err}") from None
            docs.extend(jsonutil.loads(_parsed(f, raw)))
    return docs


_PARSED: dict[bytes, bytes] = {}  # a file's content digest -> its CRD documents as JSON
_PARSED_MAX = 64


def _parsed(f: Path, raw: bytes) -> bytes:
    """The CRD documents of a file's bytes, as JSON (decoded per call: every caller gets its own)."""
    import hashlib

    key = hashlib.blake2b(raw, digest_size=20).digest()
    found = _PARSED.get(key)
    if found is not None:
        return found
    try:
        text = raw.decode()
        found_docs = list(yaml.load_all(text, Loader=_LOADER))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise CrdFileError(f"{f}: not valid YAML: {problem}{where}") from None
    except UnicodeDecodeError as err:
        raise CrdFileError(f"{f}: cannot be read: {err}") from None
    crds = [d for d in found_docs if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"]
    try:
        found = jsonutil.dumps(crds)
    except TypeError:  # a YAML timestamp or binary value: not JSON, so not cached (the server refuses it)
        return jsonutil.dumps(json.loads(json.dumps(crds, default=str)))
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[key] = found
    return found
