"""`pyop edit --plugins=autoupdate.kubebuilder.io/v1-alpha`: a GitHub workflow that keeps the scaffold
current. kubebuilder's runs `kubebuilder alpha update` every week and opens an issue linking a pull
request; pyop's runs `pyop upgrade` (its equivalent: re-render from the newest init template, 3-way
merge with your edits) the same way. Rewritten on every run, as kubebuilder does.
"""

from __future__ import annotations

from pathlib import Path

from pyscaffold_op.project import PROJECT_FILE, Project
from pyscaffold_op.scaffold.plugins import AUTOUPDATE, with_plugin
from pyscaffold_op.scaffold.templates import templates_dir
from pyscaffold_op.scaffold.transaction import FilePlan

WORKFLOW = ".github/workflows/auto_update.yml"


def plan_autoupdate(root: Path, project: Project) -> FilePlan:
    plan = FilePlan(root)
    plan.write(WORKFLOW, (templates_dir() / "autoupdate" / "auto_update.yml").read_bytes())
    plan.write(PROJECT_FILE, with_plugin(project, AUTOUPDATE).dump())
    return plan
