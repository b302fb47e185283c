"""`pyop delete webhook`: take out what `pyop create webhook` added, from its record (`.pyop-apis.yml`).

The named webhook types go from PROJECT; then every recorded file and change that no remaining webhook
needs (`journal.Need`) is removed or reverted, and a webhook file still needed is rendered again
for the types left. All planned in memory, applied all or nothing.
"""

from __future__ import annotations

from pathlib import Path

from pyscaffold_op.errors import ProjectError, ValidationError
from pyscaffold_op.project import PROJECT_FILE, Project, find_project_root, load_project
from pyscaffold_op.scaffold.inputs import DeleteWebhookOptions, WebhookOptions, validate_delete
from pyscaffold_op.scaffold.journal import (
    ADMISSION,
    ALL_TYPES,
    RECORD_FILE,
    Need,
    WebhookKind,
    digest,
    load_record,
)
from pyscaffold_op.scaffold.pyformat import format_python
from pyscaffold_op.scaffold.transaction import FilePlan, read_file
from pyscaffold_op.scaffold.webhook import webhook_files, webhook_names

# What `make manifests` writes for admission webhooks.
GENERATED = "config/webhook/manifests.yaml"


def plan_delete_webhook(options: DeleteWebhookOptions, root: Path, project: Project) -> FilePlan:
    """The removals and edits that undo `create webhook` for the named types; changes nothing."""
    validate_delete(options, project)
    gvk = (options.group, options.version, options.kind)
    what = f"{options.group}/{options.version}, Kind={options.kind}"
    resource = project.find(*gvk)
    if resource is None or resource.webhooks is None:
        raise ProjectError(f"API {what} has no webhooks in {PROJECT_FILE}: nothing to delete")
    hooks = resource.webhooks
    present = [t for t in ALL_TYPES if getattr(hooks, t)]
    asked = [t for t in ALL_TYPES if getattr(options, t)] or present
    missing = [t for t in asked if t not in present]
    if missing:
        raise ValidationError(f"API {what} has no {missing[0]} webhook: nothing to delete")
    record = load_record(read_file(root, RECORD_FILE))
    if not record.webhooks.has(*gvk):
        raise ProjectError(
            f"{RECORD_FILE} has no record of what `pyop create webhook` wrote for {what} (made by a pyop "
            "that did not record webhooks yet, or the record was edited): remove its webhook files by hand"
        )
    updated = project.model_copy(deep=True)
    left = updated.find(*gvk)
    assert left is not None and left.webhooks is not None
    for t in asked:
        setattr(left.webhooks, t, None)
        if t == "defaulting":
            left.webhooks.defaulting_path = None
        if t == "validation":
            left.webhooks.validation_path = None
        if t == "conversion":
            left.webhooks.spoke = None
    remaining = [t for t in ALL_TYPES if getattr(left.webhooks, t)]
    if not remaining:
        left.webhooks = None
        if (left.core or left.external) and not left.has_controller():  # `create webhook` recorded it
            updated.resources.remove(left)

    plan = FilePlan(root)
    kept = record.webhooks.model_copy(deep=True)
    edited: list[str] = []
    rendered = _render_left(options, project, updated, root) if remaining else {}
    for relpath, owned in record.webhooks.files.items():
        text = read_file(root, relpath)
        if owned.need.met(updated):
            if relpath in rendered:  # the kind's webhook and its test: rendered for the types left
                if text is not None and digest(text) != owned.digest:
                    edited.append(relpath)
                plan.write(relpath, rendered[relpath])
            continue
        if text is not None and digest(text) != owned.digest:
            edited.append(relpath)
        plan.remove(relpath)
        del kept.files[relpath]
    for change in reversed(record.webhooks.changes):
        if change.need.met(updated):
            continue
        current = plan.read_current(change.file)
        reverted = change.revert(current) if current is not None else None
        if reverted is None:
            edited.append(change.file)
        else:
            plan.write(change.file, reverted)
        kept.changes.remove(change)
    if edited and not options.force:
        files = ", ".join(dict.fromkeys(edited))
        raise ProjectError(
            f"edited since `pyop create webhook` wrote them: {files}; pass --force to delete anyway"
        )
    if not Need(types=list(ADMISSION)).met(updated):
        plan.remove(GENERATED)
    if left.webhooks is None:
        kept.kinds.remove(WebhookKind(group=gvk[0], version=gvk[1], kind=gvk[2]))
    plan.write(PROJECT_FILE, updated.dump())
    format_python(plan)
    for relpath in kept.files:
        if relpath in plan.files:
            kept.files[relpath].digest = digest(plan.files[relpath])
    rest = record.model_copy(update={"webhooks": kept})
    if rest.empty():
        plan.remove(RECORD_FILE)
    else:
        plan.write(RECORD_FILE, rest.dump())
    return plan


def _render_left(
    options: DeleteWebhookOptions, project: Project, updated: Project, root: Path
) -> dict[str, str]:
    """The kind's webhook file and test as `create webhook` writes them for the types left."""
    left = updated.find(options.group, options.version, options.kind)
    assert left is not None and left.webhooks is not None
    hooks = left.webhooks
    webhook = WebhookOptions(
        group=options.group,
        version=options.version,
        kind=options.kind,
        defaulting=bool(hooks.defaulting),
        validation=bool(hooks.validation),
        conversion=bool(hooks.conversion),
        spokes=tuple(hooks.spoke or ()),
        defaulting_path=hooks.defaulting_path,
        validation_path=hooks.validation_path,
    )
    held = {
        "defaulting": webhook.defaulting,
        "validation": webhook.validation,
        "conversion": webhook.conversion,
    }
    r = webhook_names(project, options.group, options.version, options.kind, root)
    return webhook_files(webhook, held, r, project, root)


def delete_webhook(options: DeleteWebhookOptions, start: Path) -> tuple[Path, FilePlan]:
    """`pyop delete webhook` from `start`: the project root and the plan (apply with `transaction.apply`)."""
    root = find_project_root(start.resolve())
    if root is None:
        raise ProjectError(f"no PROJECT file in {start} or above: run this from a pyop project")
    return root, plan_delete_webhook(options, root, load_project(root))
