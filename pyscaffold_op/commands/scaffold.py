"""`pyop init`, `pyop create api` (owned by the scaffolder).

Thin: parse the flags, call `pyscaffold_op.scaffold`, print what was written. The scaffolding modules
(and jinja2, PyYAML, ruamel.yaml behind them) are imported inside the commands so `pyop --help` is fast.
"""

from __future__ import annotations

from pathlib import Path

import typer

create_app = typer.Typer(
    help="Scaffold a Kubernetes API (types, controller, samples, RBAC).", no_args_is_help=True
)


# options create api and create webhook share (kubebuilder's external-kind flags)
EXTERNAL_API_DOMAIN = typer.Option(
    None, "--external-api-domain", help="Domain of the external API's group, e.g. io for cert-manager.io."
)
EXTERNAL_API_MODULE = typer.Option(
    None,
    "--external-api-module",
    help="Python module defining the external kind's model. Otherwise (or given a Go module such as "
    "github.com/cert-manager/cert-manager@v1.21.1, recorded in PROJECT as given) a placeholder model "
    "is written under src/<pkg>/external/.",
)


def _report(verb: str, written: list[str]) -> None:
    for relpath in written:
        typer.echo(f"{verb} {relpath}")


def init(
    domain: str = typer.Option(
        ..., "--domain", help="Domain of the API groups, e.g. viper.run (DNS-1123 subdomain)."
    ),
    repo: str | None = typer.Option(
        None,
        "--repo",
        help="Repository path, e.g. github.com/owner/name; its last element names the Python package. "
        "Default: the folder's name (kubebuilder: the module of go.mod).",
    ),
    project_name: str | None = typer.Option(
        None,
        "--project-name",
        help="Project name (DNS-1123 label). Default: the folder's name, lower-cased, as in kubebuilder.",
    ),
    owner: str | None = typer.Option(
        None, "--owner", help='Copyright owner in the license headers. Default: "The <project-name> Authors".'
    ),
    license_: str = typer.Option(
        "apache2", "--license", help="License header of generated files: apache2 or none."
    ),
    namespaced: bool = typer.Option(
        False,
        "--namespaced/--no-namespaced",
        help="The manager watches only its own namespace (Role/RoleBinding RBAC).",
    ),
    multigroup: bool = typer.Option(
        False,
        "--multigroup/--no-multigroup",
        help="Put APIs under api/<group>/<version>/ so the project can hold several groups.",
    ),
    plugins: str | None = typer.Option(
        None,
        "--plugins",
        help="kubebuilder's spelling: go/v4 (go.kubebuilder.io/v4) names the one layout pyop scaffolds.",
    ),
) -> None:
    """Initialize a new operator project in the current folder (like `kubebuilder init`)."""
    from pathlib import Path

    from pyscaffold_op import names
    from pyscaffold_op.errors import ValidationError
    from pyscaffold_op.scaffold.init import InitOptions, init_project

    if plugins is not None:
        unknown = [p.strip() for p in plugins.split(",") if p.strip() not in INIT_PLUGIN_NAMES]
        if unknown:
            raise ValidationError(
                f"--plugins {plugins}: unknown plugin {unknown[0]!r}; pyop init scaffolds one layout, "
                "kubebuilder's go/v4 (go.kubebuilder.io/v4)"
            )
    repo_from_folder = repo is None
    if repo is None:  # kubebuilder reads go.mod's module; a Python project has the folder's name
        repo = Path.cwd().name
    if project_name is None:  # kubebuilder: the folder's name
        folder = Path.cwd().name
        project_name = names.project_name_from_folder(folder)
        try:
            names.validate_dns1123_label(project_name, "project name")
        except ValidationError as err:
            raise ValidationError(
                f"invalid project name {project_name!r} (the folder's name {folder!r}): must be a DNS-1123 "
                "label (lower-case letters, digits and '-'); pass --project-name"
            ) from err
    options = InitOptions(
        domain=domain,
        repo=repo,
        project_name=project_name,
        owner=owner,
        license=license_,
        namespaced=namespaced,
        multigroup=multigroup,
    )
    try:
        written = init_project(options, Path.cwd())
    except ValidationError as err:
        if repo_from_folder and str(err).startswith("invalid repo"):
            raise ValidationError(f"{err} (no --repo was given: the folder's name stood in)") from err
        raise
    _report("wrote", written)
    typer.echo("Next: pyop create api --group <group> --version <version> --kind <Kind>")


# kubebuilder's names of its base plugin: pyop's layout is its Python equivalent
INIT_PLUGIN_NAMES = ("go/v4", "go.kubebuilder.io/v4")


@create_app.command("api")
def create_api(
    group: str = typer.Option(
        ..., "--group", help="API group, e.g. batch (DNS-1123 subdomain; '' only for core)."
    ),
    version: str = typer.Option(..., "--version", help="API version: v<N>[alpha<N>|beta<N>], e.g. v1alpha1."),
    kind: str = typer.Option(..., "--kind", help="Kind, CamelCase starting upper-case, e.g. CronJob."),
    resource: bool | None = typer.Option(
        None,
        "--resource/--no-resource",
        help=(
            "Scaffold the API types, samples and RBAC. Default: on, off for external kinds. With "
            "--resource=false a core group (apps, batch, core, ...) names the built-in kind, as in "
            "kubebuilder."
        ),
    ),
    controller: bool = typer.Option(True, "--controller/--no-controller", help="Scaffold the controller."),
    namespaced: bool = typer.Option(
        True,
        "--namespaced/--no-namespaced",
        " /--cluster-scoped",
        help="Whether objects of the kind live in a namespace (--cluster-scoped: --no-namespaced).",
    ),
    plural: str | None = typer.Option(
        None,
        "--plural",
        help="Resource plural (lower-case). Default: computed from the kind like kubebuilder.",
    ),
    force: bool = typer.Option(
        False, "--force/--no-force", help="Overwrite the files of an API that already exists."
    ),
    make: bool = typer.Option(True, "--make/--no-make", help="Run `make manifests` afterwards."),
    external_api_path: str | None = typer.Option(
        None,
        "--external-api-path",
        help="The kind belongs to another project's API: its path (recorded in PROJECT), e.g. "
        "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1.",
    ),
    external_api_domain: str | None = EXTERNAL_API_DOMAIN,
    external_api_module: str | None = EXTERNAL_API_MODULE,
    controller_name: str | None = typer.Option(
        None,
        "--controller-name",
        help="Name of the controller (DNS-1123 label), to add another controller for a kind.",
    ),
    plugins: str | None = typer.Option(
        None,
        "--plugins",
        help="kubebuilder's spelling: deploy-image/v1-alpha (the same as giving --image).",
    ),
    image: str | None = typer.Option(
        None,
        "--image",
        help="Scaffold a controller that runs this image in a Deployment the kind owns "
        "(kubebuilder's deploy-image plugin), e.g. memcached:1.6.26-alpine3.19.",
    ),
    image_container_command: str | None = typer.Option(
        None,
        "--image-container-command",
        help='With --image: the container command, comma-separated, e.g. "memcached,--memory-limit=64,-v".',
    ),
    image_container_port: str | None = typer.Option(
        None,
        "--image-container-port",
        help="With --image: the port the container listens on (1-65535); adds spec.containerPort.",
    ),
    run_as_user: str | None = typer.Option(
        None, "--run-as-user", help="With --image: the container's numeric user ID (runAsUser)."
    ),
    ssa: bool = typer.Option(
        False,
        "--ssa",
        help="The controller writes with server-side apply: typed apply configurations "
        "(runtime.apply_configuration) and client.apply with a field owner; recorded in PROJECT "
        "(api.ssa). Needs --resource.",
    ),
    daemon: bool = typer.Option(
        False,
        "--daemon",
        help="The controller also runs a daemon per object while it exists, on the leader only "
        "(kopf's @kopf.daemon: builder.daemon), with a test of its start and stop.",
    ),
    timer: bool = typer.Option(
        False,
        "--timer",
        help="The controller also calls a timer per object every minute once the object has been quiet "
        "for 10 s (kopf's @kopf.timer(interval=, idle=): builder.timer), with a test on a fake clock.",
    ),
) -> None:
    """Scaffold a Kubernetes API and its controller (like `kubebuilder create api`)."""
    from pathlib import Path

    from pyscaffold_op.project import load_project
    from pyscaffold_op.scaffold import deployimage
    from pyscaffold_op.scaffold.api import api_warnings, storage_version_missing
    from pyscaffold_op.scaffold.api import create_api as scaffold_api
    from pyscaffold_op.scaffold.inputs import ApiOptions

    if resource is None:  # kubebuilder: a new resource unless the kind is external (or the core group "")
        resource = not (external_api_path or group == "")
    deploy_image = deployimage.parse(
        plugins=plugins,
        image=image,
        command=image_container_command,
        port=image_container_port,
        run_as_user=run_as_user,
    )
    options = ApiOptions(
        deploy_image=deploy_image,
        group=group,
        version=version,
        kind=kind,
        resource=resource,
        external_api_path=external_api_path,
        external_api_domain=external_api_domain,
        external_api_module=external_api_module,
        controller_name=controller_name,
        controller=controller,
        namespaced=namespaced,
        plural=plural,
        force=force,
        ssa=ssa,
        daemon=daemon,
        timer=timer,
    )
    root, written = scaffold_api(options, Path.cwd())
    _report("wrote", written)
    project = load_project(root)
    for warning in api_warnings(options, project):
        typer.echo(warning, err=True)
    if make and storage_version_missing(options, project, root):
        typer.echo(
            "note: `make manifests` not run: it fails until one version is the storage version "
            "(pyop create webhook --conversion marks the hub; or add the marker, then run make manifests)",
            err=True,
        )
        make = False
    if make:
        from pyscaffold_op.scaffold.make import run_make

        run_make(root, "manifests")
    typer.echo(next_steps(written, make=make, deploy_image=options.deploy_image is not None))


def next_steps(written: list[str], *, make: bool, deploy_image: bool = False) -> str:
    """kubebuilder's closing hint: where to write the API and the reconcile logic, and what to run."""
    types = next((path for path in written if path.endswith("_types.py")), None)
    controller = next(
        (path for path in written if "/controllers/" in path and path.endswith("_controller.py")), None
    )
    steps = []
    if deploy_image and controller is not None:
        # the deploy-image controller is complete: what is left is the user's own additions
        steps.append(f"the controller in {controller} already runs the image;")
        steps.append("add your own spec fields and logic if you need more,")
    else:
        if types is not None:
            steps.append(f"define the spec and status in {types},")
        if controller is not None:
            steps.append(f"write the reconcile logic in {controller},")
    if not steps:  # --force rewrote nothing: the files were already there
        steps.append("edit the API types and the reconciler,")
    steps.append(f"then {'re' if make else ''}generate the manifests (CRDs, RBAC) and run the tests:")
    return "Next: " + "\n      ".join(steps) + "\n$ make manifests test"


def upgrade(
    dry_run: bool = typer.Option(
        False, "--dry-run/--no-dry-run", help="Print the diff and the conflicts; change nothing."
    ),
    base_templates: Path | None = typer.Option(
        None,
        "--base-templates",
        metavar="<path>",
        help="The templates/init folder the project was made from, for a revision this pyop does not ship "
        "(it ships every earlier release's).",
    ),
) -> None:
    """Re-render the project from the current init template and merge it with your edits (3-way)."""
    from pyscaffold_op.scaffold.templates import templates_dir
    from pyscaffold_op.scaffold.upgrade import apply_upgrade, plan_upgrade

    plan = plan_upgrade(Path.cwd(), templates=templates_dir() / "init", base_templates=base_templates)
    if dry_run:
        typer.echo(plan.diff(), nl=False)
    elif plan.files or plan.removed:
        apply_upgrade(plan)
    done = {"update": "updated", "remove": "removed", "merge": "merged", "conflict": "conflict in"}
    lines = [("remove" if path in plan.removed else "update", path) for path in plan.updated]
    lines += [("merge", path) for path in plan.merged] + [("conflict", path) for path in plan.conflicts]
    for action, relpath in lines:
        typer.echo(f"would {action} {relpath}" if dry_run else f"{done[action]} {relpath}")
    for relpath in plan.kept:
        typer.echo(f"kept {relpath}: the template changed it, but you removed or edited it; compare by hand")
    if not lines and not plan.kept:
        typer.echo("the project is up to date with the template")
    if plan.conflicts and not dry_run:
        typer.echo(f"resolve the <<<<<<< conflict markers in: {', '.join(plan.conflicts)}", err=True)
        raise typer.Exit(1)


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
    spoke: list[str] = typer.Option(
        [], "--spoke", metavar="<version>", help="A spoke version of the kind (repeatable)."
    ),
    defaulting_path: str | None = typer.Option(
        None,
        "--defaulting-path",
        help="URL path of the defaulting webhook (default: /mutate-<group>-<version>-<kind>).",
    ),
    validation_path: str | None = typer.Option(
        None, "--validation-path", help="URL path of the validating webhook (default: /validate-...)."
    ),
    plural: str | None = typer.Option(
        None,
        "--plural",
        help="The kind's resource plural, e.g. admirales (kubebuilder's flag). Default: the one `create api` "
        "recorded in PROJECT, which it must match.",
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite the webhook files that already exist."),
    make: bool = typer.Option(True, "--make/--no-make", help="Run `make manifests` afterwards."),
    external_api_path: str | None = typer.Option(
        None,
        "--external-api-path",
        help="The kind belongs to another project's API (no `create api` needed): its path, recorded in "
        "PROJECT, e.g. github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1.",
    ),
    external_api_domain: str | None = EXTERNAL_API_DOMAIN,
    external_api_module: str | None = EXTERNAL_API_MODULE,
) -> None:
    """Scaffold admission and conversion webhooks for an API (like `kubebuilder create webhook`)."""
    from pathlib import Path

    from pyscaffold_op.scaffold.inputs import WebhookOptions
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
        plural=plural,
        external_api_path=external_api_path,
        external_api_domain=external_api_domain,
        external_api_module=external_api_module,
    )
    root, written = scaffold_webhook(options, Path.cwd())
    _report("wrote", written)
    if make:
        from pyscaffold_op.scaffold.make import run_make

        run_make(root, "manifests")


def register(app: typer.Typer) -> None:
    """Add the scaffolding commands to the root app."""
    from pyscaffold_op.commands import helm

    helm.register(create_app)
    app.command("init")(init)
    app.command("upgrade")(upgrade)
    app.add_typer(
        create_app, name="create", help="Scaffold a Kubernetes API (types, controller, samples, RBAC)."
    )
