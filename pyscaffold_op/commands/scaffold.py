"""`pyop init`, `pyop create api` (owned by the scaffolder)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the scaffolding commands to the root app."""
