"""Developer tools of the pyop repository itself (golden-tree regeneration)."""
