"""Edits of the project's Python sources, in one place: statements at `# +pyop:scaffold:*` markers
(imports, `__all__` entries, registrations in `__main__.py`), base classes and imports added to a class's
module, and the inverse `remove_statement` that `pyop delete api` runs.

Every function takes the current text and returns the new text (pure, no I/O), so a scaffolder can
compute all edits before it touches the disk. Insertions are idempotent: a line already present is
not added twice, which keeps `create api --force` from duplicating registrations. ruff formats the
result (`pyformat`), so an edit writes plain lines and leaves the layout to it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from typing import Any

from pyscaffold_op.errors import ProjectError
from pyscaffold_op.scaffold.edits import marker


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


def _normalized(text: str) -> str:
    # ruff may re-wrap an inserted statement (a long import in parentheses): compare without layout
    return re.sub(r"[\s(),]", "", text)


def _span_end(lines: list[str], start: int, target: str) -> int | None:
    """The end (exclusive) of the lines from `start` that read `target` but for layout, with the closing
    brackets ruff put on lines of their own when it wrapped the statement; None when they do not."""
    seen = ""
    end = start
    while end < len(lines) and seen != target:
        seen += _normalized(lines[end])
        end += 1
        if not target.startswith(seen):
            return None
    if seen != target:
        return None
    depth = sum(_depth(line) for line in lines[start:end])
    while depth > 0 and end < len(lines) and lines[end].strip() and not _normalized(lines[end]):
        depth += _depth(lines[end])
        end += 1
    return end


def _depth(line: str) -> int:
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


def remove_statement(text: str, statement: str) -> str:
    """Remove the lines holding `statement` (however ruff wrapped them); absent, the text is unchanged.

    When the statement had started a block of its own (a blank line above and below it), the blank line
    `insert_sorted` added goes with it.
    """
    target = _normalized(statement)
    lines = text.splitlines(keepends=True)
    for start, line in enumerate(lines):
        if not _normalized(line):
            continue
        end = _span_end(lines, start, target)
        if end is None:
            continue
        rest = lines[:start] + lines[end:]
        if 0 < start < len(rest) and not rest[start - 1].strip() and not rest[start].strip():
            del rest[start]
        return "".join(rest)
    return text


def find_reformatted(lines: list[str], block: str) -> tuple[int, int] | None:
    """Where the lines `block` are in `lines` however ruff re-wrapped them: the one span `[start, end)`
    whose text equals the block's but for layout (whitespace, brackets, commas), or None."""
    wanted = block.splitlines(keepends=True)
    lead = next((i for i, line in enumerate(wanted) if line.strip()), len(wanted))
    trail = next((i for i, line in enumerate(reversed(wanted)) if line.strip()), 0)
    target = _normalized("".join(wanted[lead : len(wanted) - trail]))
    if not target:
        return None
    blank = [not line.strip() for line in lines]
    hits = []
    for start, line in enumerate(lines):
        if not _normalized(line) or start < lead:
            continue
        end = _span_end(lines, start, target)
        if end is None or end + trail > len(lines):
            continue
        if all(blank[start - lead : start]) and all(blank[end : end + trail]):
            hits.append((start - lead, end + trail))
    return hits[0] if len(hits) == 1 else None


def insert_import(text: str, import_line: str, *, where: str, package: str) -> str:
    """A first-party `from <package>.x import Y` into the sorted imports above the `imports` marker."""
    first_party = f"from {package}."
    return insert_sorted(
        text,
        "imports",
        import_line,
        where=where,
        sort_key=import_sort_key,
        belongs=lambda line: line.startswith(first_party),
    )


def imported_names(text: str) -> dict[str, tuple[str, str]]:
    """The names the module's top-level `from x import y [as z]` statements bind: name -> (module, y)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    return {
        alias.asname or alias.name: (node.module, alias.name)
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module and not node.level
        for alias in node.names
    }


def splice_before_call(text: str, function: str, method: str, addition: str, *, where: str) -> str:
    """`addition` (`.with_spokes(X)`) put into the one `<receiver>.<method>(...)` call of the top-level
    `function`, between the receiver and `.<method>`, however the call is spelled or wrapped."""
    try:
        tree = ast.parse(text)
    except SyntaxError as err:
        raise ProjectError(f"cannot edit {where}: line {err.lineno}: {err.msg}") from None
    defs = (n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))
    found = next((n for n in defs if n.name == function), None)
    if found is None:
        raise ProjectError(f"cannot edit {where}: `def {function}` is missing")
    calls = [
        n.func.value
        for n in ast.walk(found)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == method
    ]
    if len(calls) != 1:
        what = "no" if not calls else f"{len(calls)}"
        raise ProjectError(f"cannot edit {where}: {what} `.{method}()` calls in {function}, expected one")
    receiver = calls[0]
    assert receiver.end_lineno is not None and receiver.end_col_offset is not None
    lines = text.splitlines(keepends=True)
    row = receiver.end_lineno - 1
    # ast's offsets count UTF-8 bytes
    raw, at = lines[row].encode("utf-8"), receiver.end_col_offset
    lines[row] = (raw[:at] + addition.encode("utf-8") + raw[at:]).decode("utf-8")
    return "".join(lines)


def insert_all_entry(text: str, entry: str, *, where: str) -> str:
    """A `"Name",` entry into the sorted `__all__` above the `all` marker."""
    return insert_sorted(text, "all", entry, where=where, sort_key=dunder_all_sort_key)


def class_line(text: str, kind: str, where: str) -> re.Match[str]:
    m = re.search(rf"^class {re.escape(kind)}\((?P<bases>[^)]*)\):[ \t]*$", text, re.MULTILINE)
    if m is None:
        raise ProjectError(f"cannot find `class {kind}(...)` in {where}")
    return m


def add_base(text: str, kind: str, base: str, where: str, *, first: bool) -> str:
    """`class <kind>(...)` with `base` among its bases (first or last)."""
    m = class_line(text, kind, where)
    bases = [b.strip() for b in m["bases"].split(",") if b.strip()]
    if base in bases:
        return text
    bases = [base, *bases] if first else [*bases, base]
    return text[: m.start()] + f"class {kind}({', '.join(bases)}):" + text[m.end() :]


def add_import(text: str, line: str, where: str, first_party: str) -> str:
    """Add a one-line top-level `from x import y` in its isort section (third-party, or the project's
    own `first_party` package), sorted like ruff sorts it."""
    if line in text.splitlines():
        return text
    lines = text.splitlines(keepends=True)
    mine = line.startswith(f"from {first_party}.")
    section = [
        i
        for i, ln in enumerate(lines)
        if ln.startswith("from ") and " import " in ln and ln.startswith(f"from {first_party}.") == mine
        and not ln.startswith("from __future__")
    ]  # fmt: skip
    if not section:
        raise ProjectError(f"cannot add `{line}` to {where}: no import section to put it in")
    key = import_sort_key(line)
    at = next((i for i in section if import_sort_key(lines[i].rstrip("\n")) > key), None)
    if at is None:
        at = section[-1] + 1
        while lines[at - 1].rstrip().endswith("(") or (at < len(lines) and lines[at].startswith((" ", ")"))):
            at += 1  # after a wrapped import's closing line
    return "".join([*lines[:at], line + "\n", *lines[at:]])


def mark_storage_version(text: str, kind: str, where: str) -> str:
    """`# +kubebuilder:storageversion` above `class <kind>`."""
    if "# +kubebuilder:storageversion" in text:
        return text
    m = class_line(text, kind, where)
    return text[: m.start()] + "# +kubebuilder:storageversion\n" + text[m.start() :]
