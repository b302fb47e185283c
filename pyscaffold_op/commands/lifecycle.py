"""`pyop edit`, `pyop delete api`/`webhook`: change a project's settings, take an API or webhook out.

Thin, like commands/scaffold.py: parse the flags, call `pyscaffold_op.scaffold.edit`/`.delete`, print.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from pyscaffold_op.scaffold.transaction import FilePlan

delete_app = typer.Typer(help="Remove what a create command added (an API, a webhook).", no_args_is_help=True)


def edit(
    multigroup: bool | None = typer.Option(
        None,
        "--multigroup/--no-multigroup",
        help="New APIs go under api/<group>/<version>/ (existing APIs stay where they are).",
    ),
    namespaced: bool | None = typer.Option(
        None,
        "--namespaced/--no-namespaced",
        help="The manager watches only its own namespace (Role/RoleBinding, WATCH_NAMESPACE).",
    ),
    license_: str | None = typer.Option(
        None, "--license", help="License header of the generated Python files: apache2 or none."
    ),
    owner: str | None = typer.Option(None, "--owner", help="Copyright owner in the license headers."),
    force: bool = typer.Option(
        False,
        "--force/--no-force",
        help="Write the merge even where your edits conflict with the change (<<<<<<< markers).",
    ),
    make: bool = typer.Option(
        True, "--make/--no-make", help="Run `make manifests` afterwards when the RBAC markers changed."
    ),
    plugins: str | None = typer.Option(
        None,
        "--plugins",
        metavar="<plugin,...>",
        help="kubebuilder's optional plugins: helm (helm/v2-alpha; a Helm chart in dist/chart, as `pyop "
        "create helm-chart` writes it), grafana (grafana/v1-alpha; dashboards in grafana/), autoupdate "
        "(autoupdate/v1-alpha; a weekly `pyop upgrade` workflow); each recorded in PROJECT.",
    ),
) -> None:
    """Change the project's settings (like `kubebuilder edit`); flags not given keep their value."""
    from pyscaffold_op.scaffold.edit import EditOptions, apply_edit, plan_edit
    from pyscaffold_op.scaffold.plugins import parse_plugins
    from pyscaffold_op.scaffold.templates import templates_dir

    keys = parse_plugins(plugins) if plugins is not None else []
    settings = (multigroup, namespaced, license_, owner)
    if not keys or any(value is not None for value in settings):
        options = EditOptions(
            multigroup=multigroup, namespaced=namespaced, license=license_, owner=owner, force=force
        )
        result = plan_edit(options, Path.cwd(), templates=templates_dir() / "init")
        for relpath in apply_edit(result):
            typer.echo(f"{'conflict in' if relpath in result.conflicts else 'wrote'} {relpath}")
        for note in result.notes:
            typer.echo(note, err=True)
        if not result.plan.files and not result.plan.removals and not keys:
            typer.echo("nothing to change: the project already has these settings")
        if make and result.rbac_changed:
            from pyscaffold_op.scaffold.make import run_make

            run_make(result.plan.root, "manifests")
        if result.conflicts:
            typer.echo(f"resolve the <<<<<<< conflict markers in: {', '.join(result.conflicts)}", err=True)
            raise typer.Exit(1)
    for key in keys:
        _run_plugin(key, force)


def _run_plugin(key: str, force: bool) -> None:
    """One of kubebuilder's optional plugins, in the project at or above the current folder."""
    from pyscaffold_op.errors import ProjectError
    from pyscaffold_op.project import PROJECT_FILE, find_project_root, load_project
    from pyscaffold_op.scaffold import plugins
    from pyscaffold_op.scaffold.transaction import FilePlan, apply

    root = find_project_root(Path.cwd())
    if root is None:
        raise ProjectError(
            f"no PROJECT file in {Path.cwd()} or above: run this in a project made by `pyop init`"
        )
    if key == plugins.HELM:  # the chart first: a failed chart records nothing
        _helm_chart(force)
        plan = FilePlan(root)
        plan.write(PROJECT_FILE, plugins.with_plugin(load_project(root), key, {"output": "dist"}).dump())
    elif key == plugins.GRAFANA:
        from pyscaffold_op.scaffold.grafana import plan_grafana

        plan = plan_grafana(root, load_project(root))
    else:
        from pyscaffold_op.scaffold.autoupdate import plan_autoupdate

        plan = plan_autoupdate(root, load_project(root))
    for relpath in apply(plan):
        typer.echo(f"wrote {relpath}")


def _helm_chart(force: bool) -> None:
    from pyscaffold_op.commands.helm import create_helm_chart

    create_helm_chart(manifests=None, output_dir="dist", force=force)


@delete_app.command("api")
def delete_api(
    group: str = typer.Option(..., "--group", help="API group of the kind, as given to `create api`."),
    version: str = typer.Option(..., "--version", help="API version, e.g. v1alpha1."),
    kind: str = typer.Option(..., "--kind", help="Kind, e.g. CronJob."),
    force: bool = typer.Option(
        False, "--force/--no-force", help="Delete the API's files even if you edited them since."
    ),
    make: bool = typer.Option(True, "--make/--no-make", help="Run `make manifests` afterwards."),
) -> None:
    """Remove an API and its controller: exactly what `pyop create api` added."""
    from pyscaffold_op.scaffold.delete import delete_api as plan_delete
    from pyscaffold_op.scaffold.inputs import DeleteOptions

    root, plan = plan_delete(DeleteOptions(group=group, version=version, kind=kind, force=force), Path.cwd())
    _apply_deletion(root, plan, make=make)


@delete_app.command("webhook")
def delete_webhook(
    group: str = typer.Option(..., "--group", help="API group of the kind, as given to `create webhook`."),
    version: str = typer.Option(..., "--version", help="API version, e.g. v1alpha1."),
    kind: str = typer.Option(..., "--kind", help="Kind, e.g. CronJob."),
    defaulting: bool = typer.Option(False, "--defaulting", help="Delete the defaulting webhook."),
    validation: bool = typer.Option(
        False, "--programmatic-validation", help="Delete the validating webhook."
    ),
    conversion: bool = typer.Option(False, "--conversion", help="Delete the conversion webhook."),
    force: bool = typer.Option(
        False, "--force/--no-force", help="Delete the webhook's files even if you edited them since."
    ),
    make: bool = typer.Option(True, "--make/--no-make", help="Run `make manifests` afterwards."),
) -> None:
    """Remove a kind's webhooks (only the types named; all of them when none is): exactly what
    `pyop create webhook` added."""
    from pyscaffold_op.scaffold.delete_webhook import delete_webhook as plan_delete
    from pyscaffold_op.scaffold.inputs import DeleteWebhookOptions

    options = DeleteWebhookOptions(
        group=group,
        version=version,
        kind=kind,
        defaulting=defaulting,
        validation=validation,
        conversion=conversion,
        force=force,
    )
    root, plan = plan_delete(options, Path.cwd())
    _apply_deletion(root, plan, make=make)


def _apply_deletion(root: Path, plan: FilePlan, *, make: bool) -> None:
    """Apply a delete command's plan, list what it wrote and removed, then `make manifests`."""
    from pyscaffold_op.scaffold.transaction import apply, removed

    gone = removed(plan)
    for relpath in apply(plan):
        typer.echo(f"wrote {relpath}")
    for relpath in gone:
        typer.echo(f"removed {relpath}")
    if make:
        from pyscaffold_op.scaffold.make import run_make

        run_make(root, "manifests")


def register(app: typer.Typer) -> None:
    """Add `pyop edit` and `pyop delete` to the root app."""
    app.command("edit")(edit)
    app.add_typer(
        delete_app,
        name="delete",
        help="Remove what a create command added (an API, a webhook).",
    )
