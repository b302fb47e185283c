"""`pyop edit`: change the settings `pyop init` recorded (multigroup, namespaced, license, owner).

The init template is rendered twice, with the recorded answers and with the new ones, and the
difference is merged into the project like `pyop upgrade` merges a template change (`merge_renders`):
files you did not touch are replaced, edited ones merged with `git merge-file`. Then what lies outside
the init template: the license header of the Python files `create api` wrote, and with `--namespaced`
the `namespace=` of the RBAC markers in the controllers (kubebuilder leaves both to you). PROJECT and the
answers file record the new settings. Existing APIs stay where they are with `--multigroup`, as in
kubebuilder: PROJECT records each API's package (`path`), and later APIs use the new layout.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from pyscaffold_op.errors import ProjectError
from pyscaffold_op.project import PROJECT_FILE, Project, find_project_root, load_project
from pyscaffold_op.scaffold.boilerplate import BOILERPLATE_FILE, header_from_boilerplate
from pyscaffold_op.scaffold.init import ANSWERS_FILE, InitContext, make_context, render_template
from pyscaffold_op.scaffold.journal import RECORD_FILE, Record, digest, load_record
from pyscaffold_op.scaffold.transaction import FilePlan, apply

# `make manifests` rewrites it from the markers: not merged when it is no longer the template's
GENERATED_ROLE = "config/rbac/role.yaml"
_RBAC_MARKER = re.compile(r"^(?P<head>\s*#\s*\+kubebuilder:rbac:)(?P<args>.*?)(?P<tail>\s*)$")


@dataclass(frozen=True)
class EditOptions:
    """None: keep the recorded value (kubebuilder: only the flags given change anything)."""

    multigroup: bool | None = None
    namespaced: bool | None = None
    license: str | None = None
    owner: str | None = None
    force: bool = False


@dataclass
class EditResult:
    plan: FilePlan
    rbac_changed: bool = False
    """`make manifests` must rewrite config/rbac/role.yaml (the RBAC markers changed)."""
    conflicts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def plan_edit(options: EditOptions, start: Path, *, templates: Path) -> EditResult:
    """Compute the edit of the project at or above `start`; changes nothing."""
    from pyscaffold_op.scaffold.tree import TreeTemplate
    from pyscaffold_op.scaffold.upgrade import init_options, merge_renders, read_answers

    if options.owner is not None and ("\n" in options.owner or "\r" in options.owner):
        raise ProjectError(f"invalid owner {options.owner!r}: must be a single line")
    root = find_project_root(start.resolve())
    if root is None:
        raise ProjectError(f"no PROJECT file in {start} or above: run this from a pyop project")
    project = load_project(root)
    answers = read_answers(root)
    template = TreeTemplate.load(templates)
    if answers.get("_commit") != template.revision():
        raise ProjectError(
            f"{ANSWERS_FILE}: the project was made from template revision {answers.get('_commit')} and this "
            f"pyop has {template.revision()}: run `pyop upgrade` first"
        )
    old = init_options(answers)
    changes = {
        name: value
        for name, value in (
            ("multigroup", options.multigroup),
            ("namespaced", options.namespaced),
            ("license", options.license),
            ("owner", options.owner),
        )
        if value is not None
    }
    new = replace(old, **changes)  # type: ignore[arg-type]
    old_context = make_context(old, check_installed=False)
    new_context = make_context(new, check_installed=False)  # checks --license like init does
    result = EditResult(FilePlan(root))
    if new == old:
        return result
    groups = sorted({r.group for r in project.resources if not r.core and not r.external})
    if old.multigroup and not new.multigroup and len(groups) > 1:
        raise ProjectError(
            f"cannot turn multigroup off: the project holds groups {', '.join(groups)}; a single-group "
            "project holds one"
        )
    base_files = render_template(old_context, root)
    new_files = render_template(new_context, root)
    role = root / GENERATED_ROLE
    if role.is_file() and role.read_bytes() != base_files.get(GENERATED_ROLE):
        del base_files[GENERATED_ROLE], new_files[GENERATED_ROLE]
    merged = merge_renders(root, base_files, new_files)
    if merged.conflicts and not options.force:
        raise ProjectError(
            f"your edits of {', '.join(merged.conflicts)} conflict with the change; pass --force to write "
            "the merge with <<<<<<< conflict markers"
        )
    plan = result.plan
    for relpath, content in merged.files.items():
        plan.write(relpath, content)
    for relpath in merged.removed:
        plan.remove(relpath)
    result.conflicts = merged.conflicts
    record = load_record(plan.read_current(RECORD_FILE))
    if old_context.boilerplate != new_context.boilerplate:
        _rewrite_headers(plan, record, old_context, new_context, skip=set(new_files))
    if old.namespaced != new.namespaced:
        _rewrite_rbac_markers(plan, record, project, namespaced=new.namespaced)
        _rewrite_helper_roles(plan, record, namespaced=new.namespaced)
        result.rbac_changed = True
        result.notes += _namespaced_notes(project, new.namespaced)
    if old.multigroup != new.multigroup and project.resources:
        result.notes.append(
            f"note: existing APIs stay where they are (like kubebuilder); APIs created from now on go under "
            f"api/{'<group>/' if new.multigroup else ''}<version>/"
        )
    updated = project.model_copy(update={"multigroup": new.multigroup, "namespaced": new.namespaced})
    plan.write(PROJECT_FILE, updated.dump())
    if not record.empty():
        plan.write(RECORD_FILE, record.dump())
    return result


def apply_edit(result: EditResult) -> list[str]:
    return apply(result.plan)


def _python_files(root: Path, *tops: str) -> list[str]:
    out: list[str] = []
    for top in tops:
        folder = root / top
        if folder.is_dir():
            out += sorted(
                p.relative_to(root).as_posix() for p in folder.rglob("*.py") if "__pycache__" not in p.parts
            )
    return out


def _rewrite(plan: FilePlan, record: Record, relpath: str, transform: Callable[[str], str]) -> None:
    """Apply `transform` to a file; re-record its digest where the record had the untouched content."""
    text = plan.read_current(relpath)
    if text is None:
        return
    new_text = transform(text)
    if new_text == text:
        return
    plan.write(relpath, new_text)
    owned = record.webhooks.files.get(relpath)
    if owned is not None and owned.digest == digest(text):
        owned.digest = digest(new_text)
    for api in record.apis:
        if api.files.get(relpath) == digest(text):
            api.files[relpath] = digest(new_text)
        if relpath in api.created:
            mine = [i for i in api.insertions if i.changed and i.file == relpath]
            before, after = text, new_text
            for insertion in mine:
                before, after = insertion.revert(before), insertion.revert(after)
            if api.created[relpath] == digest(before):
                api.created[relpath] = digest(after)


def _rewrite_headers(
    plan: FilePlan, record: Record, old: InitContext, new: InitContext, *, skip: set[str]
) -> None:
    """Swap the license header of the Python files outside the init template (which the merge did)."""
    current = plan.root / BOILERPLATE_FILE
    # create api put the boilerplate file's text, which you may have edited, on its files
    old_header = (
        header_from_boilerplate(current.read_text(encoding="utf-8"))
        if current.is_file()
        else header_from_boilerplate(old.boilerplate)
    )
    new_header = header_from_boilerplate(new.boilerplate)
    if old_header:
        candidates = _python_files(plan.root, "src", "tests")
    else:  # no header to recognize pyop's files by: the ones create api recorded
        candidates = sorted(
            {p for api in record.apis for p in (*api.files, *api.created) if p.endswith(".py")}
        )

    def swap(text: str) -> str:
        if old_header and not text.startswith(old_header):
            return text
        return new_header + text[len(old_header) :]

    for relpath in candidates:
        if relpath not in skip:
            _rewrite(plan, record, relpath, swap)


def _rewrite_rbac_markers(plan: FilePlan, record: Record, project: Project, *, namespaced: bool) -> None:
    """Add (or take out) `namespace=<project>-system` on every RBAC marker of the controllers, as
    `create api` writes them in a namespaced project, so `make manifests` writes a Role."""
    param = f"namespace={project.project_name}-system"

    def fix(line: str) -> str:
        match = _RBAC_MARKER.match(line)
        if match is None:
            return line
        args = [arg for arg in match.group("args").split(",") if arg]
        if namespaced and not any(arg.startswith("namespace=") for arg in args):
            args.append(param)
        elif not namespaced:
            args = [arg for arg in args if arg != param]
        return f"{match.group('head')}{','.join(args)}{match.group('tail')}"

    def transform(text: str) -> str:
        return "".join(fix(line) for line in text.splitlines(keepends=True))

    for relpath in _python_files(plan.root, f"src/{project.package}/controllers"):
        _rewrite(plan, record, relpath, transform)


_HELPER_ROLE = re.compile(r"_(admin|editor|viewer)_role\.yaml")


def _rewrite_helper_roles(plan: FilePlan, record: Record, *, namespaced: bool) -> None:
    """The admin/editor/viewer roles of each API become Roles (or ClusterRoles again), as `create api`
    writes them in such a project (kubebuilder's `edit --namespaced` regenerates them too)."""
    from pyscaffold_op.scaffold.resource import helper_role_kind

    old, new = helper_role_kind(namespaced=not namespaced), helper_role_kind(namespaced=namespaced)

    def transform(text: str) -> str:
        return re.sub(rf"^kind: {old}$", f"kind: {new}", text, count=1, flags=re.MULTILINE)

    folder = plan.root / "config" / "rbac"
    for path in sorted(folder.glob("*_role.yaml")) if folder.is_dir() else []:
        if _HELPER_ROLE.search(path.name):
            _rewrite(plan, record, path.relative_to(plan.root).as_posix(), transform)


def _namespaced_notes(project: Project, namespaced: bool) -> list[str]:
    if not namespaced:
        return []
    notes = []
    cluster = sorted(
        r.kind for r in project.resources if r.has_controller() and r.api is not None and not r.api.namespaced
    )
    if cluster:
        notes.append(
            f"warning: {', '.join(cluster)} cluster-scoped: the manager's Role in "
            f"{project.project_name}-system cannot grant access to cluster-scoped objects; give the manager "
            "a ClusterRole and ClusterRoleBinding for them in config/rbac/"
        )
    if any(r.webhooks is not None for r in project.resources):
        notes.append(
            "warning: webhooks stay cluster-wide: they receive requests from every namespace while the "
            "manager watches only its own; set a namespaceSelector on them (kubebuilder's advice too)"
        )
    return notes
