"""`pyop delete api`: take out exactly what `pyop create api` added, from its record (`.pyop-apis.yml`).

Validate, plan every removal and edit in memory, then apply all or nothing (`transaction.apply`).
What another API still uses stays: a file or an insertion another recorded API also lists (the
admin/editor/viewer roles and their kustomization entries are the kind's, shared by its versions),
`../crd` in config/default while another API has a CRD, a package `__init__.py` whose folder holds more.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from pyscaffold_op.errors import ProjectError
from pyscaffold_op.project import PROJECT_FILE, Project, find_project_root, load_project
from pyscaffold_op.scaffold import deployimage
from pyscaffold_op.scaffold.inputs import DeleteOptions, validate_delete
from pyscaffold_op.scaffold.journal import RECORD_FILE, ApiRecord, Insertion, Record, digest, load_record
from pyscaffold_op.scaffold.transaction import FilePlan, read_file


def plan_delete(options: DeleteOptions, root: Path, project: Project) -> FilePlan:
    """The removals and edits that undo `create api` for the options' API; changes nothing."""
    validate_delete(options, project)
    gvk = (options.group, options.version, options.kind)
    what = f"{options.group}/{options.version}, Kind={options.kind}"
    resource = project.find(*gvk)
    if resource is None:
        raise ProjectError(f"API {what} is not in {PROJECT_FILE}: nothing to delete")
    if resource.webhooks is not None:
        raise ProjectError(
            f"API {what} has webhooks ({PROJECT_FILE} `webhooks:`), which delete api does not remove: run "
            f"`pyop delete webhook --group {options.group} --version {options.version} "
            f"--kind {options.kind}` first"
        )
    record = load_record(read_file(root, RECORD_FILE))
    api = record.find(*gvk)
    if api is None:
        raise ProjectError(
            f"{RECORD_FILE} has no record of what `pyop create api` wrote for {what} (made by a pyop "
            "before 0.2, or the record was edited): remove its files by hand"
        )
    others = [a for a in record.apis if a is not api and project.find(a.group, a.version, a.kind)]
    plan = FilePlan(root)
    edited = _remove_owned(plan, api, others)
    if edited and not options.force:
        raise ProjectError(
            f"edited since `pyop create api` wrote them: {', '.join(edited)}; pass --force to delete anyway"
        )
    kept_insertions = _revert_insertions(plan, api, others, project)
    kept_created = _remove_created(plan, api, others)
    for relpath in api.generated:
        siblings = [
            r for r in project.resources
            if (r.group, r.kind) == (options.group, options.kind) and r.version != options.version and r.api
        ]  # fmt: skip
        if not siblings:  # the CRD holds every version of the kind
            plan.remove(relpath)
    updated = project.model_copy(deep=True)
    updated.resources = [r for r in updated.resources if not r.same_gvk(*gvk)]
    updated.plugins = deployimage.without_resource(updated.plugins, *gvk)
    plan.write(PROJECT_FILE, updated.dump())
    rest = _hand_over(record.without(api), others, kept_insertions, kept_created)
    if not rest.empty():
        plan.write(RECORD_FILE, rest.dump())
    else:
        plan.remove(RECORD_FILE)
    return plan


def _claimed_files(others: Iterable[ApiRecord]) -> set[str]:
    return {relpath for other in others for relpath in (*other.files, *other.created)}


def _remove_owned(plan: FilePlan, api: ApiRecord, others: list[ApiRecord]) -> list[str]:
    """Plan the removal of the files the API wrote; returns those edited since."""
    claimed = _claimed_files(others)
    edited = []
    for relpath, recorded in api.files.items():
        path = plan.root / relpath
        if relpath in claimed or not path.is_file():
            continue
        if digest(path.read_bytes()) != recorded:
            edited.append(relpath)
        plan.remove(relpath)
    return edited


def _revert_insertions(
    plan: FilePlan, api: ApiRecord, others: list[ApiRecord], project: Project
) -> list[Insertion]:
    """Revert the API's insertions no other API needs; returns those kept for the others."""
    claimed = {insertion.key() for other in others for insertion in other.insertions}
    crds_remain = any(
        r.api is not None for r in project.resources if not r.same_gvk(api.group, api.version, api.kind)
    )
    kept = []
    for insertion in api.insertions:
        if not insertion.changed:
            continue
        if insertion.key() in claimed or (insertion.op == "enable" and crds_remain):
            kept.append(insertion)
            continue
        text = plan.read_current(insertion.file)
        if text is not None:
            plan.write(insertion.file, insertion.revert(text))
    return kept


def _hand_over(
    rest: Record, others: list[ApiRecord], insertions: list[Insertion], created: dict[str, str]
) -> Record:
    """What the deleted API put in and the others still use becomes theirs (the first other API's
    record), so deleting the last of them takes it out too."""
    if not others or not (insertions or created):
        return rest
    heir = next(a for a in rest.apis if a.same_gvk(others[0].group, others[0].version, others[0].kind))
    by_key = {i.key(): i for i in heir.insertions}
    added = []
    for insertion in insertions:
        if insertion.key() not in by_key:
            added.append(insertion)
        elif not by_key[insertion.key()].changed:
            by_key[insertion.key()] = by_key[insertion.key()].model_copy(update={"changed": True})
    claimed = _claimed_files(others)
    taken = {relpath: d for relpath, d in created.items() if relpath not in claimed}
    new_heir = heir.model_copy(
        update={
            "insertions": [by_key.get(i.key(), i) for i in heir.insertions] + added,
            "created": {**heir.created, **taken},
        }
    )
    return Record(apis=[new_heir if a is heir else a for a in rest.apis], webhooks=rest.webhooks)


def _remove_created(plan: FilePlan, api: ApiRecord, others: list[ApiRecord]) -> dict[str, str]:
    """Remove the shared files the API created, once they are back to what it created (package
    `__init__.py` files last, deepest first, so their folders are judged after the modules in them).
    Returns those kept because other APIs' lines or modules are in them, with their recorded digest."""
    claimed = _claimed_files(others)
    kept = {}

    def order(relpath: str) -> tuple[bool, int, str]:
        path = PurePosixPath(relpath)
        return (path.name == "__init__.py", -len(path.parts), relpath)

    for relpath in sorted(api.created, key=order):
        text = plan.read_current(relpath)
        if relpath in claimed or text is None:
            continue
        if digest(text) != api.created[relpath]:
            kept[relpath] = api.created[relpath]  # other APIs' lines (or the user's) are in it
            continue
        path = PurePosixPath(relpath)
        package_init = str(path.with_name("__init__.py"))  # judged after, by what is left
        ignored = {relpath, package_init} if package_init in api.created else {relpath}
        if path.suffix == ".py" and not _only(plan, (plan.root / relpath).parent, ignored):
            # the package holds modules of other APIs or of the user (another kind of the version
            # still needs its `__init__.py` and `groupversion_info.py`)
            kept[relpath] = api.created[relpath]
            continue
        plan.remove(relpath)
    return kept


def _only(plan: FilePlan, folder: Path, relpaths: set[str]) -> bool:
    """Whether `folder` holds nothing but `relpaths`, files planned for removal and bytecode caches."""
    for entry in folder.iterdir():
        rel = entry.relative_to(plan.root).as_posix()
        if entry.name == "__pycache__" or rel in relpaths or rel in plan.removals:
            continue
        if entry.is_dir() and _only(plan, entry, relpaths):
            continue
        return False
    return True


def delete_api(options: DeleteOptions, start: Path) -> tuple[Path, FilePlan]:
    """`pyop delete api` from `start`: the project root and the plan (apply it with `transaction.apply`)."""
    root = find_project_root(start.resolve())
    if root is None:
        raise ProjectError(f"no PROJECT file in {start} or above: run this from a pyop project")
    return root, plan_delete(options, root, load_project(root))
