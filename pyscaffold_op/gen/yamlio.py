"""The generator's YAML output: `pyscaffold_op.yamlio`'s controller-gen layout, with the subtrees
`gen.shared` marks written once and spliced in."""

from __future__ import annotations

from typing import Any

from pyscaffold_op.gen.shared import is_shared
from pyscaffold_op.yamlio import dump_documents as _dump_documents
from pyscaffold_op.yamlio import write_if_changed

__all__ = ["dump_documents", "write_if_changed"]


def dump_documents(docs: list[dict[str, Any]]) -> str:
    """Each document after a `---` line, keys sorted, no line wrapping."""
    return _dump_documents(docs, is_shared=is_shared)
