"""Descriptions for the generated models, as docstrings that cost nothing at import.

The text is the real kube-apiserver's: the component schemas of the `/openapi/v3` documents captured
by `openapi_capture.py` (`envtest/server/_openapi.json.xz`), the same Go doc comments
kubernetes-validate ships, plus the server's "Possible enum values" lists (the models drop enums).

Each class gets a class docstring (kept in `__doc__`: `help()` shows it) and each field an attribute
docstring, the string literal right after it. CPython drops a bare string statement at compile time,
so a field's docstring is not in the `.pyc` at all; IDEs (pyright/pylance hover) and documentation
tools (griffe, Sphinx) read it from the source. pydantic would read them only with
`use_attribute_docstrings`, which `models/_base.py` keeps off (it reads the module's source).
"""

from __future__ import annotations

import ast
import json
import lzma
import textwrap
from pathlib import Path
from typing import Any

from pydantic.alias_generators import to_camel

CAPTURE = Path(__file__).resolve().parents[1] / "envtest" / "server" / "_openapi.json.xz"
WIDTH = 100  # docstring lines are wrapped to this many columns, indentation included
CLASS = ""  # the key of a definition's own description in `Descriptions`

Descriptions = dict[str, dict[str, str]]
"""Definition name (`io.k8s.api.core.v1.Pod`) -> {"": its description, property: description}."""


def load(capture: Path = CAPTURE) -> Descriptions:
    """Every component schema's descriptions from the captured `/openapi/v3` documents."""
    documents = json.loads(lzma.decompress(capture.read_bytes()))["v3"]
    out: Descriptions = {}
    for document in documents.values():
        for name, schema in ((document.get("components") or {}).get("schemas") or {}).items():
            if name not in out:
                out[name] = of_schema(schema)
    return out


def of_schema(schema: dict[str, Any]) -> dict[str, str]:
    found = {CLASS: schema["description"]} if schema.get("description") else {}
    for prop, sub in (schema.get("properties") or {}).items():
        if sub.get("description"):
            found[prop] = sub["description"]
    return found


def docstring(text: str, indent: str) -> str:
    """`text` as a docstring at `indent`: lines wrapped to WIDTH, paragraphs and list indents kept."""
    text = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if text.endswith('"'):
        text = text[:-1] + '\\"'
    lines: list[str] = []
    for line in text.split("\n"):
        lead = line[: len(line) - len(line.lstrip())]
        wrapped = textwrap.wrap(
            line,
            WIDTH - len(indent) - 3,  # room for the opening quotes
            subsequent_indent=lead + "  " if line.lstrip().startswith(("- ", "* ")) else lead,
            break_long_words=False,
            break_on_hyphens=False,
        )
        lines.extend(wrapped or [""])
    if len(lines) == 1 and len(indent) + len(lines[0]) + 6 <= WIDTH:
        return f'{indent}"""{lines[0]}"""\n'
    rest = "".join(f"{indent}{line}\n" if line else "\n" for line in lines[1:])
    return f'{indent}"""{lines[0]}\n{rest}{indent}"""\n'


def wire_name(stmt: ast.AnnAssign) -> str | None:
    """The JSON name of a field: its `Field(alias=...)`, else its camelCase (KubeModel's aliases)."""
    if not isinstance(stmt.target, ast.Name):
        return None
    for node in ast.walk(stmt.annotation):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Field":
            for kw in node.keywords:
                if kw.arg == "alias" and isinstance(kw.value, ast.Constant):
                    return str(kw.value.value)
    return to_camel(stmt.target.id)


def add_docstrings(text: str, docs_of_class: dict[str, dict[str, str]]) -> str:
    """Insert the class and field docstrings into a generated module's source.

    `docs_of_class`: class name -> its definition's descriptions. Lines are inserted bottom-up, so the
    line numbers of the parse stay valid; the text is otherwise untouched."""
    lines = text.splitlines(keepends=True)
    inserts: list[tuple[int, str]] = []  # (insert before this 0-based line, docstring)
    for node in ast.parse(text).body:
        if not isinstance(node, ast.ClassDef) or node.name not in docs_of_class:
            continue
        docs = docs_of_class[node.name]
        indent = " " * node.body[0].col_offset
        if CLASS in docs and not ast.get_docstring(node):
            inserts.append((node.body[0].lineno - 1, docstring(docs[CLASS], indent)))
        for stmt in node.body:
            name = wire_name(stmt) if isinstance(stmt, ast.AnnAssign) else None
            if name in docs and stmt.end_lineno is not None:
                inserts.append((stmt.end_lineno, docstring(docs[name], indent)))
    for at, doc in sorted(inserts, key=lambda i: i[0], reverse=True):
        lines.insert(at, doc)
    return "".join(lines)
