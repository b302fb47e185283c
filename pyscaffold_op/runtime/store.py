"""The informer's store: objects by "namespace/name" key, plus indices (client-go's cache.Indexer).

Built-in indices: `namespace` (metadata.namespace) and `owner` (uid of every owner reference). Custom
index functions map an object to a list of index values; `by_index(name, value)` answers lookups.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from pyscaffold_op.runtime import objmeta

IndexFunc = Callable[[Any], list[str]]

NAMESPACE_INDEX = "namespace"
OWNER_INDEX = "owner"


def _namespace_index(obj: Any) -> list[str]:
    return [objmeta.namespace(obj)]


def _owner_index(obj: Any) -> list[str]:
    return [ref.uid for ref in objmeta.owner_references(obj)]


class Indexer:
    def __init__(self, indexers: dict[str, IndexFunc] | None = None) -> None:
        self._items: dict[str, Any] = {}
        self._index_funcs: dict[str, IndexFunc] = {
            NAMESPACE_INDEX: _namespace_index,
            OWNER_INDEX: _owner_index,
        }
        self._index_funcs.update(indexers or {})
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._index_funcs}
        self._values: dict[str, dict[str, list[str]]] = {name: {} for name in self._index_funcs}

    def add_index(self, name: str, fn: IndexFunc) -> None:
        """Add an index; existing objects are indexed right away."""
        if name in self._index_funcs:
            raise ValueError(f"index {name!r} already exists")
        self._index_funcs[name] = fn
        self._indices[name] = {}
        self._values[name] = {}
        for key, obj in self._items.items():
            self._index_one(name, key, obj)

    def has_index(self, name: str) -> bool:
        return name in self._index_funcs

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: str) -> bool:
        return key in self._items

    def get(self, key: str) -> Any | None:
        return self._items.get(key)

    def list_keys(self) -> list[str]:
        return list(self._items)

    def values(self) -> Iterator[Any]:
        return iter(list(self._items.values()))

    def put(self, key: str, obj: Any) -> Any | None:
        """Insert or replace; returns the previous object."""
        old = self._items.get(key)
        if old is not None:
            self._unindex(key)
        self._items[key] = obj
        for name in self._index_funcs:
            self._index_one(name, key, obj)
        return old

    def delete(self, key: str) -> Any | None:
        old = self._items.pop(key, None)
        if old is not None:
            self._unindex(key)
        return old

    def by_index(self, name: str, value: str) -> list[Any]:
        if name not in self._indices:
            raise KeyError(f"no index named {name!r}")
        return [self._items[k] for k in self._indices[name].get(value, ())]

    def _index_one(self, name: str, key: str, obj: Any) -> None:
        values = self._index_funcs[name](obj) or []
        self._values[name][key] = values
        index = self._indices[name]
        for v in values:
            index.setdefault(v, set()).add(key)

    def _unindex(self, key: str) -> None:
        for name, index in self._indices.items():
            for v in self._values[name].pop(key, ()):
                keys = index.get(v)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[v]
