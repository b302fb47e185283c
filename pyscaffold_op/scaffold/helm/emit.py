"""Write a Kubernetes object as block YAML with Helm (Go template) actions in it.

The object is plain data (dicts, lists, scalars) in which a few node types stand for template actions:

- `Expr(text)`: a scalar written verbatim, e.g. `{{ .Values.manager.replicas }}`;
- `When(cond, then, otherwise)`: as a mapping key (value ignored) its entries, as a list item its items,
  kept only when `cond` holds (`{{- if cond }}` ... `{{- else }}` ... `{{- end }}`);
- `ToYaml(expr)`: a mapping value written by `{{ toYaml expr | nindent N }}`;
- `Splice(expr)`: as a mapping key or list item, the entries or items of `toYaml expr` inlined;
- `Include(name)`: as a mapping key, the entries of a named template (`include name . | nindent N`).

Only these constructs are written, so every chart has the same few shapes of template, each rendered
and linted by the real Helm in tests/scaffold/test_helm_chart.py. Literal text that contains `{{` is
escaped (`{{ "{{" }}`), so values from the manifests are never run as actions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyscaffold_op import yamlio


@dataclass(frozen=True)
class Expr:
    text: str


@dataclass(frozen=True)
class ToYaml:
    expr: str


@dataclass(frozen=True)
class Splice:
    expr: str


@dataclass(frozen=True)
class Include:
    name: str


@dataclass(frozen=True, eq=False)
class When:
    """Identity-hashed, so several conditions can be keys of one mapping."""

    cond: str
    then: Any
    otherwise: Any = field(default=None)


def escape_actions(text: str) -> str:
    return text.replace("{{", '{{ "{{" }}')


def scalar(value: Any) -> str:
    """One-line YAML for a scalar (Go-safe: `pyscaffold_op.yamlio.scalar`), template actions escaped."""
    if isinstance(value, Expr):
        return value.text
    return escape_actions(yamlio.scalar(value))


def emit(obj: dict[Any, Any]) -> str:
    """The document text of one object (no `---`), ending with a newline."""
    return "\n".join(_mapping(obj, 0)) + "\n"


def _action(indent: int, text: str) -> str:
    return " " * indent + "{{- " + text + " }}"


def _conditional(node: When, indent: int, body: Any) -> list[str]:
    lines = [_action(indent, f"if {node.cond}"), *body(node.then, indent)]
    if node.otherwise is not None:
        lines += [_action(indent, "else"), *body(node.otherwise, indent)]
    return [*lines, _action(indent, "end")]


def _mapping(entries: dict[Any, Any], indent: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    for key, value in entries.items():
        if isinstance(key, When):
            lines += _conditional(key, indent, _mapping)
        elif isinstance(key, Include):
            lines.append(_action(indent, f'include "{key.name}" . | nindent {indent}'))
        elif isinstance(key, Splice):
            lines.append(_action(indent, f"toYaml {key.expr} | nindent {indent}"))
        elif isinstance(value, ToYaml):
            action = _action(indent + 2, f"toYaml {value.expr} | nindent {indent + 2}")
            lines += [f"{pad}{scalar(key)}:", action]
        elif isinstance(value, dict) and value:
            lines += [f"{pad}{scalar(key)}:", *_mapping(value, indent + 2)]
        elif isinstance(value, list) and value:
            lines += [f"{pad}{scalar(key)}:", *_sequence(value, indent)]
        elif isinstance(value, dict | list):
            lines.append(f"{pad}{scalar(key)}: {'{}' if isinstance(value, dict) else '[]'}")
        else:
            lines.append(f"{pad}{scalar(key)}: {scalar(value)}")
    return lines


def _sequence(items: list[Any], indent: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    for item in items:
        if isinstance(item, When):
            lines += _conditional(item, indent, _sequence)
        elif isinstance(item, Splice):
            lines.append(_action(indent, f"toYaml {item.expr} | nindent {indent}"))
        elif isinstance(item, dict) and item:
            body = _mapping(item, indent + 2)
            first = body[0]
            if first.lstrip().startswith("{{"):  # an action cannot share the line with "- "
                lines += [f"{pad}-", *body]
            else:
                lines += [f"{pad}- {first[indent + 2 :]}", *body[1:]]
        elif isinstance(item, list):
            raise ValueError("nested sequences are not written in charts")
        elif isinstance(item, dict):
            lines.append(f"{pad}- {{}}")
        else:
            lines.append(f"{pad}- {scalar(item)}")
    return lines
