"""Edits of the project's kustomization YAML: list entries (at `# +pyop:scaffold:*` markers when present),
commented entries turned on and off, and ruamel.yaml round trips that keep comments.

Every function takes the current text and returns the new text (pure, no I/O), so a scaffolder can
compute all edits before it touches the disk. Insertions are idempotent: an entry already present is
not added twice. The Python sources' edits are in `pysource`.
"""

from __future__ import annotations

import io
import re
from typing import Any

from pyscaffold_op.errors import ProjectError

MARKER_PREFIX = "# +pyop:scaffold:"


def marker(name: str) -> str:
    return f"{MARKER_PREFIX}{name}"


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.indent(mapping=2, sequence=2, offset=0)
    yaml.preserve_quotes = True
    yaml.width = 4096
    return yaml


def _load(text: str, where: str) -> Any:
    """Parse a kustomization for reading (PyYAML's C loader: ruamel's round trip is kept for writing)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ProjectError(f"cannot edit {where}: it is not valid YAML ({first})") from err
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ProjectError(f"cannot edit {where}: it is not a YAML mapping")
    return data


def load_round_trip(text: str) -> Any:
    """The YAML document for a round trip that keeps comments and formatting (`dump_round_trip`)."""
    from ruamel.yaml.comments import CommentedMap

    data = _yaml().load(text)
    return CommentedMap() if data is None else data


def dump_round_trip(data: Any) -> str:
    buffer = io.StringIO()
    _yaml().dump(data, buffer)
    return buffer.getvalue()


def list_of(data: Any, key: str) -> Any:
    """The round-trip list `data[key]`, made empty first when missing."""
    from ruamel.yaml.comments import CommentedSeq

    seq = data.get(key)
    if seq is None:
        seq = data[key] = CommentedSeq()
    return seq


def _entries(data: Any, key: str, where: str) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ProjectError(f"cannot edit {where}: {key!r} is not a list")
    return list(value)


def add_list_entry(
    text: str, entry: str, *, where: str, key: str = "resources", marker_name: str = ""
) -> str:
    """Add `entry` to the top-level list `key` of a kustomization file, keeping every comment.

    When the marker comment is present the entry goes right above it (the scaffolding position);
    otherwise ruamel.yaml appends it in a round trip that keeps comments and formatting.
    """
    data = _load(text, where)
    if entry in _entries(data, key, where):
        return text
    lines = text.splitlines(keepends=True)
    wanted = marker(marker_name) if marker_name else None
    at = next((i for i, line in enumerate(lines) if wanted and line.strip() == wanted), None)
    if at is not None and isinstance(data.get(key), list):
        indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
        new_text = "".join([*lines[:at], f"{indent}- {entry}\n", *lines[at:]])
        if entry in _entries(_load(new_text, where), key, where):
            return new_text
    return _append_round_trip(load_round_trip(text), key, entry)


def _append_round_trip(data: Any, key: str, entry: str) -> str:
    seq = list_of(data, key)
    last = len(seq) - 1
    seq.append(entry)
    token = seq.ca.items.get(last, [None])[0] if last >= 0 else None
    if token is not None:
        # The old last item's comment token holds its end-of-line comment and the comment lines after
        # it: the end-of-line part stays, the lines after it (e.g. a marker) move below the new item.
        eol, newline, after = token.value.partition("\n")
        if after:
            from ruamel.yaml.tokens import CommentToken

            if eol.strip():
                token.value = eol + newline
            else:
                del seq.ca.items[last]
            seq.ca.items[last + 1] = [CommentToken("\n" + after, token.start_mark, None), None, None, None]
    return dump_round_trip(data)


_COMMENTED_ENTRY = r"^(?P<indent>[ \t]*)#[ \t]*- (?P<entry>{entry})[ \t]*$"


def enable_list_entry(text: str, entry: str, *, where: str, key: str = "resources") -> str:
    """Turn on a commented-out list entry (`#- ../crd` -> `- ../crd`), or add it when absent."""
    data = _load(text, where)
    if entry in _entries(data, key, where):
        return text
    pattern = re.compile(_COMMENTED_ENTRY.format(entry=re.escape(entry)), re.MULTILINE)
    new_text, count = pattern.subn(lambda m: f"{m.group('indent')}- {m.group('entry')}", text, count=1)
    if count and entry in _entries(_load(new_text, where), key, where):
        return new_text
    data = load_round_trip(text)
    list_of(data, key).insert(0, entry)
    return dump_round_trip(data)


# The inverses, for `pyop delete api`: each takes out what the insertion above put in, and nothing else.


def _entry_line(entry: str) -> re.Pattern[str]:
    quoted = re.escape(entry)
    return re.compile(rf"^[ \t]*- (?:{quoted}|'{quoted}'|\"{quoted}\")[ \t]*\n?", re.MULTILINE)


def remove_list_entry(text: str, entry: str) -> str:
    """Remove the list line `- <entry>` that `add_list_entry` added; absent, the text is unchanged."""
    return _entry_line(entry).sub("", text, count=1)


def disable_list_entry(text: str, entry: str) -> str:
    """Comment out `- <entry>` again (`- ../crd` -> `#- ../crd`), the inverse of `enable_list_entry`."""
    pattern = re.compile(rf"^(?P<indent>[ \t]*)- (?P<entry>{re.escape(entry)})[ \t]*$", re.MULTILINE)
    return pattern.sub(lambda m: f"{m.group('indent')}#- {m.group('entry')}", text, count=1)
