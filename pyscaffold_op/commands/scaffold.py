"""`pyop init`, `pyop create api` (owned by the scaffolder).

Thin: parse the flags, call `pyscaffold_op.scaffold`, print what was written. The scaffolding modules
(and copier, jinja2, ruamel.yaml behind them) are imported inside the commands so `pyop --help` is fast.
"""

from __future__ import annotations

import typer

create_app = typer.Typer(
    help="Scaffold a Kubernetes API (types, controller, samples, RBAC).", no_args_is_help=True
)


def _report(verb: str, written: list[str]) -> None:
    for relpath in written:
        typer.echo(f"{verb} {relpath}")


def init(
    domain: str = typer.Option(
        ..., "--domain", help="Domain of the API groups, e.g. viper.run (DNS-1123 subdomain)."
    ),
    repo: str = typer.Option(
        ...,
        "--repo",
        help="Repository path, e.g. github.com/owner/name; its last element names the Python package.",
    ),
    project_name: str | None = typer.Option(
        None, "--project-name", help="Project name (DNS-1123 label). Default: the repo's last element."
    ),
    owner: str | None = typer.Option(
        None, "--owner", help='Copyright owner in the license headers. Default: "The <project-name> Authors".'
    ),
    license_: str = typer.Option(
        "apache2", "--license", help="License header of generated files: apache2 or none."
    ),
    namespaced: bool = typer.Option(
        False, "--namespaced", help="The manager watches only its own namespace (Role/RoleBinding RBAC)."
    ),
    multigroup: bool = typer.Option(
        False,
        "--multigroup",
        help="Put APIs under api/<group>/<version>/ so the project can hold several groups.",
    ),
) -> None:
    """Initialize a new operator project in the current folder (like `kubebuilder init`)."""
    from pathlib import Path

    from pyscaffold_op.scaffold.init import InitOptions, init_project

    options = InitOptions(
        domain=domain,
        repo=repo,
        project_name=project_name,
        owner=owner,
        license=license_,
        namespaced=namespaced,
        multigroup=multigroup,
    )
    written = init_project(options, Path.cwd())
    _report("wrote", written)
    typer.echo("Next: pyop create api --group <group> --version <version> --kind <Kind>")


@create_app.command("api")
def create_api(
    group: str = typer.Option(
        ..., "--group", help="API group, e.g. batch (DNS-1123 subdomain; '' only for core)."
    ),
    version: str = typer.Option(..., "--version", help="API version: v<N>[alpha<N>|beta<N>], e.g. v1alpha1."),
    kind: str = typer.Option(..., "--kind", help="Kind, CamelCase starting upper-case, e.g. CronJob."),
    resource: bool = typer.Option(
        True, "--resource/--no-resource", help="Scaffold the API types, samples and RBAC."
    ),
    controller: bool = typer.Option(True, "--controller/--no-controller", help="Scaffold the controller."),
    namespaced: bool = typer.Option(
        True, "--namespaced/--cluster-scoped", help="Whether objects of the kind live in a namespace."
    ),
    plural: str | None = typer.Option(
        None,
        "--plural",
        help="Resource plural (lower-case). Default: computed from the kind like kubebuilder.",
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite the files of an API that already exists."),
    make: bool = typer.Option(True, "--make/--no-make", help="Run `make manifests` afterwards."),
) -> None:
    """Scaffold a Kubernetes API and its controller (like `kubebuilder create api`)."""
    from pathlib import Path

    from pyscaffold_op.project import load_project
    from pyscaffold_op.scaffold.api import ApiOptions, api_warnings
    from pyscaffold_op.scaffold.api import create_api as scaffold_api

    options = ApiOptions(
        group=group,
        version=version,
        kind=kind,
        resource=resource,
        controller=controller,
        namespaced=namespaced,
        plural=plural,
        force=force,
    )
    root, written = scaffold_api(options, Path.cwd())
    _report("wrote", written)
    for warning in api_warnings(options, load_project(root)):
        typer.echo(warning, err=True)
    if make:
        from pyscaffold_op.scaffold.make import run_make

        run_make(root, "manifests")


@create_app.command("webhook")
def create_webhook(
    group: str = typer.Option(..., "--group", help="API group of the kind, e.g. batch."),
    version: str = typer.Option(..., "--version", help="API version of the kind, e.g. v1."),
    kind: str = typer.Option(
        ..., "--kind", help="Kind, e.g. CronJob (its API must exist: `pyop create api`)."
    ),
    defaulting: bool = typer.Option(False, "--defaulting", help="A mutating webhook that sets defaults."),
    validation: bool = typer.Option(
        False, "--programmatic-validation", help="A validating webhook (validate_create/update/delete)."
    ),
    conversion: bool = typer.Option(
        False, "--conversion", help="A conversion webhook: this version is the hub, --spoke versions convert."
    ),
    spoke: list[str] = typer.Option([], "--spoke", help="A spoke version of the kind (repeatable)."),
    defaulting_path: str | None = typer.Option(
        None,
        "--defaulting-path",
        help="URL path of the defaulting webhook (default: /mutate-<group>-<version>-<kind>).",
    ),
    validation_path: str | None = typer.Option(
        None, "--validation-path", help="URL path of the validating webhook (default: /validate-...)."
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite the webhook files that already exist."),
    make: bool = typer.Option(True, "--make/--no-make", help="Run `make manifests` afterwards."),
) -> None:
    """Scaffold admission and conversion webhooks for an API (like `kubebuilder create webhook`)."""
    from pathlib import Path

    from pyscaffold_op.scaffold.webhook import WebhookOptions
    from pyscaffold_op.scaffold.webhook import create_webhook as scaffold_webhook

    options = WebhookOptions(
        group=group,
        version=version,
        kind=kind,
        defaulting=defaulting,
        validation=validation,
        conversion=conversion,
        spokes=tuple(spoke),
        defaulting_path=defaulting_path,
        validation_path=validation_path,
        force=force,
    )
    root, written = scaffold_webhook(options, Path.cwd())
    _report("wrote", written)
    if make:
        from pyscaffold_op.scaffold.make import run_make

        run_make(root, "manifests")


def register(app: typer.Typer) -> None:
    """Add the scaffolding commands to the root app."""
    app.command("init")(init)
    app.add_typer(
        create_app, name="create", help="Scaffold a Kubernetes API (types, controller, samples, RBAC)."
    )
