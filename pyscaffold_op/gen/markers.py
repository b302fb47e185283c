"""`# +marker` comments, read with `tokenize` and parsed with controller-gen's names and argument syntax.

Syntax (as controller-gen): `+name` (a flag), `+name=value` or `+name:=value` (one anonymous value) or
`+name:key=value,key2=value2` (named arguments). Values are `"double-quoted"` (Go/JSON escapes),
`` `raw` `` strings, `{a,b}` or `a;b` lists, `{key: value}` maps, JSON literals or bare words.

Kind markers are the comment lines directly above a `class` statement (or its decorators); field
markers are the comment lines directly above a field. Other comments in the block are ignored.
"""

from __future__ import annotations

import ast
import bisect
import inspect
import io
import json
import tokenize
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from pyscaffold_op.errors import GenerateError

# Argument kinds: how a raw value is converted.
# LIST is a list of strings (names, verbs); VALUES a list of typed values (enum members).
FLAG, STR, INT, NUM, BOOL, LIST, VALUES, ANY = "flag", "str", "int", "number", "bool", "list", "values", "any"
# JSON only (the `+default=` marker of Kubernetes' declarative markers); `ref(...)` values are ignored
JSON = "json"


@dataclass(frozen=True)
class MarkerSpec:
    """One marker: how it is written and, for schema markers, what it does to the field's schema."""

    value: str | None = None
    """The kind of its anonymous value (`+name=value`), None when it takes named arguments."""
    args: dict[str, tuple[str, bool]] = field(default_factory=dict)
    """Named arguments: {argument: (kind, required)}."""
    keyword: str | None = None
    """The schema keyword its value sets (`+kubebuilder:validation:Minimum=1` -> `minimum: 1`)."""
    sets: tuple[str, Any] | None = None
    """The schema keyword and constant a flag sets (`+nullable` -> `nullable: true`)."""
    items: bool = False
    """Also usable as `+kubebuilder:validation:items:<Name>`, applied to a list's items."""


def _spec(value: str | None = None, **kw: Any) -> MarkerSpec:
    return MarkerSpec(value, **kw)


_V = "kubebuilder:validation:"
# The one registry: adding a marker is one entry here (and, for a new kind of effect, code in gen.schema).
SPECS: dict[str, MarkerSpec] = {
    # kind (type) markers
    "kubebuilder:object:root": _spec(BOOL),
    "kubebuilder:object:generate": _spec(BOOL),
    "kubebuilder:subresource:status": _spec(FLAG),
    "kubebuilder:subresource:scale": _spec(
        args={"specpath": (STR, True), "statuspath": (STR, True), "selectorpath": (STR, False)}
    ),
    "kubebuilder:resource": _spec(
        args={
            "path": (STR, False),
            "scope": (STR, False),
            "shortName": (LIST, False),
            "categories": (LIST, False),
            "singular": (STR, False),
        }
    ),
    "kubebuilder:printcolumn": _spec(
        args={
            "name": (STR, True),
            "type": (STR, True),
            "JSONPath": (STR, True),
            "description": (STR, False),
            "format": (STR, False),
            "priority": (INT, False),
        }
    ),
    "kubebuilder:storageversion": _spec(FLAG),
    "kubebuilder:unservedversion": _spec(FLAG),
    "kubebuilder:skipversion": _spec(FLAG),
    "kubebuilder:deprecatedversion": _spec(args={"warning": (STR, False)}),
    "kubebuilder:metadata": _spec(args={"annotations": (LIST, False), "labels": (LIST, False)}),
    "kubebuilder:selectablefield": _spec(args={"JSONPath": (STR, True)}),
    # field (and type-level) validation markers
    _V + "Minimum": _spec(NUM, keyword="minimum", items=True),
    _V + "Maximum": _spec(NUM, keyword="maximum", items=True),
    _V + "ExclusiveMinimum": _spec(BOOL, keyword="exclusiveMinimum", items=True),
    _V + "ExclusiveMaximum": _spec(BOOL, keyword="exclusiveMaximum", items=True),
    _V + "MultipleOf": _spec(NUM, keyword="multipleOf", items=True),
    _V + "MinLength": _spec(INT, keyword="minLength", items=True),
    _V + "MaxLength": _spec(INT, keyword="maxLength", items=True),
    _V + "MinItems": _spec(INT, keyword="minItems", items=True),
    _V + "MaxItems": _spec(INT, keyword="maxItems", items=True),
    _V + "MinProperties": _spec(INT, keyword="minProperties", items=True),
    _V + "MaxProperties": _spec(INT, keyword="maxProperties", items=True),
    _V + "UniqueItems": _spec(BOOL, items=True),
    _V + "Pattern": _spec(STR, keyword="pattern", items=True),
    _V + "Enum": _spec(VALUES, keyword="enum", items=True),
    _V + "Format": _spec(STR, keyword="format", items=True),
    _V + "Type": _spec(STR, keyword="type", items=True),
    _V + "Optional": _spec(FLAG),
    _V + "Required": _spec(FLAG),
    _V + "Nullable": _spec(FLAG, sets=("nullable", True)),
    _V + "EmbeddedResource": _spec(FLAG, sets=("x-kubernetes-embedded-resource", True), items=True),
    _V + "XIntOrString": _spec(FLAG, sets=("x-kubernetes-int-or-string", True), items=True),
    _V + "Schemaless": _spec(FLAG),
    _V + "XValidation": _spec(
        args={
            "rule": (STR, True),
            "message": (STR, False),
            "messageExpression": (STR, False),
            "reason": (STR, False),
            "fieldPath": (STR, False),
            "optionalOldSelf": (BOOL, False),
        },
        items=True,
    ),
    "kubebuilder:pruning:PreserveUnknownFields": _spec(
        FLAG, sets=("x-kubernetes-preserve-unknown-fields", True)
    ),
    "kubebuilder:default": _spec(ANY, keyword="default"),
    "kubebuilder:example": _spec(ANY, keyword="example"),
    "optional": _spec(FLAG),
    "required": _spec(FLAG),
    "nullable": _spec(FLAG, sets=("nullable", True)),
    "listType": _spec(STR, keyword="x-kubernetes-list-type"),
    "listMapKey": _spec(STR),
    "mapType": _spec(STR, keyword="x-kubernetes-map-type"),
    "structType": _spec(STR, keyword="x-kubernetes-map-type"),
    # markers of the kubebuilder book and Kubernetes' declarative validation (controller-gen >= 0.18)
    "default": _spec(JSON, keyword="default"),
    "k8s:required": _spec(FLAG),
    "k8s:optional": _spec(FLAG),
    "k8s:immutable": _spec(FLAG),
    "kubebuilder:title": _spec(ANY, keyword="title"),
    "kubebuilder:externalDocs": _spec(args={"url": (STR, False), "description": (STR, False)}),
    _V + "AtMostOneOf": _spec(LIST),
    _V + "ExactlyOneOf": _spec(LIST),
    _V + "AtLeastOneOf": _spec(LIST),
    _V + "XPreserveUnknownFields": _spec(
        FLAG, sets=("x-kubernetes-preserve-unknown-fields", True), items=True
    ),
    _V + "XEmbeddedResource": _spec(FLAG, sets=("x-kubernetes-embedded-resource", True), items=True),
    # package-level: `# +kubebuilder:skip` in a version package's __init__.py or groupversion_info.py
    "kubebuilder:skip": _spec(FLAG),
    # applyconfiguration-gen's marker, written by kubebuilder's scaffold: accepted, no CRD effect
    "kubebuilder:ac:generate": _spec(BOOL),
    # RBAC (controllers package)
    "kubebuilder:rbac": _spec(
        args={
            "groups": (LIST, False),
            "resources": (LIST, False),
            "resourceNames": (LIST, False),
            "verbs": (LIST, True),
            "urls": (LIST, False),
            "namespace": (STR, False),
            "roleName": (STR, False),
        }
    ),
    # admission webhooks (webhooks package), controller-gen's webhook.Config
    "kubebuilder:webhook": _spec(
        args={
            "path": (STR, False),
            "url": (STR, False),
            "mutating": (BOOL, True),
            "failurePolicy": (STR, False),
            "matchPolicy": (STR, False),
            "sideEffects": (STR, False),
            "timeoutSeconds": (INT, False),
            "groups": (LIST, True),
            "resources": (LIST, True),
            "verbs": (LIST, True),
            "versions": (LIST, True),
            "name": (STR, True),
            "admissionReviewVersions": (LIST, True),
            "webhookVersions": (LIST, False),
            "reinvocationPolicy": (STR, False),
        }
    ),
}
ITEMS_PREFIX = _V + "items:"
SPECS.update({ITEMS_PREFIX + n[len(_V) :]: spec for n, spec in list(SPECS.items()) if spec.items})
# Markers of other tools that may share a file (scaffold insertion points): never errors.
_FOREIGN = ("kubebuilder:scaffold", "pyop:", "groupName", "k8s:", "genclient")


@dataclass(frozen=True)
class Marker:
    """One parsed marker: its name, its value (anonymous) or arguments, and where it was written."""

    name: str
    value: Any = None
    args: dict[str, Any] = field(default_factory=dict)
    where: str = ""

    def get(self, key: str, default: Any = None) -> Any:
        return self.args.get(key, default)


@dataclass
class ClassMarkers:
    """The markers of one class: above the class (`kind`) and above each field (`fields`)."""

    kind: list[Marker] = field(default_factory=list)
    fields: dict[str, list[Marker]] = field(default_factory=dict)
    lines: dict[str, str] = field(default_factory=dict)
    """Where each field is written (`path:line`), for errors about its type."""
    docs: dict[str, str] = field(default_factory=dict)
    """Attribute docstrings (the string under a field), read here too so descriptions never depend on
    pydantic's `use_attribute_docstrings` (which reads sources at every import of the models)."""


# ---------------------------------------------------------------- value syntax


def _split_top(text: str, seps: str) -> list[str]:
    """Split on any of `seps` outside quotes, backticks and braces."""
    parts, depth, quote, start, i = [], 0, "", 0, 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in '"`':
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        elif ch in seps and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    if quote or depth:
        raise ValueError(f"unbalanced quotes or braces in {text!r}")
    parts.append(text[start:])
    return parts


def _unquote(text: str) -> str:
    text = text.strip()
    if text[:1] in ('"', "`") and (len(text) < 2 or text[-1] != text[0]):
        raise ValueError(f"unbalanced quotes in {text!r}")
    if len(text) >= 2 and text[0] == text[-1] == "`":
        return text[1:-1]
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            return json.loads(text)
        except ValueError:
            return text[1:-1]  # a Go escape JSON does not know: keep it verbatim
    return text


def _scalar(text: str) -> Any:
    """An untyped value: JSON literal, quoted string, or a bare word."""
    text = text.strip()
    if text[:1] in '"`':
        return _unquote(text)
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_any(text: str) -> Any:
    """controller-gen's untyped value: JSON, `{a,b}` lists, `{k: v}` maps, `a;b` lists, scalars."""
    text = text.strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    if text.startswith("{") and text.endswith("}"):
        inner = text[1:-1].strip()
        if not inner:
            return {}
        items = _split_top(inner, ",")
        if all(len(_split_top(item, ":")) >= 2 for item in items):
            out = {}
            for item in items:
                key, _, value = item.partition(":")
                out[_unquote(key)] = parse_any(value)
            return out
        return [parse_any(item) for item in items]
    if ";" in text:
        return [_scalar(item) for item in _split_top(text, ";")]
    return _scalar(text)


def _convert(kind: str, raw: str | None, what: str) -> Any:
    if kind == FLAG:
        if raw is not None and raw.strip() not in ("", "true"):
            raise ValueError(f"{what} takes no value")
        return True
    if raw is None:
        if kind == BOOL:
            return True
        raise ValueError(f"{what} needs a value")
    raw = raw.strip()
    if kind == STR:
        return _unquote(raw)
    if kind in (LIST, VALUES):
        braced = raw.startswith("{") and raw.endswith("}")
        items = [
            item for item in _split_top(raw[1:-1] if braced else raw, "," if braced else ";") if item.strip()
        ]
        return [(_scalar if kind == VALUES else _unquote)(item) for item in items]
    if kind == ANY:
        return parse_any(raw)
    if kind == JSON:
        if raw.startswith("ref("):
            return None  # a Go constant's name: controller-gen skips it too
        try:
            return json.loads(raw)
        except ValueError:
            raise ValueError(
                f"{what}: {raw!r} is not JSON (use +kubebuilder:default for bare words)"
            ) from None
    value = _scalar(raw)
    if kind == BOOL:
        if isinstance(value, bool):
            return value
        raise ValueError(f"{what}: {raw!r} is not true or false")
    if kind == INT:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ValueError(f"{what}: {raw!r} is not an integer")
    if isinstance(value, int | float) and not isinstance(value, bool):  # NUM
        return value
    raise ValueError(f"{what}: {raw!r} is not a number")


def _looks_like_kubebuilder(prefix: str) -> bool:
    import difflib

    return difflib.SequenceMatcher(None, prefix.lower(), "kubebuilder").ratio() >= 0.75


def _did_you_mean(name: str) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(SPECS), n=1, cutoff=0.75)
    return f" (did you mean +{close[0]}?)" if close else ""


def parse_marker(text: str, where: str = "") -> Marker | None:
    """Parse the text after `+`; None for markers that belong to other tools.

    Raises GenerateError for an unknown `kubebuilder:` marker or malformed arguments, so typos
    never silently produce a different CRD.
    """
    text = text.strip()
    # the longest name that is the whole text or is followed by `=` or `:` in it
    name = text if text in SPECS else None
    for index in range(len(text) - 1, 0, -1) if name is None else ():
        if text[index] in "=:" and text[:index] in SPECS:
            name = text[:index]
            break
    if name is None:
        bare = text.split("=", 1)[0]
        if bare.startswith("kubebuilder:") and not bare.startswith(_FOREIGN):
            raise GenerateError(f"{where}: unknown marker +{bare}{_did_you_mean(bare)}")
        prefix, colon, rest = bare.partition(":")
        if colon and prefix != "kubebuilder" and _looks_like_kubebuilder(prefix):
            # `+kubebuiler:validation:Format`: a typo would otherwise drop the marker silently
            raise GenerateError(f"{where}: unknown marker +{bare}{_did_you_mean('kubebuilder:' + rest)}")
        return None
    value_kind, arg_specs = SPECS[name].value, SPECS[name].args
    rest = text[len(name) :]
    try:
        if value_kind is not None:
            if rest.startswith(":="):
                rest = rest[1:]  # `+kubebuilder:default:=Allow`, as controller-gen reads it
            if rest.startswith(":"):
                raise ValueError(f"+{name} takes a value (+{name}=...), not named arguments")
            raw = rest[1:] if rest.startswith("=") else None
            return Marker(name, _convert(value_kind, raw, f"+{name}"), {}, where)
        if rest.startswith("="):
            raise ValueError(f"+{name} takes named arguments (+{name}:key=value,...)")
        args: dict[str, Any] = {}
        body = rest[1:] if rest.startswith(":") else ""
        for piece in _split_top(body, ",") if body.strip() else []:
            key, eq, raw_value = piece.partition("=")
            key = key.strip()
            if key not in arg_specs:
                raise ValueError(f"+{name} has no argument {key!r} (known: {', '.join(arg_specs)})")
            args[key] = _convert(arg_specs[key][0], raw_value if eq else None, f"+{name}:{key}")
        missing = [k for k, (_, required) in arg_specs.items() if required and k not in args]
        if missing:
            raise ValueError(f"+{name} needs {', '.join(missing)}")
        return Marker(name, None, args, where)
    except ValueError as err:
        raise GenerateError(f"{where}: {err}") from None


# ---------------------------------------------------------------- comments in source files


def _tokenized_comment_lines(source: str) -> dict[int, str]:
    lines: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT and tok.line[: tok.start[1]].strip() == "":
                lines[tok.start[0]] = tok.string
    except (tokenize.TokenError, SyntaxError):
        pass
    return lines


def _comment_lines(source: str, tree: ast.AST | None = None) -> dict[int, str]:
    """Line number -> comment text, for lines that hold only a comment (what `tokenize` finds).

    A line starting with `#` is a comment unless a string spanning several lines holds it: the
    lines inside each multi-line string are read from `tree` (parsed here when not given), and a
    candidate among them sends the file through `tokenize` (5x slower, and rarely needed)."""
    candidates: dict[int, str] = {}
    for number, line in enumerate(source.split("\n"), 1):
        text = line.lstrip(" \t\f")
        if text.startswith("#"):
            candidates[number] = text.split("\r", 1)[0]
    if not candidates:
        return candidates
    if '"""' in source or "'''" in source or "\\\n" in source or "\\\r" in source:
        try:
            tree = tree if tree is not None else ast.parse(source)
        except (SyntaxError, ValueError):
            return _tokenized_comment_lines(source)
        if _string_holds_a_line(tree, sorted(candidates)):
            return _tokenized_comment_lines(source)
    return candidates


def _string_holds_a_line(tree: ast.AST, lines: list[int]) -> bool:
    """Whether a string spanning several lines holds one of `lines` (sorted) below its first line.
    Only nodes spanning one of those lines are entered: a class body's one-line fields are not."""
    stack = [tree]
    while stack:
        for child in ast.iter_child_nodes(stack.pop()):
            start = getattr(child, "lineno", None)
            if start is None:
                stack.append(child)  # arguments, comprehensions... hold nodes with lines
                continue
            end = getattr(child, "end_lineno", None) or start
            index = bisect.bisect_right(lines, start)
            if end <= start or index == len(lines) or lines[index] > end:
                continue
            if isinstance(child, ast.Constant | ast.JoinedStr):
                return True
            stack.append(child)
    return False


def _block_above(comments: dict[int, str], line: int) -> list[tuple[int, str]]:
    """The contiguous comment-only lines directly above `line`, top to bottom."""
    block = []
    line -= 1
    while line in comments:
        block.append((line, comments[line]))
        line -= 1
    return block[::-1]


def _markers_in(block: list[tuple[int, str]], path: str) -> list[Marker]:
    out = []
    for line, text in block:
        body = text.lstrip("#").strip()
        if body.startswith("+"):
            marker = parse_marker(body[1:], f"{path}:{line}")
            if marker is not None:
                out.append(marker)
    return out


@dataclass
class ClassComments:
    """The comment blocks of one class, as `(line, text)` pairs: above the class (`kind`) and above each
    field (`fields`, only fields with one), plus each field's line and attribute docstring. Markers of
    any tool are read from these: the generator's here, operator-sdk's CSV markers in `olm.markers`."""

    kind: list[tuple[int, str]] = field(default_factory=list)
    fields: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    docs: dict[str, str] = field(default_factory=dict)


@lru_cache(maxsize=512)
def class_comments(path: str, source: str) -> dict[str, ClassComments]:
    """Every class of a file by qualified name. Keyed by the text itself: a file rewritten within the
    mtime granularity is never stale."""
    tree = ast.parse(source, filename=path)
    comments = _comment_lines(source, tree)
    lines = source.splitlines()
    result: dict[str, ClassComments] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if not isinstance(node, ast.ClassDef):
                continue
            qualname = prefix + node.name
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            block = _block_above(comments, first)
            # like controller-gen, a type also takes the marker block just above its doc comment,
            # across a blank line (two in Python, where formatters put two before a class)
            above = (block[0][0] if block else first) - 1  # the line just above the block
            for _ in range(2):
                if above >= 1 and not lines[above - 1].strip():
                    above -= 1
            if above < (block[0][0] if block else first) - 1:
                block = _block_above(comments, above + 1) + block
            info = ClassComments(kind=block)
            for index, stmt in enumerate(node.body):
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    info.lines[stmt.target.id] = stmt.lineno
                    found = _block_above(comments, stmt.lineno)
                    if found:
                        info.fields[stmt.target.id] = found
                    after = node.body[index + 1] if index + 1 < len(node.body) else None
                    if (
                        isinstance(after, ast.Expr)
                        and isinstance(after.value, ast.Constant)
                        and isinstance(after.value.value, str)
                    ):
                        info.docs[stmt.target.id] = inspect.cleandoc(after.value.value)
            result[qualname] = info
            visit(node.body, qualname + ".")

    visit(tree.body, "")
    return result


@lru_cache(maxsize=512)
def _file_markers(path: str, source: str) -> dict[str, ClassMarkers]:
    result: dict[str, ClassMarkers] = {}
    for qualname, info in class_comments(path, source).items():
        markers = ClassMarkers(kind=_markers_in(info.kind, path), docs=info.docs)
        markers.lines = {name: f"{path}:{line}" for name, line in info.lines.items()}
        for name, block in info.fields.items():
            found = _markers_in(block, path)
            if found:
                markers.fields[name] = found
        result[qualname] = markers
    return result


def class_markers(cls: type, sources: dict[str, str | None] | None = None) -> ClassMarkers:
    """Markers written above `cls` and above its own fields (empty when the source is unavailable).
    `sources` keeps each file's text for a run (its Spec, Status and kind read the same file)."""
    import sys

    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if not path:
        return ClassMarkers()
    if sources is None or path not in sources:
        readable = path.endswith(".py") and Path(path).is_file()
        source = Path(path).read_text(encoding="utf-8") if readable else None
        if sources is not None:
            sources[path] = source
    else:
        source = sources[path]
    if source is None:
        return ClassMarkers()
    return _file_markers(path, source).get(cls.__qualname__, ClassMarkers())


def file_markers(path: Path, names: tuple[str, ...]) -> list[Marker]:
    """Every marker named in `names` anywhere in a file (RBAC markers may sit anywhere)."""
    source = path.read_text(encoding="utf-8")
    out = []
    for line, text in sorted(_comment_lines(source).items()):
        body = text.lstrip("#").strip()
        if body.startswith("+") and body[1:].startswith(names):
            marker = parse_marker(body[1:], f"{path}:{line}")
            if marker is not None and marker.name in names:
                out.append(marker)
    return out
