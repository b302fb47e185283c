"""The in-memory object store: resourceVersions, uids, generations, optimistic concurrency, finalizers,
and the event history that watches read, with the writes' registry steps (admission plugins, strategies,
defaulting, validation, CEL, managedFields) called from `registry/`. Controllers over it (the garbage
collector and the namespace controller, `controllers/core.py`) are registered by `Environment`
(`add_controller`): they observe each stored change and act after each write.

Everything here is synchronous and runs on the server's event loop, so each call is atomic (the real
server's etcd transactions). Objects are never mutated after they are stored: every write stores a new
dict, so readers may serialise what they get without copying.
"""

from __future__ import annotations

import base64
import bisect
import builtins
import os
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pyscaffold_op import apiextensions
from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.admission import plugins as admission_plugins
from pyscaffold_op.envtest.jsonutil import dumps, json_copy, loads
from pyscaffold_op.envtest.registry import (
    certificates,
    crds,
    defaulting,
    graceful,
    namespaces,
    statusstrategy,
    strategies,
)
from pyscaffold_op.envtest.registry.kindrules import NAMED_BY_STRATEGY, UNTRACKED_FIELDS
from pyscaffold_op.envtest.registry.managed import FieldOwner, record_update, written_entries
from pyscaffold_op.envtest.registry.objectmeta import generate_name, meta_causes, no_new_finalizers
from pyscaffold_op.envtest.registry.resources import Registry, ServedResource
from pyscaffold_op.envtest.storage.storeaccess import StoreController
from pyscaffold_op.envtest.storage.watch import Watcher
from pyscaffold_op.envtest.types import GR, NAMESPACES, Key, Obj, as_obj

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")  # NamespaceLifecycle admission's


_stamp: tuple[int, str] = (-1, "")


def now_rfc3339() -> str:
    """The time in seconds as the API server writes it; formatted once per second (strftime costs
    more than a create's whole managedFields entry on some systems)."""
    global _stamp
    now = int(time.time())
    if _stamp[0] != now:
        _stamp = (now, datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    return _stamp[1]


_uuids: list[str] = []
os.register_at_fork(after_in_child=_uuids.clear)  # a forked child must not reuse the parent's


def new_uid() -> str:
    """A random (version 4) UID; the random bytes are read 256 UIDs at a time, one syscall."""
    if not _uuids:
        raw = os.urandom(16 * 256)
        _uuids.extend(str(uuid.UUID(bytes=raw[i : i + 16], version=4)) for i in range(0, len(raw), 16))
    return _uuids.pop()


@dataclass
class Event:
    rv: int
    type: str  # ADDED | MODIFIED | DELETED
    gr: GR
    obj: Obj
    prev: Obj | None = None
    _lines: dict[str, bytes] = field(default_factory=dict)

    def line(self, api_version: str) -> bytes:
        """The newline-terminated JSON of this event as served under `api_version` (cached)."""
        data = self._lines.get(api_version)
        if data is None:
            obj = (
                self.obj
                if self.obj.get("apiVersion") == api_version
                else {**self.obj, "apiVersion": api_version}
            )
            data = self._lines[api_version] = dumps({"type": self.type, "object": obj}) + b"\n"
        return data


class _Bucket:
    """Objects of one group-resource, with their keys kept sorted for list order and paging."""

    __slots__ = ("keys", "objs")

    def __init__(self) -> None:
        self.objs: dict[Key, Obj] = {}
        self.keys: list[Key] = []

    def put(self, key: Key, obj: Obj) -> None:
        if key not in self.objs:
            bisect.insort(self.keys, key)
        self.objs[key] = obj

    def pop(self, key: Key) -> None:
        if self.objs.pop(key, None) is not None:
            i = bisect.bisect_left(self.keys, key)
            if i < len(self.keys) and self.keys[i] == key:
                del self.keys[i]


# metadata a built-in's storage drops when empty (omitempty maps and lists)
_EMPTY_DROPPED = ("annotations", "labels", "finalizers", "ownerReferences")


class Store:
    def __init__(
        self,
        registry: Registry | None = None,
        history: int = 10_000,
    ) -> None:
        self.registry = registry or Registry()
        # controllers over the store (garbage collector, namespace controller): registered by whoever
        # runs the control plane (`Environment`, `controllers.CoreControllers`), not built here
        self._controllers: tuple[StoreController, ...] = ()
        self._reconciling = False
        self.rv = 0
        self._buckets: dict[GR, _Bucket] = {}
        self._events: deque[Event] = deque()
        self._history = history
        self._horizon = 0  # events with rv > horizon are all still in _events
        self._watchers: dict[GR, set[Watcher]] = {}
        self._by_uid: dict[str, tuple[GR, Key]] = {}
        self.on_change: list[Callable[[Event], None]] = []  # in-process observers (kubelet, tests)
        # pods/log: set by the kubelet simulator (pod -> text, None if not started)
        self.pod_logs: Callable[[Obj], str | None] | None = None
        # the optional admission plugins (ServiceAccount: on where a controller-manager runs)
        self.admission = admission_plugins.Plugins()
        for ns in DEFAULT_NAMESPACES:
            # written by kube-apiserver itself, which its managedFields say (later updates are
            # tracked only on objects that have some)
            self.create(
                self.info("", "v1", "namespaces"), "", {"metadata": {"name": ns}}, manager="kube-apiserver"
            )

    # -- lookup ------------------------------------------------------------------------------------

    def info(self, group: str, version: str, plural: str) -> ServedResource:
        info = self.registry.get(group, version, plural)
        if info is None:
            raise E.not_found_path()
        return info

    def _bucket(self, gr: GR) -> _Bucket:
        b = self._buckets.get(gr)
        if b is None:
            b = self._buckets[gr] = _Bucket()
        return b

    def get(self, info: ServedResource, namespace: str, name: str) -> Obj:
        obj = self._bucket(info.bucket).objs.get((namespace if info.namespaced else "", name))
        if obj is None:
            raise E.not_found(info.group, info.plural, name)
        return obj

    def has_objects(self, gr: GR) -> bool:
        b = self._buckets.get(gr)
        return b is not None and bool(b.objs)

    def find(self, gr: GR, namespace: str, name: str) -> Obj | None:
        return self._bucket(gr).objs.get((namespace, name))

    def list(
        self,
        info: ServedResource,
        namespace: str | None,
        pred: Callable[[Obj], bool] | None = None,
        limit: int = 0,
        cont: str | None = None,
        exact_rv: int | None = None,
    ) -> tuple[list[Obj], int, str | None, int | None]:
        """Items, list resourceVersion, continue token, remainingItemCount (only when limited).

        A continue token (or `exact_rv`) lists the data as of that resourceVersion, rebuilt from the
        event history like etcd's MVCC read; older than the history is 410 Expired."""
        bucket = self._bucket(info.bucket)
        keys, objs = bucket.keys, bucket.objs
        list_rv = self.rv
        start = 0
        start_key: Key | None = None
        if cont:
            list_rv, start_key = _decode_continue(cont)
            if list_rv < self._horizon:
                raise E.gone(
                    "The provided continue parameter is too old to display a consistent list result. "
                    "You can start a new list without the continue parameter, or use the continue "
                    "token in this response to retrieve the remainder of the results. Continuing "
                    "with the provided token results in an inconsistent list - objects that were "
                    "created, modified, or deleted between the time the first chunk was returned "
                    "and now may show up in the list."
                )
        elif exact_rv is not None:
            if exact_rv < self._horizon:
                raise E.gone(f"too old resource version: {exact_rv} ({self.rv})")
            list_rv = min(exact_rv, self.rv)
        if list_rv < self.rv:
            objs = self._snapshot(info.bucket, list_rv)
            keys = sorted(objs)
        if start_key is not None:
            start = bisect.bisect_right(keys, start_key)
        if namespace and info.namespaced:
            lo = bisect.bisect_left(keys, (namespace, ""), lo=start)
            start = max(start, lo)
        items: list[Obj] = []
        next_token = None
        remaining = None
        i = start
        n = len(keys)
        while i < n:
            key = keys[i]
            if namespace and info.namespaced and key[0] != namespace:
                break
            obj = objs[key]
            i += 1
            if pred is None or pred(obj):
                items.append(obj)
                if limit and len(items) >= limit:
                    break
        if limit and len(items) >= limit:
            # the end of this namespace's key range (or of all keys), found by bisection: O(log n)
            end = bisect.bisect_right(keys, (namespace, "\U0010ffff")) if namespace and info.namespaced else n
            if i < end:  # like etcd: more keys in range means a continue token, even if none match
                next_token = _encode_continue(list_rv, keys[i - 1])
                remaining = end - i if pred is None else None
        return items, list_rv, next_token, remaining

    def _snapshot(self, gr: GR, rv: int) -> dict[Key, Obj]:
        """The objects of `gr` as they were at `rv`: undo the later events, newest first."""
        objs = dict(self._bucket(gr).objs)
        for ev in reversed(self._events):
            if ev.rv <= rv:
                break
            if ev.gr != gr:
                continue
            meta = ev.obj["metadata"]
            key = (meta.get("namespace", ""), meta["name"])
            if ev.type == "ADDED":
                objs.pop(key, None)
            elif ev.prev is not None:
                objs[key] = ev.prev
        return objs

    # -- writes ------------------------------------------------------------------------------------

    def create(
        self,
        info: ServedResource,
        namespace: str,
        obj: Obj,
        *,
        manager: str = "",
        dry_run: bool = False,
        managed_fields: builtins.list[Obj] | None = None,
        fresh: bool = False,
        pruned: bool = False,
        resource_version_set: bool = False,
    ) -> Obj:
        """`fresh`: `obj` was built for this call (a decoded body), no copy needed; `pruned`: it was
        pruned against this resource's schema since (the decoder's pruning), pruning again finds nothing;
        `resource_version_set`: the body named a resourceVersion, which storage refuses (not a dry run)."""
        if not fresh:  # callers that built `obj` just for this call (decoded bodies) skip the copy
            obj = json_copy(obj)
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise E.bad_request("metadata must be an object")
        obj["apiVersion"], obj["kind"] = info.storage_type
        if info.namespaced:
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        admission_name = meta.get("name") or meta.get("generateName") or "Unknown"
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = generate_name(meta["generateName"])
        if not meta.get("name") and info.group_resource in NAMED_BY_STRATEGY:
            meta["name"] = str(uuid.uuid4())
        name = meta.get("name") or ""
        for k in (
            "resourceVersion",
            "uid",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
            "managedFields",
        ):
            meta.pop(k, None)
        meta["uid"] = new_uid()
        meta["creationTimestamp"] = now_rfc3339()
        if info.generation:
            meta["generation"] = 1
        else:
            meta.pop("generation", None)
        if info.namespaced:  # NamespaceLifecycle admission: before the object is validated
            ns = self.find(("", "namespaces"), "", namespace)
            if ns is None:
                raise E.not_found("", "namespaces", namespace)
            if ns["metadata"].get("deletionTimestamp"):
                raise E.namespace_terminating(info.group, info.plural, admission_name, namespace)
        # ObjectMeta's causes and the kind's own come in one 422, as one Validate call gives them
        obj = self._admit(
            info,
            obj,
            None,
            pruned=pruned,
            meta_errors=meta_causes(meta, info.name_rule, info.kube_finalizers),
            admission_name=admission_name,
        )
        if resource_version_set and not dry_run:
            # etcd3's store.Create refuses it with a plain error, which the server answers as a bare 500
            raise E.StatusError(500, "", "resourceVersion should not be set on objects to be created")
        key = (namespace if info.namespaced else "", name)
        bucket = self._bucket(info.bucket)
        if key in bucket.objs:
            raise E.already_exists(info.group, info.plural, name)
        if managed_fields is not None:
            obj["metadata"]["managedFields"] = managed_fields
        elif manager and info.group_resource not in UNTRACKED_FIELDS:
            record_update(None, obj, _owner(info, manager, meta["creationTimestamp"]))
        if dry_run:
            return obj
        if info.custom:
            etcd_size_check(info, key, obj)
        self._commit(info.bucket, key, None, obj)
        self.run_controllers()
        return obj

    def _admit(
        self,
        info: ServedResource,
        obj: Obj,
        old: Obj | None,
        *,
        pruned: bool = False,
        meta_errors: builtins.list[E.Cause] | None = None,
        admission_name: str = "",
    ) -> Obj:
        """Defaulting, pruning and validation: the CRD schema for custom resources, strategies otherwise;
        `meta_errors` (ObjectMeta's) lead the 422's causes."""
        if info.custom:
            schema = info.compiled_schema
            if not pruned:
                schema.prune(obj)
            schema.apply_defaults(obj)
            if old is None and info.status:
                obj.pop("status", None)  # status comes only through /status
            causes = schema.validate(obj) + apiextensions.scale_causes(obj, info.scale)
            # like the server: CEL rules run unless an earlier error blocks them
            # (ObjectMeta's errors too: a missing name blocks them, and the server says so)
            causes += apiextensions.rules_or_blocked(
                [*(meta_errors or []), *causes],
                obj,
                info.schema,
                old if old is not None else apiextensions.MISSING,
            )
        else:
            if old is None:
                strategies.prepare_create(info, obj)
                admission_plugins.admit_create(info, obj, self, admission_name)
            defaulting.apply(info, obj, old)  # every write, like the server's defaulting
            causes = strategies.validate(info, obj, old)
            if info.group_resource == (crds.CRD_GROUP, "customresourcedefinitions"):
                causes += crds.crd_causes(obj)
        causes = [*(meta_errors or []), *causes]
        if causes:  # named by the stored kind's group: events.k8s.io Events are `Event "x" is invalid`
            raise E.invalid(info.bucket[0], info.kind, obj["metadata"].get("name", ""), causes)
        if info.group_resource == (crds.CRD_GROUP, "customresourcedefinitions"):
            crds.with_status(obj)
        return obj

    def update(
        self,
        info: ServedResource,
        namespace: str,
        name: str,
        obj: Obj,
        *,
        subresource: str = "",
        manager: str = "",
        dry_run: bool = False,
        require_rv: bool | None = None,
        managed_fields: builtins.list[Obj] | None = None,
    ) -> Obj:
        """PUT semantics: optimistic concurrency on metadata.resourceVersion, spec/status kept apart."""
        key = (namespace if info.namespaced else "", name)
        old = self._bucket(info.bucket).objs.get(key)
        if old is None:
            raise E.not_found(info.group, info.plural, name)
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = obj["metadata"] = {}
        if meta.get("name", name) != name:
            raise E.bad_request(
                f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})"
            )
        rv = meta.get("resourceVersion")
        if rv:
            if rv != old["metadata"]["resourceVersion"]:
                raise E.conflict(info.group, info.plural, name, E.STALE)
        elif require_rv if require_rv is not None else info.custom:
            raise E.invalid(
                info.group,
                info.kind,
                name,
                [
                    E.cause(
                        "FieldValueInvalid",
                        "metadata.resourceVersion",
                        "Invalid value: 0x0: must be specified for an update",
                    )
                ],
            )
        if meta.get("uid") and meta["uid"] != old["metadata"]["uid"]:
            raise E.conflict(
                info.group,
                info.plural,
                name,
                "Precondition failed: UID in precondition: "
                f"{meta['uid']}, UID in object meta: {old['metadata']['uid']}",
            )
        new = self._merge_update(info, old, obj, subresource)
        if managed_fields:
            new["metadata"]["managedFields"] = managed_fields
        elif managed_fields is not None:  # an apply that left no manager owning anything
            new["metadata"].pop("managedFields", None)
        if _same(new, old):
            return old  # a no-op write is not a write: no new resourceVersion, no event
        # the field manager's skipNonAppliedManager: an update of an object that has no managedFields
        # (created writing no tracked field) records none either
        if manager and managed_fields is None and old["metadata"].get("managedFields"):
            record_update(old, new, _owner(info, manager, now_rfc3339(), subresource))
        if dry_run:
            return new
        return self._write(info, key, old, new)

    def _merge_update(self, info: ServedResource, old: Obj, obj: Obj, subresource: str) -> Obj:
        # a CSR's /status and /approval take the sent metadata too, as a plain update does
        csr = info.group_resource == certificates.GROUP_RESOURCE
        if subresource == "status" and not csr and not info.custom:
            return self._merge_status(info, old, obj)
        if subresource == "status" and not csr:
            new = {**json_copy(old)}
            if "status" in obj:
                new["status"] = json_copy(obj["status"])
            else:
                new.pop("status", None)
            if info.custom:
                schema = info.compiled_schema
                schema.prune(new)
                schema.apply_defaults(new)
                causes = apiextensions.status_causes(new, info.schema)
                causes += apiextensions.scale_causes(new, info.scale, status=True)
                causes += apiextensions.rules_or_blocked(causes, new, info.schema, old)
                if causes:
                    raise E.invalid(info.group, info.kind, old["metadata"]["name"], causes)
            return new
        new = json_copy(obj)
        new["apiVersion"], new["kind"] = info.storage_type
        meta = _protected_meta(new["metadata"], old["metadata"], obj.get("metadata") or {})
        ometa = old["metadata"]
        if info.status:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        finalize_errors: list[E.Cause] = []
        if info.group_resource == NAMESPACES:
            namespaces.prepare_update(old, new, subresource)
            if subresource == "finalize":
                finalize_errors = namespaces.finalize_causes(new)
        if csr:
            certificates.keep_spec_and_status(old, new)
            if subresource:
                merged, causes = certificates.merge_subresource(old, obj, subresource, now_rfc3339())
                if causes:
                    raise E.invalid(info.group, info.kind, ometa["name"], causes)
                new["status"] = merged["status"]
        errors = no_new_finalizers(meta, ometa) + meta_causes(meta, None, info.kube_finalizers)
        new = self._admit(info, new, old, meta_errors=errors + finalize_errors)
        if info.generation and (
            (_spec_of(new) != _spec_of(old) and not _bound(info, old, new))
            or strategies.bumps_generation(info, new, old)
        ):
            new["metadata"]["generation"] = ometa.get("generation", 1) + 1
        return new

    def _merge_status(self, info: ServedResource, old: Obj, obj: Obj) -> Obj:
        """A built-in's /status write: the status sent, the stored spec, the metadata sent except
        what the kind's status strategy keeps (`registry.statusstrategy`)."""
        new = json_copy(obj)
        new["apiVersion"], new["kind"] = info.storage_type
        sent = as_obj(obj.get("metadata"))
        meta = _protected_meta(new.setdefault("metadata", {}), old["metadata"], sent)
        ometa = old["metadata"]
        kept = statusstrategy.kept_meta(info.group_resource)
        for k in (k for k in ometa if k != "managedFields") if kept == ("*",) else kept:
            if k in ometa:
                meta[k] = ometa[k]
            else:
                meta.pop(k, None)
        for k in [k for k in new if k not in _TYPE_META_STATUS]:
            del new[k]
        for k, v in old.items():
            if k not in _TYPE_META_STATUS:
                new[k] = v
        errors = no_new_finalizers(meta, ometa) + meta_causes(meta, None, info.kube_finalizers)
        if info.group_resource == NAMESPACES:
            defaulting.apply(info, new, old)  # Canonicalize: the name label, status writes too
            errors += namespaces.status_causes(new)
        if errors:
            raise E.invalid(info.group, info.kind, ometa["name"], errors)
        defaulting.apply_types(info, new)  # the status as decoded into the Go type
        strategies.prepare_status_update(info, new, old)
        causes = strategies.validate_status(info, new)
        if causes:
            raise E.invalid(info.group, info.kind, ometa["name"], causes)
        return new

    def _write(self, info: ServedResource, key: Key, old: Obj, new: Obj) -> Obj:
        meta = new["metadata"]
        # a Pod in its grace period stays until the kubelet deletes it with grace period 0; a
        # namespace until its spec.finalizers are gone too
        if (
            meta.get("deletionTimestamp")
            and not meta.get("finalizers")
            and not meta.get("deletionGracePeriodSeconds")
            and not namespaces.held(info.bucket, new)
        ):
            self._remove(info.bucket, key, new)
            self.run_controllers()
            return new
        if info.custom:
            etcd_size_check(info, key, new)
        self._commit(info.bucket, key, old, new)
        self.run_controllers()
        return self.find(info.bucket, *key) or new

    def delete(
        self,
        info: ServedResource,
        namespace: str,
        name: str,
        *,
        propagation: str | None = None,
        preconditions: dict[str, Any] | None = None,
        dry_run: bool = False,
        grace_period: int | None = None,
    ) -> tuple[Obj, bool]:
        """Returns (object, gone): gone is False while finalizers (or a Pod's grace period) hold it."""
        key = (namespace if info.namespaced else "", name)
        obj = self._bucket(info.bucket).objs.get(key)
        if obj is None:
            raise E.not_found(info.group, info.plural, name)
        meta = obj["metadata"]
        pre = preconditions or {}
        # BeforeDelete's messages: the conflict names the Kind, not the resource
        for meta_field, label, why in (
            ("uid", "UID", "deleted and then recreated"),
            ("resourceVersion", "ResourceVersion", "modified"),
        ):
            if pre.get(meta_field) and pre[meta_field] != meta[meta_field]:
                raise E.conflict(
                    info.group,
                    info.kind,
                    name,
                    f"the {label} in the precondition ({pre[meta_field]}) does not match the {label} in "
                    f"record ({meta[meta_field]}). The object might have been {why}",
                )
        is_ns = info.group_resource == NAMESPACES
        if is_ns and name in IMMORTAL_NAMESPACES:
            raise E.forbidden(info.group, info.plural, name, "this namespace may not be deleted")
        if is_ns and not meta.get("deletionTimestamp"):
            return self._start_namespace_deletion(info, key, obj, propagation, dry_run)
        if is_ns and namespaces.spec_finalizers(obj):
            return obj, False  # the namespace registry's Delete: its spec.finalizers still hold it
        finalizers = list(meta.get("finalizers") or [])
        if propagation == "Orphan" and "orphan" not in finalizers:
            finalizers.append("orphan")
        elif propagation == "Foreground" and "foregroundDeletion" not in finalizers:
            finalizers.append("foregroundDeletion")
        grace = graceful.grace_seconds(info, obj, grace_period)
        if not finalizers and not grace:
            if not dry_run:
                self._remove(info.bucket, key, obj)
                self.run_controllers()
            return graceful.deleted_at_once(info, obj), True
        shorter = not is_ns and grace < meta.get("deletionGracePeriodSeconds", grace + 1)
        if meta.get("deletionTimestamp") and finalizers == list(meta.get("finalizers") or []) and not shorter:
            return obj, False  # already terminating with these finalizers: nothing changes
        new = {**obj, "metadata": {**meta, "finalizers": finalizers}}
        if not new["metadata"]["finalizers"]:
            del new["metadata"]["finalizers"]
        if "deletionTimestamp" not in new["metadata"] or shorter:
            new["metadata"]["deletionTimestamp"] = graceful.deadline(grace)
            if not is_ns:  # the namespace registry's own Delete sets only the timestamp
                new["metadata"]["deletionGracePeriodSeconds"] = grace
            if "deletionTimestamp" not in meta and new["metadata"].get("generation", 0) > 0:
                new["metadata"]["generation"] += 1  # controllers see deletion as a spec change
        if is_ns:
            new["status"] = {**new.get("status", {}), "phase": "Terminating"}
        if dry_run:
            return new, False
        self._commit(info.bucket, key, obj, new)
        self.run_controllers()
        current = self.find(info.bucket, *key)
        return (current, False) if current is not None else (new, True)

    def _start_namespace_deletion(
        self, info: ServedResource, key: Key, obj: Obj, propagation: str | None, dry_run: bool
    ) -> tuple[Obj, bool]:
        """The namespace registry's first Delete: `deletionTimestamp`, phase Terminating and the
        garbage collector's finalizers as the propagation policy asks (an absent policy keeps the
        ones there), never a removal: the namespace controller finishes it (`controllers.namespace`)."""
        meta = obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        for finalizer, policy in (("orphan", "Orphan"), ("foregroundDeletion", "Foreground")):
            wanted = propagation == policy if propagation else finalizer in finalizers
            if wanted and finalizer not in finalizers:
                finalizers.append(finalizer)
            elif not wanted and finalizer in finalizers:
                finalizers.remove(finalizer)
        new_meta = {**meta, "deletionTimestamp": graceful.deadline(0)}
        if finalizers:
            new_meta["finalizers"] = finalizers
        else:
            new_meta.pop("finalizers", None)
        new = {**obj, "metadata": new_meta, "status": {**(obj.get("status") or {}), "phase": "Terminating"}}
        if dry_run:
            return new, False
        self._commit(info.bucket, key, obj, new)
        self.run_controllers()
        current = self.find(info.bucket, *key)
        return (current, False) if current is not None else (new, True)

    # -- the controllers -----------------------------------------------------------------------------

    def run_controllers(self) -> None:
        """Let the controllers act on what the last writes changed, until none has work left. Their
        own writes come back here and return at once: the outer loop picks up what they cause."""
        if self._reconciling:
            return
        self._reconciling = True
        try:
            busy = True
            while busy:
                busy = False
                for controller in self._controllers:
                    busy = controller.reconcile() or busy
        finally:
            self._reconciling = False

    def add_controller(self, controller: StoreController) -> None:
        """Register a controller: it observes every change stored from now on and acts after each write."""
        self._controllers = (*self._controllers, controller)

    # -- what controllers use (controllers.StoreAccess) ----------------------------------------------

    def locate(self, uid: str) -> tuple[GR, Key] | None:
        return self._by_uid.get(uid)

    def keys_in(self, gr: GR) -> builtins.list[Key]:
        return list(self._bucket(gr).keys)

    def stored_resources(self) -> builtins.list[GR]:
        return list(self._buckets)

    def put(self, gr: GR, key: Key, old: Obj | None, new: Obj) -> None:
        self._commit(gr, key, old, new)

    def drop(self, gr: GR, key: Key, obj: Obj) -> None:
        self._remove(gr, key, obj)

    @property
    def terminating_namespaces(self) -> builtins.list[str]:
        """Namespaces whose deletion has started and that still exist."""
        return sorted(
            k[1] for k, o in self._bucket(NAMESPACES).objs.items() if o["metadata"].get("deletionTimestamp")
        )

    # -- internals ---------------------------------------------------------------------------------

    def _commit(self, gr: GR, key: Key, old: Obj | None, new: Obj) -> None:
        self.rv += 1
        meta = new["metadata"]
        if any(k in meta and not meta[k] for k in _EMPTY_DROPPED):
            info = self.registry.storage_for(*gr)
            if info is not None and not info.custom:
                # a built-in is stored as protobuf: an empty map or list there is no entry, so it reads
                # back absent (annotations: {} sent is gone on the answer already)
                for k in _EMPTY_DROPPED:
                    if k in meta and not meta[k]:
                        del meta[k]
        meta["resourceVersion"] = str(self.rv)
        self._bucket(gr).put(key, new)
        uid = new["metadata"]["uid"]
        self._by_uid[uid] = (gr, key)
        self._emit(Event(self.rv, "ADDED" if old is None else "MODIFIED", gr, new, old))
        if gr == (crds.CRD_GROUP, "customresourcedefinitions"):
            self._register_crd(old, new)

    def _remove(self, gr: GR, key: Key, obj: Obj) -> None:
        self.rv += 1
        final = {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self.rv)}}
        self._bucket(gr).pop(key)
        uid = obj["metadata"]["uid"]
        self._by_uid.pop(uid, None)
        self._emit(Event(self.rv, "DELETED", gr, final, obj))
        if gr == (crds.CRD_GROUP, "customresourcedefinitions"):
            self._unregister_crd(obj)

    def _emit(self, event: Event) -> None:
        self._events.append(event)
        if len(self._events) > self._history:
            self._horizon = self._events.popleft().rv
        for w in tuple(self._watchers.get(event.gr, ())):
            w.offer(event)
        for controller in self._controllers:
            controller.observe(event)
        for cb in self.on_change:
            cb(event)

    def _register_crd(self, old: Obj | None, new: Obj) -> None:
        if old is not None:
            self._unregister_crd(old, keep_objects=True)
        for info in crds.resource_infos(new):
            self.registry.add(info)

    def _unregister_crd(self, crd: Obj, keep_objects: bool = False) -> None:
        spec = crd.get("spec") or {}
        gr = (spec.get("group", ""), (spec.get("names") or {}).get("plural", ""))
        self.registry.remove_group_resource(*gr)
        if not keep_objects:
            bucket = self._buckets.pop(gr, None)
            for w in self._watchers.pop(gr, set()):
                w.close()
            if bucket:
                for obj in bucket.objs.values():
                    self._by_uid.pop(obj["metadata"]["uid"], None)

    # -- watch -------------------------------------------------------------------------------------

    def watch(self, watcher: Watcher, gr: GR, since: int | None) -> builtins.list[Event] | None:
        """Register `watcher`; return the events after `since` to replay, or None if compacted (410)."""
        replay: list[Event] = []
        if since is not None:
            if since < self._horizon:
                return None
            for ev in reversed(self._events):
                if ev.rv <= since:
                    break
                if ev.gr == gr:
                    replay.append(ev)
            replay.reverse()
        self._watchers.setdefault(gr, set()).add(watcher)
        return replay

    def unwatch(self, watcher: Watcher, gr: GR) -> None:
        ws = self._watchers.get(gr)
        if ws is not None:
            ws.discard(watcher)

    def drop_watches(self) -> None:
        for ws in self._watchers.values():
            for w in tuple(ws):
                w.close()
            ws.clear()

    def compact(self) -> None:
        """Forget all event history: watches from any resourceVersion before now get 410 Gone."""
        self._events.clear()
        self._horizon = self.rv

    @property
    def horizon(self) -> int:
        return self._horizon


def _same(new: Obj, old: Obj) -> bool:
    """Equal apart from managedFields timestamps (which a no-op apply would otherwise bump)."""
    if new == old:
        return True

    def strip(o: Obj) -> Obj:
        return {**o, "metadata": {k: v for k, v in o["metadata"].items() if k != "managedFields"}}

    def clean(o: Obj) -> list[Obj]:
        return [{k: v for k, v in e.items() if k != "time"} for e in o["metadata"].get("managedFields") or []]

    return strip(new) == strip(old) and clean(new) == clean(old)


_TYPE_META_STATUS = ("apiVersion", "kind", "metadata", "status")


def _protected_meta(meta: Obj, ometa: Obj, sent: Obj) -> Obj:
    """`meta` (the metadata of an update) with what no update may change taken from the stored
    `ometa`, and the managedFields a client sent (`sent`) kept only as the server keeps them."""
    for k in (
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "resourceVersion",
        "generation",
        "managedFields",
    ):
        if k in ometa:
            meta[k] = ometa[k]
        else:
            meta.pop(k, None)
    if "managedFields" in sent:  # a client may set them, or reset them with `[{}]`
        kept = written_entries(sent["managedFields"], ometa.get("managedFields"))
        if kept:
            meta["managedFields"] = kept
        else:
            meta.pop("managedFields", None)
    meta.pop("selfLink", None)
    return meta


def _spec_of(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _bound(info: ServedResource, old: Obj, new: Obj) -> bool:
    """Whether the update only binds a Pod to its node: kube-apiserver's binding writes spec.nodeName
    outside the update strategy, so the Pod's generation stays (other changes of its spec count)."""
    if info.group_resource != ("", "pods"):
        return False
    old_spec, new_spec = old.get("spec") or {}, dict(new.get("spec") or {})
    return not old_spec.get("nodeName") and bool(new_spec.pop("nodeName", None)) and new_spec == old_spec


def _encode_continue(rv: int, key: Key) -> str:
    raw = dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": f"{key[0]}/{key[1]}"})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, Key]:
    try:
        data = loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        ns, _, name = data["start"].partition("/")
        return int(data["rv"]), (ns, name)
    except (ValueError, KeyError, TypeError):
        raise E.bad_request(f'continue key is not valid: "{token}"') from None


def _owner(info: ServedResource, manager: str, now: str, subresource: str = "") -> FieldOwner:
    return FieldOwner(
        manager=manager,
        now=now,
        schema=info.schema,
        custom=info.custom,
        api_version=info.api_version,
        subresource=subresource,
        kind=info.kind,
    )


# etcd's --max-request-bytes (1.5 MiB) and the API server's gRPC client's send limit (2 MiB): a
# custom resource is stored as JSON, and a write whose etcd request passes either limit fails with a
# 500 the API server passes on unclassified (kube-apiserver v1.37.2 answers so from about 1.5 MiB of
# object; request bodies over 3 MiB get 413 before this). The request carries the object, its key
# and the transaction's framing: `_ETCD_FRAMING` is that overhead, measured against the real server.
ETCD_MAX_REQUEST = 1572864
GRPC_MAX_SEND = 2097152
_ETCD_FRAMING = 60


def etcd_size_check(info: ServedResource, key: Key, obj: Obj) -> None:
    """The 500 a real server's etcd gives a custom resource too large to store."""
    size = len(dumps(obj)) + len(info.group) + len(info.plural) + len(key[0]) + len(key[1]) + _ETCD_FRAMING
    if size > GRPC_MAX_SEND:
        desc = f"trying to send message larger than max ({size} vs. {GRPC_MAX_SEND})"
        raise E.StatusError(500, "", f"rpc error: code = ResourceExhausted desc = {desc}")
    if size > ETCD_MAX_REQUEST:
        raise E.StatusError(500, "", "etcdserver: request is too large")
