"""The garbage collector: owner references, `orphan` and `foregroundDeletion`, as a controller over the store.

Dependents whose owners are all gone are deleted (dangling references dropped when another owner
lives); an owner with the `orphan` finalizer frees its dependents first; one with `foregroundDeletion`
deletes them and goes once they are gone. With `dangling=True` (a simulated cluster) an object whose
owner reference names no existing owner (nothing of that kind and name, or one with another uid: the
real collector's virtual owner, looked up live) is treated the same: deleted when no owner is left,
else the dangling references are dropped. A reference to a kind not served is left alone.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from pyscaffold_op.envtest.storage.storeaccess import StoreAccess, write_metadata
from pyscaffold_op.envtest.types import GR, Key, Obj

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Event


class GarbageCollector:
    def __init__(self, store: StoreAccess, *, dangling: bool = False) -> None:
        self.store = store
        self.dangling = dangling
        self._owned_by: dict[str, set[tuple[GR, Key]]] = {}  # owner uid -> dependents
        self._queue: deque[str] = deque()  # uids to look at: deleted, or being deleted
        self._suspects: deque[tuple[GR, Key]] = deque()  # dependents naming an unknown owner uid

    def observe(self, event: Event) -> None:
        meta = event.obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        self._index(event.gr, key, event.prev, None if event.type == "DELETED" else event.obj)
        if event.type == "DELETED":
            self._queue.append(meta["uid"])
            # owners waiting in foreground deletion may now be free to go
            self._queue.extend(r["uid"] for r in _refs(event.obj) if r.get("uid"))
        elif meta.get("deletionTimestamp"):
            self._queue.append(meta["uid"])
        elif self.dangling and any(
            isinstance(r, dict) and r.get("uid") and self.store.locate(r["uid"]) is None
            for r in _refs(event.obj)
        ):
            self._suspects.append((event.gr, key))

    def _index(self, gr: GR, key: Key, old: Obj | None, new: Obj | None) -> None:
        for obj, add in ((old, False), (new, True)):
            for ref in _refs(obj) if obj is not None else ():
                uid = ref.get("uid") if isinstance(ref, dict) else None
                if not uid:
                    continue
                deps = self._owned_by.setdefault(uid, set())
                if add:
                    deps.add((gr, key))
                else:
                    deps.discard((gr, key))
                    if not deps:
                        del self._owned_by[uid]

    def reconcile(self) -> bool:
        worked = bool(self._queue) or bool(self._suspects)
        while self._queue:
            uid = self._queue.popleft()
            where = self.store.locate(uid)
            if where is None:
                self._owner_gone(uid)
            else:
                self._owner_deleting(uid, *where)
        while self._suspects:
            self._check_owners(*self._suspects.popleft())
        return worked

    def _check_owners(self, gr: GR, key: Key) -> None:
        """attemptToDeleteItem for a dependent with a virtual owner: each reference's owner is looked
        up by kind, namespace and name; a missing one, or one with another uid, is dangling."""
        dep = self.store.find(gr, *key)
        info = self.store.registry.storage_for(*gr)
        if dep is None or info is None or dep["metadata"].get("deletionTimestamp"):
            return
        solid, dangling = [], []
        for ref in _refs(dep):
            if not isinstance(ref, dict) or self.store.locate(ref.get("uid", "")) is not None:
                solid.append(ref)
                continue
            owner_info = self._resolve(ref)
            if owner_info is None:
                solid.append(ref)  # a kind not served: the real collector cannot tell
                continue
            ns = key[0] if owner_info.namespaced else ""
            owner = self.store.find(owner_info.group_resource, ns, str(ref.get("name", "")))
            if owner is not None and owner["metadata"].get("uid") == ref.get("uid"):
                solid.append(ref)
            else:
                dangling.append(ref)
        if not dangling:
            return
        if solid:
            write_metadata(self.store, gr, key, dep, {"ownerReferences": solid})
        else:
            self.store.delete(info, key[0], key[1])

    def _resolve(self, ref: Obj) -> Any:
        group, _, version = str(ref.get("apiVersion", "")).rpartition("/")
        for info in self.store.registry.all():
            if (info.group, info.version, info.kind) == (group, version, ref.get("kind")):
                return self.store.registry.storage_for(info.group, info.plural)
        return None

    def _owner_gone(self, uid: str) -> None:
        """Delete the dependents whose owners are all gone; drop the dangling reference from others."""
        for gr, key in list(self._owned_by.get(uid, ())):
            dep = self.store.find(gr, *key)
            info = self.store.registry.storage_for(*gr)
            if dep is None or info is None:
                continue
            alive = [r for r in _refs(dep) if self.store.locate(r.get("uid", "")) is not None]
            if alive:
                write_metadata(self.store, gr, key, dep, {"ownerReferences": alive})
            elif not dep["metadata"].get("deletionTimestamp"):
                self.store.delete(info, key[0], key[1])

    def _owner_deleting(self, uid: str, gr: GR, key: Key) -> None:
        obj = self.store.find(gr, *key)
        if obj is None or not obj["metadata"].get("deletionTimestamp"):
            return
        finalizers = obj["metadata"].get("finalizers") or []
        deps = [(g, k) for g, k in self._owned_by.get(uid, ()) if self.store.find(g, *k) is not None]
        if "orphan" in finalizers:
            for g, k in deps:
                dep = self.store.find(g, *k)
                if dep is not None:
                    refs = [r for r in _refs(dep) if r.get("uid") != uid]
                    write_metadata(self.store, g, k, dep, {"ownerReferences": refs or None})
            self._drop_finalizer(gr, key, "orphan")
        elif "foregroundDeletion" in finalizers:
            for g, k in deps:
                dep, info = self.store.find(g, *k), self.store.registry.storage_for(*g)
                if dep is not None and info is not None and not dep["metadata"].get("deletionTimestamp"):
                    self.store.delete(info, k[0], k[1], propagation="Foreground")
            if not any(self.store.find(g, *k) for g, k in deps):
                self._drop_finalizer(gr, key, "foregroundDeletion")

    def _drop_finalizer(self, gr: GR, key: Key, finalizer: str) -> None:
        obj = self.store.find(gr, *key)
        if obj is not None:
            rest = [f for f in obj["metadata"].get("finalizers") or [] if f != finalizer]
            write_metadata(self.store, gr, key, obj, {"finalizers": rest or None})


def _refs(obj: Obj) -> list[Any]:
    return obj["metadata"].get("ownerReferences") or []
