"""The placeholder model of an external kind (`--external-api-path` without a Python module), planned
by `create api` and `create webhook` alike: `src/<pkg>/external/<group>/<version>/<kind>_types.py`.

Written once and never overwritten: it is the user's to type (or to replace by a generated module).
"""

from __future__ import annotations

from pyscaffold_op.scaffold.journal import Need
from pyscaffold_op.scaffold.otherapi import OtherKind
from pyscaffold_op.scaffold.planner import Planner
from pyscaffold_op.scaffold.render import render
from pyscaffold_op.scaffold.resource import ResourceNames

_DOCSTRINGS = {"external": "Models of the kinds of other projects' APIs that this project uses."}


def plan_external_model(planner: Planner, r: ResourceNames, other: OtherKind, need: Need | None) -> None:
    """Create the placeholder model (and its packages) unless a Python module was given or it exists."""
    if not other.placeholder:
        return
    planner.package_inits(r.header, other.module, _DOCSTRINGS, None if need is None else lambda _: need)
    content = render(
        "api/external_types.py.jinja", r, recorded_module=other.recorded_module or "", path=other.path
    )
    planner.ensure("src/" + other.module.replace(".", "/") + ".py", content, need)
