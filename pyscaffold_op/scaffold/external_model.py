"""The placeholder model of an external kind (`--external-api-path` without a Python module), planned
by `create api` and `create webhook` alike: `src/<pkg>/external/<group>/<version>/<kind>_types.py`.

Written once, never overwritten, and left out of the journal of what a create command added, so
`delete api`/`delete webhook` leave it: it is the user's to type (or to replace by a generated module),
and other controllers or webhooks of the group may import it.
"""

from __future__ import annotations

from pyscaffold_op.scaffold.otherapi import OtherKind
from pyscaffold_op.scaffold.render import render
from pyscaffold_op.scaffold.resource import ResourceNames
from pyscaffold_op.scaffold.transaction import FilePlan

_DOCSTRINGS = {"external": "Models of the kinds of other projects' APIs that this project uses."}


def plan_external_model(plan: FilePlan, r: ResourceNames, other: OtherKind) -> None:
    """Create the placeholder model (and its packages) unless a Python module was given or it exists."""
    if not other.placeholder:
        return
    parts = other.module.split(".")
    for depth in range(2, len(parts)):  # the packages below src/<pkg>/, down to the model's
        relpath = "src/" + "/".join(parts[:depth]) + "/__init__.py"
        docstring = _DOCSTRINGS.get(parts[depth - 1], f"The {parts[depth - 1]} package.")
        _create(plan, relpath, render("api/package_init.py.jinja", header=r.header, docstring=docstring))
    content = render(
        "api/external_types.py.jinja", r, recorded_module=other.recorded_module or "", path=other.path
    )
    _create(plan, "src/" + other.module.replace(".", "/") + ".py", content)


def _create(plan: FilePlan, relpath: str, content: str) -> None:
    if plan.read_current(relpath) is None:
        plan.write(relpath, content)
