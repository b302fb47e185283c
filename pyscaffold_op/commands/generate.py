"""`pyop generate crd|rbac|manifests|models` (owned by the generator)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Generate CRDs, RBAC and models (our controller-gen).", no_args_is_help=True)
