"""`+operator-sdk:csv:customresourcedefinitions:` markers on the pydantic types (operator-sdk's CSV markers).

On a kind (above the `CustomResource` class):

    # +operator-sdk:csv:customresourcedefinitions:displayName="At",resources={{Pod,v1,""}}

On a field of the Spec or Status model (or of a model nested in them):

    # +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Schedule",
    #   xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}   (one line in the source)

Arguments: `type` (spec|status), `displayName`, `xDescriptors` ({...} of strings), `resources`
({{Kind,version,name},...}), `order` (an integer: descriptors sorted by it, then by path).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyscaffold_op.errors import GenerateError

PREFIX = "operator-sdk:csv:customresourcedefinitions"
_ARGS = {"type", "displayName", "xDescriptors", "resources", "order", "description"}


@dataclass
class CsvMarker:
    args: dict[str, Any] = field(default_factory=dict)
    where: str = ""


def _split(text: str, sep: str = ",") -> list[str]:
    parts, depth, quote, start = [], 0, "", 0
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in '"`':
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    if quote or depth:
        raise ValueError(f"unbalanced quotes or braces in {text!r}")
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _value(text: str) -> Any:
    text = text.strip()
    if text.startswith("{") and text.endswith("}"):
        return [_value(p) for p in _split(text[1:-1])]
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return json.loads(text)
    if len(text) >= 2 and text[0] == text[-1] == "`":
        return text[1:-1]
    try:
        return int(text)
    except ValueError:
        return text


def parse(body: str, where: str) -> CsvMarker:
    """The arguments after `+operator-sdk:csv:customresourcedefinitions:`."""
    args: dict[str, Any] = {}
    try:
        for piece in _split(body):
            key, eq, raw = piece.partition("=")
            key = key.strip()
            if key not in _ARGS:
                raise ValueError(f"unknown argument {key!r} (known: {', '.join(sorted(_ARGS))})")
            if not eq:
                raise ValueError(f"{key} needs a value ({key}=...)")
            args[key] = _value(raw)
    except ValueError as err:
        raise GenerateError(f"{where}: +{PREFIX}: {err}") from None
    kind = args.get("type")
    if kind is not None and kind not in ("spec", "status"):
        raise GenerateError(f"{where}: +{PREFIX}: type must be spec or status, not {kind!r}")
    for key in ("xDescriptors", "resources"):
        if key in args and not isinstance(args[key], list):
            args[key] = [args[key]]
    if "order" in args and not isinstance(args["order"], int):
        raise GenerateError(f"{where}: +{PREFIX}: order must be an integer")
    return CsvMarker(args, where)


@dataclass
class ClassCsvMarkers:
    kind: list[CsvMarker] = field(default_factory=list)
    fields: dict[str, list[CsvMarker]] = field(default_factory=dict)
    docs: dict[str, str] = field(default_factory=dict)


def _markers(block: list[tuple[int, str]], path: str) -> list[CsvMarker]:
    out = []
    for number, text in block:
        body = text.lstrip("#").strip()
        if body.startswith("+" + PREFIX):
            rest = body[1 + len(PREFIX) :]
            out.append(parse(rest[1:] if rest.startswith(":") else rest, f"{path}:{number}"))
    return out


def _file(path: str) -> dict[str, ClassCsvMarkers]:
    """The CSV markers of every class of a file, from the generator's reading of its comment blocks
    (`gen.markers.class_comments`: one walk of the file, cached by its text)."""
    from pyscaffold_op.gen.markers import class_comments

    result: dict[str, ClassCsvMarkers] = {}
    for qualname, comments in class_comments(path, Path(path).read_text(encoding="utf-8")).items():
        info = ClassCsvMarkers(kind=_markers(comments.kind, path), docs=dict(comments.docs))
        for name, block in comments.fields.items():
            found = _markers(block, path)
            if found:
                info.fields[name] = found
        result[qualname] = info
    return result


def class_csv_markers(cls: type) -> ClassCsvMarkers:
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py") or not Path(path).is_file():
        return ClassCsvMarkers()
    return _file(path).get(cls.__qualname__, ClassCsvMarkers())


def clear() -> None:
    from pyscaffold_op.gen.markers import class_comments

    class_comments.cache_clear()
