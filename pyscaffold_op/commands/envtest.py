"""`pyop envtest serve` (owned by the API server emulator)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Run the in-process Kubernetes API server emulator.", no_args_is_help=True)
