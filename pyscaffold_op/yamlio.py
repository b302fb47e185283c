"""The one YAML writer: every YAML file pyop writes goes through this module, quoted so Go reads it back.

Kubernetes tools read YAML with Go's sigs.k8s.io/yaml (go-yaml v2: YAML 1.1's plain scalars, plus `y`,
`n`, `0o17`, `1e3`, ...); Python tools with PyYAML (YAML 1.1) or ruamel.yaml (YAML 1.2). A string is
written plain only when all three read that plain scalar back as the same string (`plain_is_string`);
otherwise it is quoted. Everything else is layout:

- `dump_documents`: controller-gen's layout (`---` first, 2-space indent, block style, sorted keys,
  `|-` blocks, double quotes as Go's encoder writes them) for CRDs, RBAC, webhook manifests; a Python
  emitter writes libyaml's bytes for the subset a CRD uses, libyaml the rest;
- `dump`: any block or flow document through PyYAML's libyaml emitter with the Go-safe resolver (Helm's
  values.yaml, the answers file through `to_nice_yaml`, kubeconfigs);
- `dump_project`: PROJECT's layout (ruamel.yaml's, keys in their order; ruamel itself writes the rare
  PROJECT where the two emitters differ, with the same strings quoted);
- `scalar` and `yaml_str`: one scalar on one line (Helm templates, jinja templates' `| yaml_str`).

A file is rewritten only when its content changes (`write_if_changed`).
"""

from __future__ import annotations

import functools
import json
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

_STR = "tag:yaml.org,2002:str"
_RESOLVER = yaml.resolver.Resolver()  # PyYAML's YAML 1.1 rules
_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`")

# YAML 1.2's core schema (ruamel.yaml's safe loader; `pyscaffold_op.yaml12` reads PROJECT with it):
# (tag, pattern, first characters)
YAML12_IMPLICIT = (
    ("bool", r"true|True|TRUE|false|False|FALSE", "tTfF"),
    (
        "float",
        r"[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+"
        r"|[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)"
        r"|\.(?:nan|NaN|NAN)",
        "-+0123456789.",
    ),
    ("int", r"[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+", "-+0123456789"),
    ("merge", r"<<", "<"),
    ("null", r"~|null|Null|NULL|", ["~", "n", "N", ""]),
    (
        "timestamp",
        r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
        r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?"
        r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?",
        "0123456789",
    ),
)
_YAML12 = [(re.compile(pattern), tuple(first)) for _tag, pattern, first in YAML12_IMPLICIT]


def _yaml12_reads_string(value: str) -> bool:
    """As PyYAML's resolver applies `YAML12_IMPLICIT` (`yaml12.Loader`): by first character, then pattern."""
    return not any(value[:1] in first and pattern.fullmatch(value) for pattern, first in _YAML12)


# Go's YAML (go-yaml v2's resolve.go, which sigs.k8s.io/yaml and so kubectl, Helm and kubebuilder use;
# v3 reads timestamps as time): the words of its table, in any case (v2 knows three spellings of each,
# other YAML readers others: quoting more costs nothing), then what strconv parses after a digit, a
# sign or a dot (underscores dropped first), then `2006-1-2` timestamps with an optional time.
_GO_WORDS = frozenset(
    ["y", "yes", "n", "no", "true", "false", "on", "off", "~", "null", "<<", "="]
    + [sign + word for sign in ("", "+", "-") for word in (".inf", ".nan")]
)
_GO_NUMBER = re.compile(
    r"[-+]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+"
    r"|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)"
)
_GO_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?", re.DOTALL)


def _go_reads_string(value: str) -> bool:
    if value.lower() in _GO_WORDS:
        return False
    if value[0] in "0123456789+-.":
        return _GO_NUMBER.fullmatch(value.replace("_", "")) is None and _GO_TIMESTAMP.fullmatch(value) is None
    return True


@functools.lru_cache(maxsize=8192)
def plain_is_string(value: str) -> bool:
    """Whether `value` written as a plain scalar reads back as this very string in Go's YAML
    (sigs.k8s.io/yaml), YAML 1.1 (PyYAML) and YAML 1.2 (ruamel.yaml): the union of their rules for
    booleans, nulls, numbers and timestamps (not the syntax of plain scalars: see `needs_quotes`)."""
    if not value:
        return False
    return (
        _go_reads_string(value)
        and _yaml12_reads_string(value)
        and _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)) == _STR
    )


def needs_quotes(value: str) -> bool:
    """Whether a one-line string cannot be written plain (conservative: quote when in doubt)."""
    if not value or value != value.strip() or value[0] in _INDICATORS:
        return True
    if ": " in value or " #" in value or value.endswith(":") or "\t" in value:
        return True
    if not value.isprintable():
        return True
    return not plain_is_string(value)


class Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """PyYAML's safe dumper (libyaml's emitter when built: 5x faster) that writes a string plain only
    when `plain_is_string`, and never writes `&anchors` for shared nodes."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        tag: str = super().resolve(kind, value, implicit)
        if kind is yaml.ScalarNode and implicit[0] and tag == _STR and not plain_is_string(value):
            return "tag:yaml.org,2002:go-reads-otherwise"  # not str: the emitter quotes the string
        return tag


def dump(
    data: Any,
    *,
    sort_keys: bool = True,
    indent: int = 2,
    width: float = 1 << 30,
    flow: bool = False,
) -> str:
    """`data` written by libyaml, strings quoted where Go, YAML 1.1 or YAML 1.2 would read otherwise."""
    return str(
        yaml.dump(
            data,
            Dumper=Dumper,
            default_flow_style=flow,
            sort_keys=sort_keys,
            indent=indent,
            width=width,
            allow_unicode=True,
        )
    )


def to_nice_yaml(value: Any, indent: int = 4) -> str:
    """jinja2-ansible-filters' `to_nice_yaml` (the filter copier gives templates: block style, sorted
    keys, width 80), with Go-safe quoting. Registered for templates/init by `YamlFilters`."""
    return dump(value, indent=indent, width=80)


# Where ruamel's emitter and libyaml's write PROJECT the same text (tests hold it): ruamel moves a
# plain scalar past the line width to the next line and double-quotes strings holding `'` or a break.
_SAME_MAX_LEN = 50


def _same_in_both(data: Any) -> bool:
    if isinstance(data, str):
        return len(data) <= _SAME_MAX_LEN and "'" not in data and data.isprintable()
    if isinstance(data, dict):
        return all(_same_in_both(k) and _same_in_both(v) for k, v in data.items())
    if isinstance(data, list):
        return all(_same_in_both(item) for item in data)
    return isinstance(data, bool | int | float) or data is None


def _ruamel_quoted(data: Any) -> Any:
    """`data` with every string `plain_is_string` rejects marked for ruamel to single-quote."""
    from ruamel.yaml.scalarstring import SingleQuotedScalarString

    if isinstance(data, str):
        return data if not data or plain_is_string(data) else SingleQuotedScalarString(data)
    if isinstance(data, dict):
        return {_ruamel_quoted(k): _ruamel_quoted(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_ruamel_quoted(item) for item in data]
    return data


def dump_project(data: Any) -> str:
    """PROJECT's layout: ruamel.yaml's with 2-space mappings and sequences at their key's column, keys
    in their order, written by libyaml where ruamel writes the same text (~10x faster)."""
    if not _same_in_both(data):
        import io

        from ruamel.yaml import YAML

        ruamel = YAML()
        ruamel.indent(mapping=2, sequence=2, offset=0)
        out = io.StringIO()
        ruamel.dump(_ruamel_quoted(data), out)
        return out.getvalue()
    return dump(data, sort_keys=False, width=80)


def scalar(value: Any) -> str:
    """A scalar on one line as libyaml writes it in flow style: plain when Go, YAML 1.1 and 1.2 read
    it back as it is, else quoted (a string with a line break as JSON, a YAML double-quoted scalar)."""
    if isinstance(value, str) and ("\n" in value or "\r" in value):
        return json.dumps(value, ensure_ascii=False)
    text = dump(value, flow=True).removesuffix("\n").removesuffix("\n...")
    if "\n" in text:  # a quoted string broken over lines
        text = json.dumps(value, ensure_ascii=False)
    return text


def yaml_str(value: Any) -> str:
    """The jinja filter for a value interpolated into a YAML template: `name: {{ name | yaml_str }}`."""
    return scalar(value)


def _jinja_extension() -> type:
    from jinja2.ext import Extension

    class YamlFilters(Extension):
        """`yaml_str` and a Go-safe `to_nice_yaml` for templates (copier: `_jinja_extensions`)."""

        def __init__(self, environment: Any) -> None:
            super().__init__(environment)
            environment.filters["yaml_str"] = yaml_str
            environment.filters["to_nice_yaml"] = to_nice_yaml

    return YamlFilters


def __getattr__(name: str) -> Any:
    # jinja2 is imported only by the template renderers: `YamlFilters` is made on first use
    if name == "YamlFilters":
        cls = _jinja_extension()
        cls.__module__ = __name__
        cls.__qualname__ = name
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.lru_cache(maxsize=4096)
def _style(value: str) -> str | None:
    """How `value` is written; cached, since a CRD repeats its keys and types in every node."""
    if (
        "\n" in value
        and value.isprintable() is False
        and all(line == line.rstrip() and line.isprintable() for line in value.split("\n"))
    ):
        return "|"
    return '"' if needs_quotes(value) else None


class _ManifestDumper(Dumper):
    """libyaml writing controller-gen's layout: `_style`'s choices (double quotes, `|` blocks)."""


def _str(dumper: Any, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar(_STR, value, style=_style(value))


_ManifestDumper.add_representer(str, _str)


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
        Dumper=_ManifestDumper,
        default_flow_style=False,
        sort_keys=True,
        width=1 << 30,
        allow_unicode=True,
        indent=2,
    )


# A plain scalar no schema holds: a shared subtree's place in the dumped text (see `is_shared`).
_TOKEN = f"pyop-shared-{secrets.token_hex(8)}-"
_TOKEN_LINE = re.compile(rf"^([ -]*)([^ -].*): ({re.escape(_TOKEN)}\d+)$", re.MULTILINE)
_TEXTS: dict[int, str] = {}  # id of a shared subtree -> its text at column 0
_FRAGMENTS: dict[tuple[int, int], str] = {}  # (id of a shared subtree, column of its key) -> its text


def _cut(node: Any, found: list[dict[str, Any]], is_shared: Callable[[Any], bool]) -> Any:
    """`node` with every shared, non-empty mapping value replaced by a token (copies on the way)."""
    if isinstance(node, dict):
        out = None
        for key, value in node.items():
            if value and isinstance(value, dict) and is_shared(value):
                new: Any = f"{_TOKEN}{len(found)}"
                found.append(value)
            else:
                new = _cut(value, found, is_shared)
            if new is not value:
                out = out if out is not None else dict(node)
                out[key] = new
        return node if out is None else out
    if isinstance(node, list):
        items = [_cut(item, found, is_shared) for item in node]
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


def _dump_document(doc: dict[str, Any], is_shared: Callable[[Any], bool] | None) -> str:
    if is_shared is None:
        return _dump(doc)
    found: list[dict[str, Any]] = []
    cut = _cut(doc, found, is_shared)
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


def dump_documents(docs: list[dict[str, Any]], *, is_shared: Callable[[Any], bool] | None = None) -> str:
    """Each document after a `---` line, keys sorted, no line wrapping (controller-gen's layout).

    `is_shared` marks subtrees many documents hold (the generator's `gen.shared`): each is written once
    per indentation and spliced in."""
    return "".join("---\n" + _dump_document(doc, is_shared) for doc in docs)


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
