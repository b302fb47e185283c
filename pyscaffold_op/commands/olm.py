"""operator-sdk's commands: `pyop generate kustomize manifests`, `pyop generate bundle`,
`pyop bundle validate`, `pyop scorecard`. Thin: the work is in `pyscaffold_op.olm`, imported inside
each command so `pyop --help` stays fast."""

from __future__ import annotations

from pathlib import Path

import typer

kustomize_app = typer.Typer(
    help="Generate kustomize bases (operator-sdk's `generate kustomize`).", no_args_is_help=True
)
bundle_app = typer.Typer(help="Work with OLM bundles (operator-sdk's `bundle`).", no_args_is_help=True)


def _root() -> Path:
    from pyscaffold_op.errors import ProjectError
    from pyscaffold_op.project import find_project_root

    found = find_project_root(Path.cwd())
    if found is None:
        raise ProjectError(f"no PROJECT file in {Path.cwd()} or above: run this from a pyop project")
    return found


@kustomize_app.command("manifests")
def kustomize_manifests(
    check: bool = typer.Option(False, "--check", help="Write nothing: fail if the CSV base is out of date."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing (operator-sdk's -q)."),
) -> None:
    """Fill config/manifests/bases/<project>.clusterserviceversion.yaml from the API types and their
    +operator-sdk:csv:customresourcedefinitions markers; your edits to the base are kept."""
    from pyscaffold_op.errors import GenerateError
    from pyscaffold_op.olm.csvbase import generate_kustomize_manifests

    root = _root()
    changed = generate_kustomize_manifests(root, check=check)
    shown = [str(p.relative_to(root)) for p in changed]
    if check:
        if shown:
            raise GenerateError(f"out of date (run `pyop generate kustomize manifests`): {', '.join(shown)}")
        if not quiet:
            typer.echo("the CSV base is up to date")
        return
    if not quiet:
        for name in shown:
            typer.echo(f"wrote {name}")


def generate_bundle(
    manifests: str | None = typer.Option(
        None,
        "--manifests",
        metavar="<file>",
        help='kustomize output ("-": stdin). Default: run `kubectl kustomize config/manifests`.',
    ),
    version: str = typer.Option(
        "0.0.1", "--version", "-v", help="The bundle's semantic version (the CSV's spec.version)."
    ),
    channels: str | None = typer.Option(
        None, "--channels", help="Comma-separated channels (default: alpha)."
    ),
    default_channel: str | None = typer.Option(
        None, "--default-channel", help="The default channel (one of --channels)."
    ),
    package: str | None = typer.Option(
        None, "--package", help="The package name (default: the project name)."
    ),
    output_dir: str = typer.Option("bundle", "--output-dir", help="Where the bundle goes."),
    use_image_digests: bool = typer.Option(
        False,
        "--use-image-digests/--no-use-image-digests",
        help="Require every image to be pinned by digest.",
    ),
    overwrite: bool = typer.Option(
        True, "--overwrite/--no-overwrite", help="Rewrite metadata/annotations.yaml and bundle.Dockerfile."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing."),
) -> None:
    """Write an OLM bundle (bundle/manifests, bundle/metadata/annotations.yaml, bundle.Dockerfile)
    from the kustomize output of config/manifests, like `operator-sdk generate bundle`."""
    from pyscaffold_op.olm.bundle import BundleOptions
    from pyscaffold_op.olm.bundle import generate_bundle as generate
    from pyscaffold_op.olm.kustomize import read_manifests

    root = _root()
    text = read_manifests(root, manifests, "config/manifests")
    options = BundleOptions(
        version=version,
        channels=channels,
        default_channel=default_channel,
        package=package,
        output_dir=output_dir,
        use_image_digests=use_image_digests,
        overwrite=overwrite,
    )
    written = generate(root, text, options)
    if not quiet:
        for name in written:
            typer.echo(f"wrote {name}")


@bundle_app.command("validate")
def bundle_validate(
    bundle_dir: Path = typer.Argument(..., help="The bundle directory (holding manifests/ and metadata/)."),
    select_optional: str | None = typer.Option(
        None,
        "--select-optional",
        help="suite=operatorframework, or name=operatorhub|good-practices|alpha-deprecated-apis.",
    ),
    k8s_version: str | None = typer.Option(
        None, "--optional-values", help="k8s-version=<version> for alpha-deprecated-apis."
    ),
    output: str = typer.Option("text", "--output", "-o", help="text or json-alpha1."),
) -> None:
    """Validate a bundle with operator-sdk's validators (exit status 1 on any error)."""
    import json

    from pyscaffold_op.errors import ValidationError
    from pyscaffold_op.olm.validate import validate_bundle

    if not bundle_dir.is_dir():
        raise ValidationError(f"{bundle_dir}: no such bundle directory")
    version = k8s_version.partition("=")[2] if k8s_version else None
    report = validate_bundle(bundle_dir, select_optional, version)
    if output == "json-alpha1":
        outputs = [{"type": f.level, "message": f"[{f.rule}] {f.message}"} for f in report.findings]
        typer.echo(json.dumps({"passed": report.passed, "outputs": outputs or None}, indent=2))
    elif output == "text":
        for finding in report.findings:
            typer.echo(str(finding), err=finding.level == "error")
        if report.passed:
            typer.echo("All validation tests have completed successfully")
    else:
        raise ValidationError(f"--output {output!r}: use text or json-alpha1")
    if not report.passed:
        raise typer.Exit(1)


def scorecard(
    bundle_dir: Path = typer.Argument(..., help="The bundle directory."),
    selector: str | None = typer.Option(
        None, "--selector", "-l", help="Label selector of the tests, e.g. suite=olm."
    ),
    output: str = typer.Option("text", "--output", "-o", help="text, json or xunit."),
    config: Path | None = typer.Option(
        None,
        "--config",
        "-c",
        help="Scorecard configuration (default: the bundle's tests/scorecard/config.yaml).",
    ),
) -> None:
    """Run scorecard's basic and OLM suites on a bundle, the examples created in pyop's emulator."""
    from pyscaffold_op.errors import ValidationError
    from pyscaffold_op.olm.scorecard import format_results, run_scorecard

    if not bundle_dir.is_dir():
        raise ValidationError(f"{bundle_dir}: no such bundle directory")
    if output not in ("text", "json", "xunit"):
        raise ValidationError(f"--output {output!r}: use text, json or xunit")
    results = run_scorecard(bundle_dir, selector=selector, config=config)
    typer.echo(format_results(results, output), nl=False)
    if any(r["state"] != "pass" for status in results for r in status["status"]["results"]):
        raise typer.Exit(1)


def register(app: typer.Typer, generate_app: typer.Typer) -> None:
    generate_app.add_typer(kustomize_app, name="kustomize")
    generate_app.command("bundle")(generate_bundle)
    app.add_typer(bundle_app, name="bundle")
    app.command("scorecard")(scorecard)
