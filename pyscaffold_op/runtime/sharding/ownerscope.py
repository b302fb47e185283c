"""Is the kind an owner reference names namespaced? What sharding `by="owner"` needs to hash a child under
the key its owner's own controller hashes: `namespace/name` for a namespaced owner, `name` for a
cluster-scoped one (a namespaced child may have a cluster-scoped owner; never the reverse).

An owner reference carries only apiVersion, kind and name. The scope comes from, in order:
1. the `for_()` kinds of the manager's sharded controllers: the controller whose key must match;
2. the built-in kinds (`pyscaffold_op.models.spec`, loaded only when 1. does not know the kind);
3. otherwise namespaced, the usual case (an owner no sharded controller reconciles needs only a key
   every replica computes alike, which any rule gives).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable


def builtin_scope(group: str, kind: str) -> bool | None:
    """Whether a built-in kind (any version) is namespaced; None for a kind the models do not have."""
    from pyscaffold_op.models import spec

    for (g, _v, k), name in spec.kinds().items():
        if g == group and k == kind:
            return bool(spec.definition(name)["x-pyop-resource"]["namespaced"])
    return None


class OwnerScopes:
    """(group, kind) -> namespaced, memoised; `forget()` when the set of controllers changes."""

    def __init__(self, known: Callable[[], Iterable[tuple[str, str, bool]]]) -> None:
        self._known = known  # (group, kind, namespaced) of the sharded controllers' for_() kinds
        self._memo: dict[tuple[str, str], bool] = {}

    def namespaced(self, group: str, kind: str) -> bool:
        key = (group, kind)
        found = self._memo.get(key)
        if found is None:
            found = self._lookup(group, kind)
            self._memo[key] = found
        return found

    def _lookup(self, group: str, kind: str) -> bool:
        for g, k, namespaced in self._known():
            if (g, k) == (group, kind):
                return namespaced
        builtin = builtin_scope(group, kind)
        return True if builtin is None else builtin

    def forget(self) -> None:
        self._memo.clear()
