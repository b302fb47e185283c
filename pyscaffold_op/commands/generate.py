"""`pyop generate crd|rbac|manifests|models` (owned by the generator).

Heavy work lives in `pyscaffold_op.gen`, imported inside each command so `pyop --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(help="Generate CRDs, RBAC and models (our controller-gen).", no_args_is_help=True)

_CHECK = typer.Option(
    False, "--check", help="Write nothing: validate config/samples and fail if any file is out of date."
)
_MAX_DESC_LEN = typer.Option(
    None,
    "--max-desc-len",
    min=0,
    metavar="N",
    help="Cut descriptions to N bytes at a sentence end; 0 drops them (controller-gen's crd:maxDescLen).",
)
_ROOT = typer.Option(None, "--root", help="Project root (default: the nearest folder with a PROJECT file).")


def _root(root: Path | None) -> Path:
    from pyscaffold_op.errors import ProjectError
    from pyscaffold_op.project import find_project_root

    found = root if root is not None else find_project_root(Path.cwd())
    if found is None:
        raise ProjectError(f"no PROJECT file in {Path.cwd()} or above: run this from a pyop project")
    return found


def _report(root: Path, changed: list[Path], check: bool, sample_problems: list[str] | None = None) -> None:
    from pyscaffold_op.errors import GenerateError

    shown = [str(p.relative_to(root)) if p.is_relative_to(root) else str(p) for p in changed]
    if check:
        if shown:
            raise GenerateError(f"out of date (run `pyop generate manifests`): {', '.join(shown)}")
        typer.echo("manifests are up to date")
        return
    for name in shown:
        typer.echo(f"wrote {name}")
    # Not an error here (a sample may lag behind types being edited); `--check` fails on them.
    for problem in sample_problems or []:
        typer.echo(f"warning: config/samples/{problem}", err=True)
    if sample_problems:
        typer.echo("  (the API server would refuse or change these samples; --check fails on them)", err=True)


@app.command("crd")
def crd(check: bool = _CHECK, root: Path | None = _ROOT, max_desc_len: int | None = _MAX_DESC_LEN) -> None:
    """Write config/crd/bases/<group>_<plural>.yaml for every kind of the project."""
    from pyscaffold_op.gen import generate_crds

    project_root = _root(root)
    problems: list[str] = []
    changed = generate_crds(project_root, check=check, max_desc_len=max_desc_len, sample_problems=problems)
    _report(project_root, changed, check, problems)


@app.command("rbac")
def rbac(check: bool = _CHECK, root: Path | None = _ROOT) -> None:
    """Write config/rbac/role.yaml from the +kubebuilder:rbac markers of the controllers."""
    from pyscaffold_op.gen import generate_rbac

    project_root = _root(root)
    _report(project_root, generate_rbac(project_root, check=check), check)


@app.command("manifests")
def manifests(
    check: bool = _CHECK, root: Path | None = _ROOT, max_desc_len: int | None = _MAX_DESC_LEN
) -> None:
    """Write the CRDs and role.yaml (what `make manifests` runs)."""
    from pyscaffold_op.gen import generate_manifests

    project_root = _root(root)
    problems: list[str] = []
    changed = generate_manifests(
        project_root, check=check, max_desc_len=max_desc_len, sample_problems=problems
    )
    _report(project_root, changed, check, problems)


@app.command("models")
def models(
    from_crd: Path = typer.Option(..., "--from-crd", exists=True, dir_okay=False, help="A CRD YAML file."),
    version: str | None = typer.Option(
        None, "--version", help="The version to use (default: the storage one)."
    ),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write here instead of standard output."),
) -> None:
    """Turn a third-party CRD into pydantic models (Kubernetes extensions kept)."""
    from pyscaffold_op.gen.models import models_from_crd_file

    code = models_from_crd_file(from_crd, version=version)
    if output is None:
        typer.echo(code, nl=False)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(code, encoding="utf-8")
        typer.echo(f"wrote {output}")
