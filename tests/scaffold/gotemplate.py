"""A test-only renderer for the few Go-template constructs pyop's charts use, and nothing else.

No helm binary is installable here, so the chart tests render templates with this. It follows Go's
text/template and Helm's (sprig) functions for exactly:

    {{ .Values.a.b }}  {{ .Release.Name|Namespace|Service }}  {{ .Chart.Name|Version|AppVersion }}
    {{- if X }} / {{- else }} / {{- end }}   with X a field or `not`/`and`/`or` of fields
    {{- define "n" -}} ... {{- end }}  {{ include "n" . | nindent N }}  {{ toYaml X | nindent N }}
    quote, default, string literals, {{/* comments */}}, and `{{-`/`-}}` whitespace trimming

and raises `Unsupported` on anything else (range, with, variables, other functions, parentheses...),
so a chart that strays from this set fails the tests instead of being rendered by a guess. Where Helm
would print something surprising (a map, a missing value, a number in exponent form) it raises too.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

import yaml

FUNCTIONS = {"include", "toYaml", "nindent", "quote", "default", "not", "and", "or"}
_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.DOTALL)
_INT = re.compile(r"^-?\d+$")


class Unsupported(Exception):
    """A construct outside the supported set, or one Helm would render in a surprising way."""


@dataclass
class _Node:
    kind: str  # text | expr | if | define
    text: str = ""
    body: list[_Node] = field(default_factory=list)
    otherwise: list[_Node] = field(default_factory=list)


def _tokens(source: str) -> list[tuple[str, str]]:
    """("text", s) and ("action", s) pieces, with Go's trim markers applied to the text around them."""
    pieces: list[tuple[str, str]] = []
    position = 0
    trim_next = False
    for match in _ACTION.finditer(source):
        text = source[position : match.start()]
        if trim_next:
            text = text.lstrip(" \t\r\n")
        if match.group(1):
            text = text.rstrip(" \t\r\n")
        pieces.append(("text", text))
        body = match.group(2).strip()
        if "{{" in body and not body.startswith('"'):
            raise Unsupported(f"nested action: {match.group(0)!r}")
        if not (body.startswith("/*") and body.endswith("*/")):
            pieces.append(("action", body))
        trim_next = bool(match.group(3))
        position = match.end()
    tail = source[position:]
    pieces.append(("text", tail.lstrip(" \t\r\n") if trim_next else tail))
    return pieces


def _parse(pieces: list[tuple[str, str]], defines: dict[str, list[_Node]]) -> list[_Node]:
    root: list[_Node] = []
    stack: list[tuple[_Node | None, list[_Node]]] = [(None, root)]
    for kind, text in pieces:
        current = stack[-1][1]
        if kind == "text":
            if text:
                current.append(_Node("text", text))
            continue
        word = text.split(None, 1)[0] if text else ""
        if word == "if":
            node = _Node("if", text[2:].strip())
            current.append(node)
            stack.append((node, node.body))
        elif word == "else":
            owner = stack[-1][0]
            if text != "else" or owner is None or owner.kind != "if" or stack[-1][1] is owner.otherwise:
                raise Unsupported(f"{{{{ {text} }}}}")
            stack[-1] = (owner, owner.otherwise)
        elif word == "end":
            if text != "end" or len(stack) == 1:
                raise Unsupported(f"unbalanced {{{{ {text} }}}}")
            owner, _ = stack.pop()
            if owner is not None and owner.kind == "define":
                defines[owner.text] = owner.body
        elif word == "define":
            if len(stack) != 1:
                raise Unsupported("define inside a block")
            name = _string(text[len("define") :].strip())
            node = _Node("define", name)
            stack.append((node, node.body))
        elif word in ("range", "with", "template", "block", "break", "continue") or text.startswith("$"):
            raise Unsupported(f"{{{{ {text} }}}}")
        else:
            current.append(_Node("expr", text))
    if len(stack) != 1:
        raise Unsupported("an if or define is not closed by end")
    return root


def _string(token: str) -> str:
    if not (len(token) >= 2 and token[0] == token[-1] == '"'):
        raise Unsupported(f"expected a string literal, got {token!r}")
    return str(json.loads(token))


def truthy(value: Any) -> bool:
    """Go template truth: false, 0, nil, and empty strings, lists and maps are false."""
    if isinstance(value, str | list | dict):
        return len(value) > 0
    return not (value is None or value is False or value == 0)


def to_yaml(value: Any) -> str:
    """Helm's toYaml: sorted keys, block style, no trailing newline."""
    return (
        str(yaml.safe_dump(value, sort_keys=True, default_flow_style=False, width=1 << 20))
        .removesuffix("\n")
        .removesuffix("\n...")
    )


def print_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if abs(value) >= 1_000_000:
            raise Unsupported(f"Helm prints {value} in exponent form (values are float64)")
        return str(value)
    if isinstance(value, str):
        return value
    raise Unsupported(f"printing {value!r}: Helm would print nothing useful")


class Renderer:
    def __init__(self, values: dict[str, Any], chart: dict[str, Any], release: dict[str, str]) -> None:
        self.context = {
            "Values": values,
            "Chart": {
                "Name": chart["name"],
                "Version": chart["version"],
                "AppVersion": chart.get("appVersion"),
            },
            "Release": {"Service": "Helm", **release},
        }
        self.defines: dict[str, list[_Node]] = {}

    def load_helpers(self, source: str) -> None:
        leftover = self._render(_parse(_tokens(source), self.defines), self.context)
        if leftover.strip():
            raise Unsupported(f"a helpers file renders text: {leftover.strip()[:40]!r}")

    def render(self, source: str) -> str:
        return self._render(_parse(_tokens(source), self.defines), self.context)

    def _render(self, nodes: list[_Node], dot: Any) -> str:
        out: list[str] = []
        for node in nodes:
            if node.kind == "text":
                out.append(node.text)
            elif node.kind == "expr":
                out.append(print_value(self.pipeline(node.text, dot)))
            elif node.kind == "if":
                branch = node.body if truthy(self.pipeline(node.text, dot)) else node.otherwise
                out.append(self._render(branch, dot))
            elif node.kind == "define":
                raise Unsupported("define outside a helpers file")
        return "".join(out)

    def pipeline(self, text: str, dot: Any) -> Any:
        if "(" in text or ")" in text:
            raise Unsupported(f"parentheses: {text!r}")
        value: Any = _NOTHING
        for command in text.split("|"):
            try:
                words = shlex.split(command.strip(), posix=False)
            except ValueError as err:
                raise Unsupported(f"{command!r}: {err}") from err
            if not words:
                raise Unsupported(f"empty command in {text!r}")
            value = self.command(words, value, dot)
        return value

    def command(self, words: list[str], piped: Any, dot: Any) -> Any:
        head, rest = words[0], words[1:]
        if head not in FUNCTIONS:
            if rest or piped is not _NOTHING:
                raise Unsupported(f"{head} is not a function pyop's charts use")
            return self.term(head, dot)
        args = [self.term(word, dot) for word in rest]
        if piped is not _NOTHING:
            args.append(piped)
        return self.call(head, args, rest)

    def call(self, name: str, args: list[Any], words: list[str]) -> Any:
        if name == "include":
            if len(args) != 2 or words[1:2] != ["."]:
                raise Unsupported('include takes a name and "."')
            if args[0] not in self.defines:
                raise Unsupported(f"no template {args[0]!r} is defined")
            return self._render(self.defines[args[0]], args[1])
        if name == "toYaml":
            _arity(name, args, 1)
            return to_yaml(args[0])
        if name == "nindent":
            _arity(name, args, 2)
            if not isinstance(args[0], int) or not isinstance(args[1], str):
                raise Unsupported("nindent takes a count and a string")
            pad = " " * args[0]
            return "\n" + pad + args[1].replace("\n", "\n" + pad)
        if name == "quote":
            _arity(name, args, 1)
            return json.dumps(args[0] if isinstance(args[0], str) else print_value(args[0]))
        if name == "default":
            _arity(name, args, 2)
            return args[1] if truthy(args[1]) else args[0]
        if name == "not":
            _arity(name, args, 1)
            return not truthy(args[0])
        if len(args) < 2:
            raise Unsupported(f"{name} takes two or more arguments")
        for arg in args[:-1]:  # Go: and/or return the first deciding argument
            if truthy(arg) != (name == "and"):
                return arg
        return args[-1]

    def term(self, word: str, dot: Any) -> Any:
        if word == ".":
            return dot
        if word.startswith('"'):
            return _string(word)
        if _INT.match(word):
            return int(word)
        if not word.startswith(".") or word.endswith("."):
            raise Unsupported(f"{word!r} is not a field, a string or a number")
        parts = word[1:].split(".")
        if parts[0] not in ("Values", "Release", "Chart"):
            raise Unsupported(f"{word}: only .Values, .Release and .Chart are used")
        value: Any = dot
        for index, part in enumerate(parts):
            if value is None:
                raise Unsupported(f"{word}: nil pointer evaluating .{'.'.join(parts[:index])}")
            if not isinstance(value, dict):
                raise Unsupported(f"{word}: .{'.'.join(parts[:index])} is not a map")
            if parts[0] in ("Release", "Chart") and index > 0 and part not in value:
                raise Unsupported(f"{word}: not a field pyop's charts use")
            value = value.get(part)
        return value


_NOTHING = object()


def _arity(name: str, args: list[Any], count: int) -> None:
    if len(args) != count:
        raise Unsupported(f"{name} takes {count} argument(s), got {len(args)}")
