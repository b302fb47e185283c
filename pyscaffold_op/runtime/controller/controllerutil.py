"""Helpers reconcilers use all the time (pkg/controller/controllerutil).

Works on pyop's typed objects and on dicts alike (and other libraries' through runtime.adapters).
"""

from __future__ import annotations

import copy
import enum
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pyscaffold_op.runtime.client.errors import NotFound
from pyscaffold_op.runtime.objects import objmeta
from pyscaffold_op.runtime.objects.kinds import ResourceInfo, info_of, replace_contents
from pyscaffold_op.runtime.objects.objmeta import OwnerRef

T = TypeVar("T")
MutateFn = Callable[[Any], Awaitable[None] | None]


class OperationResult(enum.StrEnum):
    UNCHANGED = "unchanged"
    CREATED = "created"
    UPDATED = "updated"
    UPDATED_STATUS = "updatedStatus"
    UPDATED_STATUS_ONLY = "updatedStatusOnly"


class AlreadyOwnedError(Exception):
    """The object already has another controller owner."""

    def __init__(self, obj: Any, owner: OwnerRef) -> None:
        super().__init__(
            f"object {objmeta.key(obj)} is already owned by another {owner.kind} controller {owner.name}"
        )
        self.owner = owner


class OwnerReferenceError(ValueError):
    """The owner reference would be invalid (cross-namespace; namespaced owner of cluster-scoped object)."""


def _check_scope(owner: Any, obj: Any) -> None:
    owner_info, obj_info = info_of(owner), info_of(obj)
    if not owner_info.namespaced:
        return  # cluster-scoped owners may own anything
    owner_ns, obj_ns = objmeta.namespace(owner), objmeta.namespace(obj)
    if not obj_info.namespaced:
        raise OwnerReferenceError(
            f"cluster-scoped resource must not have a namespace-scoped owner, owner's namespace {owner_ns}"
        )
    if owner_ns != obj_ns:
        raise OwnerReferenceError(
            f"cross-namespace owner references are disallowed, owner's namespace {owner_ns}, "
            f"obj's namespace {obj_ns}"
        )


def _ref_for(owner: Any, controller: bool, block_owner_deletion: bool) -> OwnerRef:
    info = info_of(owner)
    if not objmeta.name(owner) or not objmeta.uid(owner):
        raise OwnerReferenceError("owner has no name or uid yet: create or read it from the server first")
    return OwnerRef(
        info.api_version, info.kind, objmeta.name(owner), objmeta.uid(owner), controller, block_owner_deletion
    )


def _same_owner(a: OwnerRef, b: OwnerRef) -> bool:
    # Same group + kind + name: the version may differ (controller-runtime's referSameObject).
    return a.group == b.group and a.kind == b.kind and a.name == b.name


def _upsert(obj: Any, ref: OwnerRef) -> None:
    refs = objmeta.owner_references(obj)
    for i, existing in enumerate(refs):
        if _same_owner(existing, ref):
            refs[i] = ref
            break
    else:
        refs.append(ref)
    objmeta.set_owner_references(obj, refs)


def set_controller_reference(owner: Any, obj: Any, *, block_owner_deletion: bool = True) -> None:
    """Make `owner` the controller of `obj` (`controller: true`, `blockOwnerDeletion: true`), so the
    garbage collector deletes `obj` with its owner and `owns()` watches map `obj`'s events to `owner`.

    Raises AlreadyOwnedError when another object is already `obj`'s controller, OwnerReferenceError for
    a cross-namespace owner or a namespaced owner of a cluster-scoped object.
    """
    ref = _ref_for(owner, True, block_owner_deletion)
    _check_scope(owner, obj)
    existing = objmeta.controller_of(obj)
    if existing is not None and not _same_owner(existing, ref):
        raise AlreadyOwnedError(obj, existing)
    _upsert(obj, ref)


def adopt(owner: Any, obj: Any, *, labels: bool = True, generate_name: bool = True) -> None:
    """kopf's `kopf.adopt(obj, owner)`: put `obj` in `owner`'s namespace (when it names none and both
    are namespaced), copy `owner`'s labels onto it (keeping its own where both set one), give it
    `generateName: <owner name>-` when it has no name, and make `owner` its controller
    (`set_controller_reference`). `labels=False`/`generate_name=False` skip those steps."""
    if info_of(owner).namespaced and info_of(obj).namespaced and not objmeta.namespace(obj):
        objmeta.set_field(obj, "namespace", objmeta.namespace(owner))
    if labels and objmeta.labels(owner):
        objmeta.set_field(obj, "labels", {**objmeta.labels(owner), **(objmeta.labels(obj) or {})})
    if generate_name and not objmeta.name(obj) and not objmeta.get_field(obj, "generate_name"):
        objmeta.set_field(obj, "generate_name", f"{objmeta.name(owner)}-")
    set_controller_reference(owner, obj)


def set_owner_reference(owner: Any, obj: Any) -> None:
    """Add (or refresh) a non-controller owner reference to `owner`."""
    ref = _ref_for(owner, False, False)
    _check_scope(owner, obj)
    _upsert(obj, ref)


def remove_owner_reference(owner: Any, obj: Any) -> bool:
    info = info_of(owner)
    probe = OwnerRef(info.api_version, info.kind, objmeta.name(owner), objmeta.uid(owner))
    refs = objmeta.owner_references(obj)
    kept = [r for r in refs if not _same_owner(r, probe)]
    objmeta.set_owner_references(obj, kept)
    return len(kept) != len(refs)


def has_controller_reference(obj: Any) -> bool:
    return objmeta.controller_of(obj) is not None


def has_owner_reference(owner: Any, obj: Any) -> bool:
    info = info_of(owner)
    probe = OwnerRef(info.api_version, info.kind, objmeta.name(owner), "")
    return any(_same_owner(r, probe) for r in objmeta.owner_references(obj))


# -- finalizers ----------------------------------------------------------------------------------------


def contains_finalizer(obj: Any, finalizer: str) -> bool:
    return finalizer in objmeta.finalizers(obj)


def add_finalizer(obj: Any, finalizer: str) -> bool:
    """Add `finalizer` if absent; True when the object changed (then write it with update or patch)."""
    values = objmeta.finalizers(obj)
    if finalizer in values:
        return False
    objmeta.set_finalizers(obj, [*values, finalizer])
    return True


def remove_finalizer(obj: Any, finalizer: str) -> bool:
    """Remove every occurrence of `finalizer`; True when the object changed."""
    values = objmeta.finalizers(obj)
    kept = [f for f in values if f != finalizer]
    if len(kept) == len(values):
        return False
    objmeta.set_finalizers(obj, kept)
    return True


# -- create or update / patch ----------------------------------------------------------------------------


async def _mutate(mutate: MutateFn, obj: Any, key: tuple[str, str]) -> None:
    result = mutate(obj)
    if inspect.isawaitable(result):
        await result
    if (objmeta.namespace(obj), objmeta.name(obj)) != key:
        raise ValueError("mutate function must not change the object's name or namespace")


async def _read_live(client: Any, obj: Any) -> tuple[ResourceInfo, tuple[str, str], Any | None]:
    """`obj`'s kind, its (namespace, name), and the object as the client reads it (None: absent)."""
    info = info_of(obj)
    key = (objmeta.namespace(obj), objmeta.name(obj))
    try:
        return info, key, await client.get(type(obj), key[1], namespace=key[0] or None)
    except NotFound:
        return info, key, None


async def create_or_update(client: Any, obj: T, mutate: MutateFn) -> tuple[T, OperationResult]:
    """Read `obj` (by its name/namespace) into `obj`, run `mutate(obj)`, and create or update it.

    Returns `(obj, "created" | "updated" | "unchanged")`; nothing is written when mutate changed nothing.
    `mutate` may be sync or async and must set the desired state on the object it is given (the same
    object you passed), like the Go closure over `obj`.
    """
    info, key, current = await _read_live(client, obj)
    if current is None:
        await _mutate(mutate, obj, key)
        await client.create(obj)
        return obj, OperationResult.CREATED
    replace_contents(obj, current)
    before = info.to_dict(obj)
    await _mutate(mutate, obj, key)
    if info.to_dict(obj) == before:
        return obj, OperationResult.UNCHANGED
    await client.update(obj)
    return obj, OperationResult.UPDATED


async def create_or_patch(client: Any, obj: T, mutate: MutateFn) -> tuple[T, OperationResult]:
    """Like `create_or_update`, but writes a JSON merge patch of what mutate changed, and the status
    (through the status subresource) separately: "updated", "updatedStatus", "updatedStatusOnly"."""
    info, key, current = await _read_live(client, obj)
    if current is None:
        await _mutate(mutate, obj, key)
        status = copy.deepcopy(info.to_dict(obj).get("status"))
        await client.create(obj)
        if status and info.to_dict(obj).get("status") != status:
            await client.status().patch(type(obj), key[1], {"status": status}, namespace=key[0] or None)
        return obj, OperationResult.CREATED
    replace_contents(obj, current)
    before = info.to_dict(obj)
    await _mutate(mutate, obj, key)
    after = info.to_dict(obj)
    before_status, after_status = before.pop("status", None), after.pop("status", None)
    patch = merge_patch(before, after)
    status_patch = merge_patch({"status": before_status}, {"status": after_status})
    result = OperationResult.UNCHANGED
    ns = key[0] or None
    if patch:
        patch.setdefault("metadata", {})["resourceVersion"] = objmeta.resource_version(obj)  # optimistic lock
        replace_contents(obj, await client.patch(type(obj), key[1], patch, namespace=ns))
        result = OperationResult.UPDATED
    if status_patch:
        replace_contents(obj, await client.status().patch(type(obj), key[1], status_patch, namespace=ns))
        result = OperationResult.UPDATED_STATUS if patch else OperationResult.UPDATED_STATUS_ONLY
    return obj, result


def merge_patch(before: Any, after: Any) -> dict[str, Any]:
    """The RFC 7386 JSON merge patch turning `before` into `after` ({} when equal)."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        raise TypeError("merge_patch works on dicts")
    patch: dict[str, Any] = {}
    for k in before.keys() - after.keys():
        patch[k] = None
    for k, v in after.items():
        old = before.get(k, _MISSING)
        if old == v:
            continue
        if isinstance(old, dict) and isinstance(v, dict):
            sub = merge_patch(old, v)
            if sub:
                patch[k] = sub
        else:
            patch[k] = v
    return patch


_MISSING = object()
