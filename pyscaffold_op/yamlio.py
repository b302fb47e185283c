"""YAML output formatted like controller-gen: `---` first, 2-space indent, block style, sorted keys.

Multi-line strings are `|-` blocks and strings that need quotes get double quotes (`""` for the core
API group), as Go's YAML encoder writes them. A file is rewritten only when its content changes.
"""

from __future__ import annotations

import functools
import re
import secrets
from pathlib import Path
from typing import Any

import yaml

from pyscaffold_op.gen.shared import is_shared

_Base: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's emitter when available: 5x faster


class _Dumper(_Base):
    def ignore_aliases(self, data: Any) -> bool:
        return True  # never emit &anchors for shared dicts


_STR = "tag:yaml.org,2002:str"
_RESOLVER = yaml.resolver.Resolver()
_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`")


def _needs_quotes(value: str) -> bool:
    """Whether a one-line string cannot be written plain (conservative: quote when in doubt)."""
    if not value or value != value.strip() or value[0] in _INDICATORS:
        return True
    if ": " in value or " #" in value or value.endswith(":") or "\t" in value:
        return True
    if not value.isprintable():
        return True
    # a plain scalar that YAML 1.1 would read as a bool, null, int or float must be quoted
    return _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) != _STR


@functools.lru_cache(maxsize=4096)
def _style(value: str) -> str | None:
    """How `value` is written; cached, since a CRD repeats its keys and types in every node."""
    if (
        "\n" in value
        and value.isprintable() is False
        and all(line == line.rstrip() and line.isprintable() for line in value.split("\n"))
    ):
        return "|"
    return '"' if _needs_quotes(value) else None


def _str(dumper: Any, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar(_STR, value, style=_style(value))


_Dumper.add_representer(str, _str)


class _Unsure(Exception):
    """A value `_emit` does not write the way libyaml would for certain: libyaml writes the document."""


# characters libyaml writes as they are inside double quotes (allow_unicode); others are escaped
_ESCAPES = {'"': '\\"', "\\": "\\\\"}


def _double_quoted(value: str) -> str:
    if not all(ch.isprintable() and ch not in "\x85\u2028\u2029\ufeff" for ch in value):
        raise _Unsure  # control characters, breaks: libyaml's escapes
    return '"' + "".join(_ESCAPES.get(ch, ch) for ch in value) + '"'


@functools.lru_cache(maxsize=4096)
def _plain_or_quoted(value: str) -> str:
    """A one-line string as libyaml writes it with `_style`'s choice (`|` blocks are not one line)."""
    style = _style(value)
    if style == '"':
        return _double_quoted(value)
    if style is None and not value.startswith(("...", "---")):
        return value
    raise _Unsure  # a block scalar, or a plain scalar libyaml would quote with ' itself


def _scalar(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return _plain_or_quoted(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float and value == value and abs(value) != float("inf"):
        text = repr(value)
        if "e" not in text and "E" not in text:
            return text
    raise _Unsure


def _block(value: str, indent: int, out: list[str], head: str) -> None:
    """`head` followed by a literal block scalar, its lines at `indent`."""
    if value[0] in " \n" or value.endswith("\n\n"):
        raise _Unsure  # an indentation indicator or keep chomping
    out.append(head + ("|" if value.endswith("\n") else "|-"))
    pad = " " * indent
    out.extend(pad + line if line else "" for line in value.removesuffix("\n").split("\n"))


def _value(value: Any, indent: int, out: list[str], head: str, *, in_mapping: bool) -> None:
    """`value` after `head` (`key:` or `- `); nested blocks indent from `indent`, the column of the key
    or of the dash (a list below a key is not indented, as libyaml writes it)."""
    sep = " " if in_mapping else ""
    if isinstance(value, dict):
        if not value:
            out.append(head + sep + "{}")
        elif in_mapping:
            out.append(head)
            _mapping(value, indent + 2, out)
        else:
            _mapping(value, indent + 2, out, head)
    elif isinstance(value, list):
        if not value:
            out.append(head + sep + "[]")
        elif in_mapping:
            out.append(head)
            _sequence(value, indent, out)
        else:
            _sequence(value, indent + 2, out, head)
    elif type(value) is str and "\n" in value and _style(value) == "|":
        _block(value, indent + 2, out, head + sep)
    else:
        out.append(head + sep + _scalar(value))


def _mapping(node: dict[str, Any], indent: int, out: list[str], first: str | None = None) -> None:
    pad = " " * indent
    for index, key in enumerate(sorted(node)):
        if type(key) is not str or len(key.encode()) > 128:
            raise _Unsure  # libyaml writes a long key as `? key`
        head = (first if index == 0 and first is not None else pad) + _plain_or_quoted(key) + ":"
        _value(node[key], indent, out, head, in_mapping=True)


def _sequence(node: list[Any], indent: int, out: list[str], first: str | None = None) -> None:
    pad = " " * indent + "- "
    for index, item in enumerate(node):
        _value(item, indent, out, first + "- " if index == 0 and first is not None else pad, in_mapping=False)


def _emit(doc: dict[str, Any]) -> str:
    """The block YAML libyaml writes for `doc` (with `_dump`'s settings), in Python: the subset a
    CRD uses (mappings with string keys, lists, strings, numbers, booleans, null); `_Unsure` for
    anything else. Walking PyYAML's representer costs more than writing the text."""
    out: list[str] = []
    _mapping(doc, 0, out)
    return "\n".join(out) + "\n"


def _dump(doc: Any) -> str:
    if isinstance(doc, dict) and doc:
        try:
            return _emit(doc)
        except _Unsure:
            pass
    return _libyaml_dump(doc)


def _libyaml_dump(doc: Any) -> str:
    return yaml.dump(
        doc,
        Dumper=_Dumper,
        default_flow_style=False,
        sort_keys=True,
        width=1 << 30,
        allow_unicode=True,
        indent=2,
    )


# A plain scalar no schema holds: a shared subtree's place in the dumped text (see gen.shared).
_TOKEN = f"pyop-shared-{secrets.token_hex(8)}-"
_TOKEN_LINE = re.compile(rf"^([ -]*)([^ -].*): ({re.escape(_TOKEN)}\d+)$", re.MULTILINE)
_TEXTS: dict[int, str] = {}  # id of a shared subtree -> its text at column 0
_FRAGMENTS: dict[tuple[int, int], str] = {}  # (id of a shared subtree, column of its key) -> its text


def _cut(node: Any, found: list[dict[str, Any]]) -> Any:
    """`node` with every shared, non-empty mapping value replaced by a token (copies on the way)."""
    if isinstance(node, dict):
        out = None
        for key, value in node.items():
            if value and isinstance(value, dict) and is_shared(value):
                new: Any = f"{_TOKEN}{len(found)}"
                found.append(value)
            else:
                new = _cut(value, found)
            if new is not value:
                out = out if out is not None else dict(node)
                out[key] = new
        return node if out is None else out
    if isinstance(node, list):
        items = [_cut(item, found) for item in node]
        return node if all(a is b for a, b in zip(items, node, strict=True)) else items
    return node


def _fragment(node: dict[str, Any], column: int) -> str:
    """The block mapping `node` as it is written below a key at `column` (indent 2)."""
    key = (id(node), column)
    if key not in _FRAGMENTS:
        if id(node) not in _TEXTS:
            _TEXTS[id(node)] = _dump(node)
        base = _TEXTS[id(node)]
        pad = " " * (column + 2)
        # blank lines (inside a block scalar) stay empty, as the emitter writes them
        _FRAGMENTS[key] = "".join(pad + line if line != "\n" else line for line in base.splitlines(True))
    return _FRAGMENTS[key]


def _dump_document(doc: dict[str, Any]) -> str:
    found: list[dict[str, Any]] = []
    cut = _cut(doc, found)
    if not found:
        return _dump(doc)
    spliced = 0

    def splice(match: re.Match[str]) -> str:
        nonlocal spliced
        prefix, key, token = match.groups()
        spliced += 1
        node = found[int(token[len(_TOKEN) :])]
        return f"{prefix}{key}:\n{_fragment(node, len(prefix))}".removesuffix("\n")

    text = _TOKEN_LINE.sub(splice, _dump(cut))
    # a key the emitter writes in another form (`? key`) leaves its token: dump the whole document
    return text if spliced == len(found) else _dump(doc)


def dump_documents(docs: list[dict[str, Any]]) -> str:
    """Each document after a `---` line, keys sorted, no line wrapping."""
    return "".join("---\n" + _dump_document(doc) for doc in docs)


def write_if_changed(path: Path, text: str, *, check: bool = False) -> bool:
    """Write `text` unless the file already holds it; True when it changed (or would, with check)."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except FileNotFoundError:
        pass
    if not check:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    return True
