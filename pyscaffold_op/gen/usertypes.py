"""A field typed with something pydantic cannot describe (a plain class) is one error line naming the
field's file:line, the kind and field path, and the fix, rather than pydantic's 150-line traceback."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pyscaffold_op.errors import GenerateError

_UNKNOWN = re.compile(r"schema for (?:<class '(?P<cls>[\w.]+)'>|(?P<other>[^.\s]+))")


def _classes(annotation: Any) -> Iterator[Any]:
    yield annotation
    for arg in typing.get_args(annotation):
        yield from _classes(arg)


def _field_line(model: type, field: str) -> tuple[str, int] | None:
    try:
        lines, start = inspect.getsourcelines(model)
        path = inspect.getsourcefile(model)
    except (OSError, TypeError):
        return None
    pattern = re.compile(rf"\s+{re.escape(field)}\s*:")
    for offset, line in enumerate(lines):
        if pattern.match(line):
            return str(path), start + offset
    return (str(path), start) if path else None


def _find(model: type[BaseModel], wanted: str, path: str, seen: set[type]) -> tuple[type, str, str] | None:
    """(model holding the field, field name, field path) of the first field whose type mentions `wanted`."""
    if model in seen:
        return None
    seen.add(model)
    for name, info in model.model_fields.items():
        for cls in _classes(info.annotation):
            if isinstance(cls, type) and f"{cls.__module__}.{cls.__qualname__}" == wanted:
                return model, name, f"{path}.{info.alias or name}".lstrip(".")
        for cls in _classes(info.annotation):
            if isinstance(cls, type) and issubclass(cls, BaseModel):
                found = _find(cls, wanted, f"{path}.{info.alias or name}", seen)
                if found:
                    return found
    return None


def schema_error(kinds: Sequence[type[BaseModel]], err: Exception) -> GenerateError:
    match = _UNKNOWN.search(str(err))
    wanted = (match.group("cls") or match.group("other")) if match else ""
    short = wanted.rsplit(".", 1)[-1] or "the type"
    fix = (
        f"pydantic cannot describe the plain class {short}: derive it from KubeModel "
        f"(`class {short}(KubeModel):`, from pyscaffold_op.apimachinery) or use a type pydantic knows"
    )
    for kind in kinds:
        found = _find(kind, wanted, "", set()) if wanted else None
        if found is None:
            continue
        model, field, field_path = found
        where = _field_line(model, field)
        at = f"{_shown(where[0])}:{where[1]}: " if where else ""
        return GenerateError(f"{at}{kind.__name__} field {field_path} has type {short}; {fix}")
    first = (str(err).strip().splitlines() or [type(err).__name__])[0]
    return GenerateError(f"{first}; {fix}")


def _shown(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return path
