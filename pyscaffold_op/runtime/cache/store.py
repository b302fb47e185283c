"""The informer's store: objects by "namespace/name" key, plus indices (client-go's cache.Indexer).

Built-in indices: `namespace` (metadata.namespace) and `owner` (uid of every owner reference). Custom
index functions map an object to a list of index values; `by_index(name, value)` answers lookups.

With a `decode` function the store keeps each object as the JSON bytes the server sent (`put(key, obj,
raw)`; indexes are computed from `obj` once, then it is dropped) and every read decodes a new object.
That costs about a quarter of a deep copy per read, makes every object a reader gets its own (nothing
a reader or handler does can reach the cache), and holds ~1.2 KB per 900-byte object where a pydantic
tree holds ~8.5 KB. Without `decode` it keeps the objects themselves and hands them out shared.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pyscaffold_op.runtime.objects import objmeta
from pyscaffold_op.runtime.objects.rawobj import RawObject

IndexFunc = Callable[[Any], list[str]]

NAMESPACE_INDEX = "namespace"
OWNER_INDEX = "owner"


def _namespace_index(obj: Any) -> list[str]:
    return [objmeta.namespace(obj)]


def _owner_index(obj: Any) -> list[str]:
    return [ref.uid for ref in objmeta.owner_references(obj)]


class Indexer:
    def __init__(
        self, indexers: dict[str, IndexFunc] | None = None, *, decode: Callable[[bytes], Any] | None = None
    ) -> None:
        self._decode = decode
        self._items: dict[str, Any] = {}
        self._index_funcs: dict[str, IndexFunc] = {
            NAMESPACE_INDEX: _namespace_index,
            OWNER_INDEX: _owner_index,
        }
        self._index_funcs.update(indexers or {})
        self._custom = any(fn not in (_namespace_index, _owner_index) for fn in self._index_funcs.values())
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._index_funcs}
        self._values: dict[str, dict[str, tuple[str, ...]]] = {name: {} for name in self._index_funcs}

    def add_index(self, name: str, fn: IndexFunc) -> None:
        """Add an index; existing objects are indexed right away."""
        if name in self._index_funcs:
            raise ValueError(f"index {name!r} already exists")
        self._index_funcs[name] = fn
        self._custom = True
        self._indices[name] = {}
        self._values[name] = {}
        for key, item in self._items.items():
            self._index_one(name, key, self._out(item))

    def has_index(self, name: str) -> bool:
        return name in self._index_funcs

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: str) -> bool:
        return key in self._items

    @property
    def stores_raw(self) -> bool:
        """True when objects are kept as JSON bytes and every read decodes a new one."""
        return self._decode is not None

    def _out(self, item: Any) -> Any:
        return item if self._decode is None else self._decode(item)

    def get(self, key: str) -> Any | None:
        item = self._items.get(key)
        return None if item is None else self._out(item)

    def get_stored(self, key: str) -> Any | None:
        """The item as kept, undecoded: JSON bytes in a raw store, the object otherwise (the controller
        keeps what a reconcile saw this way, at no decode)."""
        return self._items.get(key)

    def list_keys(self) -> list[str]:
        return list(self._items)

    def values(self) -> Iterator[Any]:
        return (self._out(item) for item in list(self._items.values()))

    def get_many(self, keys: Iterable[str]) -> list[Any]:
        return [self._out(self._items[k]) for k in keys if k in self._items]

    def put(self, key: str, obj: Any, raw: bytes | None = None) -> Any | None:
        """Insert or replace; returns the previous object. A raw store needs `raw`, the object's JSON."""
        old = self._items.get(key)
        if old is not None:
            self._unindex(key)
        if self._decode is not None:
            if raw is None:
                raise ValueError("this store keeps JSON bytes: put(key, obj, raw)")
            self._items[key] = raw
        else:
            self._items[key] = obj
        for name in self._index_funcs:
            self._index_one(name, key, obj)
        return None if old is None else self._out(old)

    def put_raw(self, obj: RawObject) -> RawObject | None:
        """Insert or replace an object given as JSON (a raw store only); returns the previous one, both
        undecoded. The built-in indices read the metadata only: the object is decoded here only when
        a custom index needs it."""
        if self._decode is None:
            raise ValueError("this store keeps decoded objects: put(key, obj)")
        key = obj.key
        old = self._items.get(key)
        if old is not None:
            self._unindex(key)
        self._items[key] = obj.raw
        for name, fn in self._index_funcs.items():
            if fn is _namespace_index:
                values = [obj.meta.namespace]
            elif fn is _owner_index:
                values = obj.owner_uids()
            else:
                values = fn(obj.object)
            self._index_values(name, key, values)
        return None if old is None else RawObject(old, self._decode)

    def raw_values(self) -> Iterator[RawObject]:
        """Every object of a raw store, undecoded."""
        if self._decode is None:
            raise ValueError("this store keeps decoded objects: values()")
        decode = self._decode
        return (RawObject(raw, decode) for raw in list(self._items.values()))

    def delete(self, key: str) -> Any | None:
        old = self._items.pop(key, None)
        if old is not None:
            self._unindex(key)
        return None if old is None else self._out(old)

    def delete_raw(self, key: str) -> RawObject | None:
        """Delete from a raw store; returns what was there, undecoded."""
        old = self._items.pop(key, None)
        if old is None:
            return None
        self._unindex(key)
        return RawObject(old, self._decode) if self._decode is not None else old

    def has_custom_index(self) -> bool:
        """True when an index other than the built-in ones needs decoded objects."""
        return self._custom

    def discard(self, key: str) -> bool:
        """Delete without decoding what was there; True when there was something."""
        if self._items.pop(key, None) is None:
            return False
        self._unindex(key)
        return True

    def index_keys(self, name: str, value: str) -> list[str]:
        if name not in self._indices:
            raise KeyError(f"no index named {name!r}")
        return list(self._indices[name].get(value, ()))

    def by_index(self, name: str, value: str) -> list[Any]:
        return self.get_many(self.index_keys(name, value))

    def _index_one(self, name: str, key: str, obj: Any) -> None:
        self._index_values(name, key, self._index_funcs[name](obj))

    def _index_values(self, name: str, key: str, values: list[str]) -> None:
        if not values:
            return  # most objects have no owners: keep nothing for them
        self._values[name][key] = tuple(values)
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
