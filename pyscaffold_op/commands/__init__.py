"""Typer command groups, one module per area. Keep imports here light: heavy ones go inside commands."""
