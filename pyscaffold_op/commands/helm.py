"""`pyop create helm-chart` (kubebuilder's `edit --plugins=helm/v2-alpha`): thin, the work is in
`pyscaffold_op.scaffold.helm`, imported inside the command so `pyop --help` stays fast."""

from __future__ import annotations

import typer


def create_helm_chart(
    manifests: str | None = typer.Option(
        None,
        "--manifests",
        metavar="<file>",
        help='kustomize output to chart ("-": stdin). Default: run `kubectl kustomize config/default`.',
    ),
    output_dir: str = typer.Option(
        "dist", "--output-dir", metavar="<folder>", help="The chart goes to <folder>/chart."
    ),
    force: bool = typer.Option(
        False,
        "--force/--no-force",
        help="Also rewrite Chart.yaml, values.yaml, .helmignore and templates/_helpers.tpl.",
    ),
) -> None:
    """Write a Helm chart from config/default into dist/chart (like kubebuilder's helm/v2-alpha plugin).

    Templates are rewritten on every run (`make helm` runs it after `make manifests`); your
    Chart.yaml, values.yaml, .helmignore and _helpers.tpl are kept unless --force.
    """
    from pathlib import Path

    from pyscaffold_op.scaffold.helm import HelmOptions
    from pyscaffold_op.scaffold.helm import create_helm_chart as scaffold_chart

    options = HelmOptions(manifests=manifests, output_dir=output_dir, force=force)
    result = scaffold_chart(options, Path.cwd())
    for relpath in result.written:
        typer.echo(f"wrote {relpath}")
    for relpath in result.kept:
        typer.echo(f"kept {relpath} (--force rewrites it)")
    if result.missing_values:
        missing = ", ".join(result.missing_values)
        typer.echo(
            f"warning: the kept values.yaml lacks {missing}, which the templates read: add them "
            "(see a fresh one with --force --output-dir <other folder>)",
            err=True,
        )
    if not result.written:
        typer.echo("the chart is up to date")


def register(create_app: typer.Typer) -> None:
    create_app.command("helm-chart")(create_helm_chart)
