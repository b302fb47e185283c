"""The jinja2 environment for `create api` templates: strict about undefined names, newline-exact.

Templates write plain one-line Python; `pyformat` runs ruff on the result.
"""

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
    return env


def render(template: str, context: dict[str, Any]) -> str:
    """Render `templates/<template>` with `context`; a missing name raises instead of rendering ''."""
    return _environment().get_template(template).render(**context)
