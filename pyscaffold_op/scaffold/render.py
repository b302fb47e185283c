"""The jinja2 environment for `create api` templates: strict about undefined names, newline-exact."""

from __future__ import annotations

from functools import cache
from typing import Any

from pyscaffold_op.scaffold.templates import templates_dir


@cache
def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.globals["from_import"] = from_import
    env.globals["recorder_arg"] = recorder_arg
    return env


# The line length of the generated project's ruff configuration (templates/init/.../pyproject.toml).
LINE_LENGTH = 120


def from_import(module: str, *names: str) -> str:
    """`from module import a, b`, wrapped like `ruff format` when long module or kind names overflow."""
    from pyscaffold_op.scaffold.edits import format_import

    return format_import(module, list(names), line_length=LINE_LENGTH)


def recorder_arg(name: str, indent: str) -> str:
    """The `recorder=mgr.get_event_recorder_for("<name>"),` argument line(s), wrapped like `ruff format`."""
    line = f'{indent}recorder=mgr.get_event_recorder_for("{name}"),'
    if len(line) <= LINE_LENGTH:
        return line
    return f'{indent}recorder=mgr.get_event_recorder_for(\n{indent}    "{name}"\n{indent}),'


def render(template: str, context: dict[str, Any]) -> str:
    """Render `templates/<template>` with `context`; a missing name raises instead of rendering ''."""
    return _environment().get_template(template).render(**context)
