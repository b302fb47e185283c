"""Field paths a CRD names that its schema does not have: printer columns, `+listMapKey`, and
`self.x` in CEL rules (a lint of `make manifests`, docs/markers.md "Paths that name no field").

The trap it catches: a Python field `create_fn` is `createFn` on the wire, so a printer column
`.status.create_fn` shows nothing, and a rule `self.create_fn > 0` is refused by kube-apiserver
("undefined field 'create_fn'"). kube-apiserver accepts a printer column on a missing path (the
column is empty) and controller-gen checks none of these, so pyop reports only what is certainly a
mistake: a step into an object whose schema lists its properties and allows no others. Under
`x-kubernetes-preserve-unknown-fields`, `additionalProperties`, an int-or-string, or a JSONPath beyond
simple steps and `[...]` indexes, it says nothing. For CEL, kube-apiserver is stricter than for
columns (it refuses an undeclared field even where unknown fields are preserved), and so is this.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import Any

from pydantic.alias_generators import to_camel

from pyscaffold_op.apiextensions.shared import is_shared
from pyscaffold_op.apimachinery.objectmeta import OBJECT_META_FIELDS

Schema = dict[str, Any]

_COLUMN_PATH = re.compile(r"^(?:\.[A-Za-z_$][\w$-]*(?:\[[^\]\[]*\])?)+$")
_STEP = re.compile(r"\.([A-Za-z_$][\w$-]*)(\[[^\]\[]*\])?")
_STRINGS = re.compile(r"""'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*\"""", re.S)
_SELF_CHAIN = re.compile(r"(?<![\w.])(self|oldSelf)((?:\.[A-Za-z_][A-Za-z0-9_]*)+)(\s*\()?")
_ROOT_FIELDS = ("apiVersion", "kind", "metadata")


def column_problem(schema: Schema, json_path: str) -> str | None:
    """Why a printer column's JSONPath certainly names no field of `schema` (None: it may)."""
    if not _COLUMN_PATH.match(json_path):
        return None  # filters, recursive descent, escapes: not judged
    steps = [(m.group(1), m.group(2)) for m in _STEP.finditer(json_path)]
    if steps and steps[0][0] == "metadata":
        if len(steps) > 1 and steps[1][0] not in OBJECT_META_FIELDS:
            return _missing(".metadata", steps[1][0], sorted(OBJECT_META_FIELDS))
        return None
    node: Any = schema
    walked = ""
    for name, index in steps:
        found = _step(node, name, walked, root=not walked)
        if isinstance(found, str):
            return found
        if found is None:
            return None
        node, walked = found, f"{walked}.{name}"
        if index is not None:
            if not isinstance(node, dict) or node.get("type") != "array":
                return None
            node = node.get("items")
    return None


def rule_problems(schema: Schema, rule: str, *, root: bool = False) -> Iterator[str]:
    """Why `self.a.b` (or `oldSelf.a.b`) in a CEL rule on `schema` names a field kube-apiserver
    will not find ("undefined field"), one line per chain."""
    code = _STRINGS.sub('""', rule)
    for match in _SELF_CHAIN.finditer(code):
        names = match.group(2)[1:].split(".")
        if match.group(3):  # the last name is a method call: self.x.size()
            names = names[:-1]
        node: Any = schema
        walked = match.group(1)
        for i, name in enumerate(names):
            if "__" in name:
                break  # an escaped property name (__dash__, __in__...): not judged
            if root and i == 0 and name in _ROOT_FIELDS:
                break
            found = _step(node, name, walked, cel=True)
            if isinstance(found, str):
                yield found
                break
            if found is None:
                break
            node, walked = found, f"{walked}.{name}"


def _step(node: Any, name: str, walked: str, *, root: bool = False, cel: bool = False) -> Schema | str | None:
    """The schema of `name` inside `node`; a message when it certainly is not there; None when it
    cannot be told (unknown fields kept, a map, no schema)."""
    if not isinstance(node, dict) or node.get("x-kubernetes-int-or-string"):
        return None
    typ = node.get("type")
    where = walked or "the object"
    if typ in ("string", "integer", "number", "boolean"):
        article = "an" if typ == "integer" else "a"
        return f"{where} is {article} {typ}: it has no field {name!r}"
    if typ not in ("object", None) or node.get("additionalProperties") not in (None, False):
        return None
    props: dict[str, Any] = node.get("properties") or {}
    if name in props:
        sub = props[name]
        return sub if isinstance(sub, dict) else None
    if root and name in _ROOT_FIELDS:
        return None
    if node.get("x-kubernetes-embedded-resource") and name in _ROOT_FIELDS:
        return None
    if not cel and (node.get("x-kubernetes-preserve-unknown-fields") or typ is None):
        return None  # unknown fields are kept: the column may find one
    if not props and not cel:
        return None
    return _missing(where, name, sorted(props))


def _missing(where: str, name: str, have: list[str]) -> str:
    hint = ""
    camel = to_camel(name)
    if camel != name and camel in have:
        hint = f"; did you mean {camel!r}? (fields are camelCase on the wire: Python's {name} is {camel})"
    else:
        close = difflib.get_close_matches(name, have, n=1)
        if close:
            hint = f"; did you mean {close[0]!r}?"
    fields = f"its fields: {', '.join(have)}" if have else "it declares no fields"
    return f"{where} has no field {name!r} ({fields}){hint}"


def list_key_problems(schema: Schema) -> list[str]:
    """Every `+listMapKey` (x-kubernetes-list-map-keys) of a CRD version's schema that names no
    property of the list's items, with its place in the schema (`spec.items`). kube-apiserver refuses
    them too ("entries must all be names of item properties"); this says which and suggests."""
    out: list[str] = []
    _walk(schema, "", out, rules=False)
    return out


def cel_problems(schema: Schema) -> list[str]:
    """Every CEL rule of a CRD version's schema whose `self.x` names a field the schema does not have
    (kube-apiserver: "undefined field"; pyop's CEL compiler does not type fields, so this lint does)."""
    out: list[str] = []
    _walk(schema, "", out, rules=True, root=True)
    return out


def _walk(node: Any, path: str, out: list[str], *, rules: bool, root: bool = False) -> None:
    if not isinstance(node, dict) or is_shared(node):
        return  # a built-in type's schema (shared, from the Kubernetes spec) names only its own fields
    here = path or "the object"
    items = node.get("items")
    if rules:
        for index, rule in enumerate(node.get("x-kubernetes-validations") or []):
            text = rule.get("rule") if isinstance(rule, dict) else None
            if isinstance(text, str):
                for problem in rule_problems(node, text, root=root):
                    out.append(f"{here}: rule [{index}] `{text}`: {problem}")
    elif isinstance(items, dict) and items.get("type") == "object":
        have = sorted(items.get("properties") or {})
        for key in node.get("x-kubernetes-list-map-keys") or []:
            if key not in have:
                out.append(f"{here}: +listMapKey={key}: " + _missing("the list's items", key, have))
    for name, sub in (node.get("properties") or {}).items():
        _walk(sub, f"{path}.{name}" if path else name, out, rules=rules)
    if isinstance(items, dict):
        _walk(items, f"{path}[]", out, rules=rules)
    if isinstance(node.get("additionalProperties"), dict):
        _walk(node["additionalProperties"], f"{path}[*]", out, rules=rules)
