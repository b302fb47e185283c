"""A structural schema compiled into closures: pruning, defaulting and validation without reading the
schema dict per value (`schema.get` per keyword per value was most of a custom resource's write).

`compile_schema(schema)` gives one `_Node` per schema dict; a node builds each of its three closures
(`pruning.pruner`, `defaulting.defaulter`, `validation.validator`) on first use, since a CRD with a
PodTemplateSpec has thousands of nodes and an object visits a few. A closure holds only the keywords
its node has, with properties resolved to child nodes. Nodes are shared by identity, so a subtree
that many properties share (`shared.share`) is compiled once.

The compiled form reads the schema when it is built: a changed schema needs a new `compile_schema`.
The emulator keeps one per served CRD version (`ServedResource.compiled_schema`, rebuilt when the
CRD changes); the functions `prune`, `apply_defaults` and `validate` compile per call.
"""

from __future__ import annotations

from typing import Any

from pyscaffold_op.apiextensions.defaulting import Default, defaulter
from pyscaffold_op.apiextensions.pruning import Prune, prune_meta, pruner
from pyscaffold_op.apiextensions.validation import Validate, validator
from pyscaffold_op.apimachinery.fielderrors import Cause

__all__ = ["CompiledSchema", "compile_schema"]

Schema = dict[str, Any]


class CompiledSchema:
    """One schema's pruning, defaulting and validation, compiled node by node as values reach them."""

    __slots__ = ("_nodes", "_root", "schema")

    def __init__(self, schema: Schema | None) -> None:
        self.schema = schema
        self._nodes: dict[int, _Node] = {}  # id of a schema dict -> its node; `schema` keeps ids alive
        # no schema: only ObjectMeta is pruned, nothing defaulted or checked
        self._root = self.node(schema) if schema is not None else _NONE

    def node(self, s: Schema) -> _Node:
        found = self._nodes.get(id(s))
        if found is None:
            found = self._nodes[id(s)] = _Node(s, self)
        return found

    def prune(self, obj: Any, *, is_resource_root: bool = True) -> list[str]:
        """Remove, in place, the fields the schema does not specify; the paths removed."""
        removed: list[str] = []
        if is_resource_root:
            prune_meta(obj, "", removed)
        self._root.prune(obj, is_resource_root, "", removed)
        return removed

    def apply_defaults(self, obj: Any) -> Any:
        """Fill missing fields' defaults in place (and drop non-nullable nulls); returns `obj`."""
        self._root.default(obj)
        return obj

    def validate(self, value: Any, path: str = "") -> list[Cause]:
        """Causes (reason, message, field) for every violation; empty when valid."""
        errs: list[Cause] = []
        self._root.validate(value, path, errs)
        return errs


def compile_schema(schema: Schema | None) -> CompiledSchema:
    return CompiledSchema(schema)


class _Node:
    """One schema dict. `validate`, `prune` and `default` start as stubs that build the closure,
    put it in their place and run it, so later calls go straight to the closure."""

    __slots__ = ("default", "owner", "prune", "s", "validate")

    def __init__(self, s: Schema, owner: CompiledSchema) -> None:
        self.s = s
        self.owner = owner
        self.validate: Validate = self._first_validate
        self.prune: Prune = self._first_prune
        self.default: Default = self._first_default

    def _first_validate(self, value: Any, path: str, errs: list[Cause]) -> None:
        self.validate = validator(self.s, self.owner.node)
        self.validate(value, path, errs)

    def _first_prune(self, value: Any, resource_root: bool, path: str, removed: list[str]) -> None:
        self.prune = pruner(self.s, self.owner.node)
        self.prune(value, resource_root, path, removed)

    def _first_default(self, value: Any) -> None:
        self.default = defaulter(self.s, self.owner.node)
        self.default(value)


class _NoSchema:
    __slots__ = ()

    @staticmethod
    def validate(value: Any, path: str, errs: list[Cause]) -> None:
        pass

    @staticmethod
    def prune(value: Any, resource_root: bool, path: str, removed: list[str]) -> None:
        pass

    @staticmethod
    def default(value: Any) -> None:
        pass


_NONE: Any = _NoSchema()
