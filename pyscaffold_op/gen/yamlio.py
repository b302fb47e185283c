"""YAML output formatted like controller-gen: `---` first, 2-space indent, block style, sorted keys.

Multi-line strings are `|-` blocks and strings that need quotes get double quotes (`""` for the core
API group), as Go's YAML encoder writes them. A file is rewritten only when its content changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


class _Dumper(yaml.SafeDumper):
    def choose_scalar_style(self) -> str:
        style = super().choose_scalar_style()
        return '"' if style == "'" else style

    def ignore_aliases(self, data: Any) -> bool:
        return True  # never emit &anchors for shared dicts


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value and not any(line != line.rstrip() for line in value.splitlines()):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str)


def dump_documents(docs: list[dict[str, Any]]) -> str:
    """Each document after a `---` line, keys sorted, no line wrapping."""
    parts = []
    for doc in docs:
        body = yaml.dump(
            doc,
            Dumper=_Dumper,
            default_flow_style=False,
            sort_keys=True,
            width=1 << 30,
            allow_unicode=True,
            indent=2,
        )
        parts.append("---\n" + body)
    return "".join(parts)


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
