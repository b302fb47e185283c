"""The jinja2 environment for the `create api` and `create webhook` templates: strict about undefined
names, newline-exact. Templates read a `resource.ResourceNames` (its fields, flat) and a run's values.

Templates write plain one-line Python; `pyformat` runs ruff on the result.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from pyscaffold_op.scaffold.templates import templates_dir

if TYPE_CHECKING:
    from pyscaffold_op.scaffold.resource import ResourceNames


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
    # `| yaml_str` quotes a value where Go's YAML would read it as something else
    env.add_extension("pyscaffold_op.yamlio.YamlFilters")
    return env


def render(template: str, names: ResourceNames | None = None, /, **extra: Any) -> str:
    """Render `templates/<template>` with the resource's names and `extra` values (a flag, a role);
    a missing name raises instead of rendering ''."""
    context = {**(names.template_vars() if names is not None else {}), **extra}
    return _environment().get_template(template).render(**context)
