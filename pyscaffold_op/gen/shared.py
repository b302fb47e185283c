"""The generator's name for `apiextensions.shared`: schema subtrees shared by many CRDs of one run."""

from __future__ import annotations

from pyscaffold_op.apiextensions.shared import is_shared, share

__all__ = ["is_shared", "share"]
