"""The garbage collector and the namespace controller, as a part of the store.

Runs to a fixed point after every write that deletes or starts deleting something: dependents whose
owners are all gone are deleted (dangling references dropped when another owner lives), `orphan`
and `foregroundDeletion` finalizers are processed, terminating namespaces are emptied and removed
once the store's namespace timer has handed them over (`_ns_active`): namespace deletion is
asynchronous, as with the real namespace controller.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyscaffold_op.envtest.resources import Registry, ServedResource

Obj = dict[str, Any]
GR = tuple[str, str]
Key = tuple[str, str]


class GarbageCollector:
    """Mixin for `Store`: the owner index and the GC passes (uses the store's buckets and writes)."""

    registry: Registry
    _by_uid: dict[str, tuple[GR, Key]]
    _owned_by: dict[str, set[tuple[GR, Key]]]
    _gc_queue: deque[str]
    _buckets: dict[GR, Any]
    _ns_active: set[str]  # terminating namespaces the controller has started emptying

    if TYPE_CHECKING:  # provided by Store

        def find(self, gr: GR, namespace: str, name: str) -> Obj | None: ...
        def delete(self, info: ServedResource, namespace: str, name: str, **kw: Any) -> tuple[Obj, bool]: ...
        def _commit(self, gr: GR, key: Key, old: Obj | None, new: Obj) -> None: ...
        def _remove(self, gr: GR, key: Key, obj: Obj) -> None: ...

    def _index_owners(self, gr: GR, key: Key, old: Obj | None, new: Obj | None) -> None:
        for o, add in ((old, False), (new, True)):
            if o is None:
                continue
            for ref in o["metadata"].get("ownerReferences") or []:
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

    def _info_for(self, gr: GR) -> ServedResource | None:
        return self.registry.storage_for(*gr)

    def _run_gc(self) -> None:
        """The garbage collector and namespace controller, run to a fixed point after each write."""
        while self._gc_queue:
            uid = self._gc_queue.popleft()
            where = self._by_uid.get(uid)
            if where is None:  # gone: delete dependents whose owners are all gone
                for gr, key in list(self._owned_by.get(uid, ())):
                    dep = self.find(gr, *key)
                    if dep is None:
                        continue
                    refs = dep["metadata"].get("ownerReferences") or []
                    alive = [r for r in refs if r.get("uid") in self._by_uid]
                    info = self._info_for(gr)
                    if info is None:
                        continue
                    if alive:
                        self._force_update(gr, key, dep, {"ownerReferences": alive})
                    elif not dep["metadata"].get("deletionTimestamp"):
                        self.delete(info, key[0], key[1])
                continue
            gr, key = where
            obj = self.find(gr, *key)
            if obj is None or not obj["metadata"].get("deletionTimestamp"):
                continue
            fins = list(obj["metadata"].get("finalizers") or [])
            deps = [(g, k) for g, k in self._owned_by.get(uid, ()) if self.find(g, *k) is not None]
            if "orphan" in fins:
                for g, k in deps:
                    dep = self.find(g, *k)
                    refs = [r for r in dep["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
                    self._force_update(g, k, dep, {"ownerReferences": refs or None})
                self._drop_finalizer(gr, key, "orphan")
            elif "foregroundDeletion" in fins:
                blocking = False
                for g, k in deps:
                    dep = self.find(g, *k)
                    info = self._info_for(g)
                    if dep is None or info is None:
                        continue
                    blocking = True
                    if not dep["metadata"].get("deletionTimestamp"):
                        self.delete(info, k[0], k[1], propagation="Foreground")
                if not blocking or not any(self.find(g, *k) for g, k in deps):
                    self._drop_finalizer(gr, key, "foregroundDeletion")
            elif gr == ("", "namespaces") and key[1] in self._ns_active:
                self._finalize_namespace(obj)

    def _finalize_namespace(self, ns: Obj) -> None:
        name = ns["metadata"]["name"]
        for gr, bucket in list(self._buckets.items()):
            info = self._info_for(gr)
            if info is None or not info.namespaced:
                continue
            for key in [k for k in bucket.keys if k[0] == name]:
                obj = bucket.objs.get(key)
                if obj is not None and not obj["metadata"].get("deletionTimestamp"):
                    self.delete(info, key[0], key[1])
        still = any(
            k[0] == name
            for b in self._buckets.values()
            for k in b.keys
            if b is not self._buckets.get(("", "namespaces"))
        )
        if not still and not ns["metadata"].get("finalizers"):
            current = self.find(("", "namespaces"), "", name)
            if current is not None:
                # like the controller: PUT .../finalize without `kubernetes` (MODIFIED), then it is gone
                spec = {k: v for k, v in (current.get("spec") or {}).items() if k != "finalizers"}
                final = {**current, "spec": spec}
                self._commit(("", "namespaces"), ("", name), current, final)
                self._remove(("", "namespaces"), ("", name), final)
            self._ns_active.discard(name)

    def _drop_finalizer(self, gr: GR, key: Key, finalizer: str) -> None:
        obj = self.find(gr, *key)
        if obj is None:
            return
        fins = [f for f in obj["metadata"].get("finalizers") or [] if f != finalizer]
        self._force_update(gr, key, obj, {"finalizers": fins or None})

    def _force_update(self, gr: GR, key: Key, obj: Obj, meta_changes: dict[str, Any]) -> None:
        """A controller's write of metadata (GC removing refs or finalizers)."""
        meta = {**obj["metadata"]}
        for k, v in meta_changes.items():
            if v is None:
                meta.pop(k, None)
            else:
                meta[k] = v
        new = {**obj, "metadata": meta}
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self._remove(gr, key, new)
        else:
            self._commit(gr, key, obj, new)
            if meta.get("deletionTimestamp"):
                self._gc_queue.append(meta["uid"])
