"""Edits of existing project files: insertions at `# +pyop:scaffold:*` markers and kustomization lists.

Every function takes the current text and returns the new text (pure, no I/O), so a scaffolder can
compute all edits before it touches the disk. Insertions are idempotent: a line already present is
not added twice, which keeps `create api --force` from duplicating registrations.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable
from typing import Any

from pyscaffold_op.errors import ProjectError

MARKER_PREFIX = "# +pyop:scaffold:"


def marker(name: str) -> str:
    return f"{MARKER_PREFIX}{name}"


def _find_marker(lines: list[str], name: str, where: str) -> int:
    wanted = marker(name)
    for index, line in enumerate(lines):
        if line.strip() == wanted:
            return index
    raise ProjectError(
        f"scaffold marker {wanted!r} not found in {where}: put it back to let pyop edit the file"
    )


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def insert_at_marker(text: str, name: str, new_lines: Iterable[str], *, where: str) -> str:
    """Insert the block `new_lines` (no indentation) just above the marker line, at the marker's indentation.

    The block is already there when its first line is, so re-running (`--force`) adds nothing.
    """
    lines = text.splitlines(keepends=True)
    at = _find_marker(lines, name, where)
    block = list(new_lines)
    if not block or block[0].strip() in {line.strip() for line in lines}:
        return text
    indent = _indent(lines[at])
    additions = [f"{indent}{line}\n" if line else "\n" for line in block]
    return "".join(lines[:at] + additions + lines[at:])


def insert_sorted(
    text: str,
    name: str,
    statement: str,
    *,
    where: str,
    sort_key: Callable[[str], Any],
    belongs: Callable[[str], bool] = lambda line: True,
) -> str:
    """Insert a statement into the sorted block that ends just above the marker (a blank line may part them).

    A statement may span lines (a parenthesized import); the block is sorted by `sort_key` of each
    statement's first line. When the block holds statements of another kind (`belongs` is false, e.g.
    third-party imports above first-party ones) the statement starts a new block, parted by blank lines.
    """
    lines = text.splitlines(keepends=True)
    at = _find_marker(lines, name, where)
    new_lines = statement.strip("\n").splitlines()
    if new_lines[0].strip() in {line.strip() for line in lines}:
        return text
    indent = _indent(lines[at])
    end = at - 1 if at > 0 and not lines[at - 1].strip() else at
    start = end
    while (
        start > 0
        and lines[start - 1].strip()
        and not lines[start - 1].lstrip().startswith("#")
        and len(_indent(lines[start - 1])) >= len(indent)
    ):
        start -= 1
    statements: list[list[str]] = []
    for line in lines[start:end]:
        continues = _indent(line) != indent or line.strip() in {")", "]"}
        if statements and continues:
            statements[-1].append(line)
        else:
            statements.append([line])
    addition = [f"{indent}{line}\n" if line.strip() else "\n" for line in new_lines]
    if statements and all(belongs(block[0].strip()) for block in statements):
        merged = sorted([*statements, addition], key=lambda block: sort_key(block[0].strip()))
        return "".join(lines[:start] + [line for block in merged for line in block] + lines[end:])
    if end != at:  # a blank line parts the block above from the marker: keep one below the new block too
        addition.append("\n")
    return "".join(lines[:at] + addition + lines[at:])


def import_sort_key(line: str) -> tuple[str, ...]:
    """Order `from a.b import C` lines like isort/ruff do for one section: by module, then names."""
    parts = line.replace("from ", "", 1).split(" import ", 1)
    return (parts[0].lower(), parts[0], *(parts[1:] or [""]))


def dunder_all_sort_key(line: str) -> tuple[int, str]:
    """isort-style `__all__` order: SCREAMING_CASE, then CamelCase, then the rest."""
    name = line.strip().rstrip(",").strip("\"'")
    if name.isupper():
        rank = 0
    elif name[:1].isupper():
        rank = 1
    else:
        rank = 2
    return (rank, name)


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


def _load_round_trip(text: str) -> Any:
    from ruamel.yaml.comments import CommentedMap

    data = _yaml().load(text)
    return CommentedMap() if data is None else data


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
    return _append_round_trip(_load_round_trip(text), key, entry)


def _append_round_trip(data: Any, key: str, entry: str) -> str:
    from ruamel.yaml.comments import CommentedSeq

    seq = data.get(key)
    if seq is None:
        seq = CommentedSeq()
        data[key] = seq
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
    buffer = io.StringIO()
    _yaml().dump(data, buffer)
    return buffer.getvalue()


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
    from ruamel.yaml.comments import CommentedSeq

    data = _load_round_trip(text)
    seq = data.get(key)
    if seq is None:
        seq = CommentedSeq()
        data[key] = seq
    seq.insert(0, entry)
    buffer = io.StringIO()
    _yaml().dump(data, buffer)
    return buffer.getvalue()


# The inverses, for `pyop delete api`: each takes out what the insertion above put in, and nothing else.


def _normalized(text: str) -> str:
    # ruff may re-wrap an inserted statement (a long import in parentheses): compare without layout
    return re.sub(r"[\s(),]", "", text)


def remove_statement(text: str, statement: str) -> str:
    """Remove the lines holding `statement` (however ruff wrapped them); absent, the text is unchanged.

    When the statement had started a block of its own (a blank line above and below it), the blank line
    `insert_sorted` added goes with it.
    """
    target = _normalized(statement)
    lines = text.splitlines(keepends=True)
    for start, line in enumerate(lines):
        seen = _normalized(line)
        if not seen or not target.startswith(seen):
            continue
        end = start
        while seen != target and end + 1 < len(lines):
            end += 1
            seen += _normalized(lines[end])
            if not target.startswith(seen):
                break
        if seen != target:
            continue
        rest = lines[:start] + lines[end + 1 :]
        if 0 < start < len(rest) and not rest[start - 1].strip() and not rest[start].strip():
            del rest[start]
        return "".join(rest)
    return text


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
