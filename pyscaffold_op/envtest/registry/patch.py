"""PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902, with `test`), strategic merge patch.

Strategic merge needs each field's patch strategy and merge key, which the real server reads from the
Go types' struct tags. The published OpenAPI carries them as `x-kubernetes-patch-strategy` and
`x-kubernetes-patch-merge-key`, and so does the models' compact spec (`pyscaffold_op/models/_spec.json`):
the patch walks the kind's definition along the patch path (following `$ref`s), one cached lookup per
(type, field), so `ports` merges by `containerPort` in a Container and by `port` in a ServiceSpec.
The semantics are k8s.io/apimachinery's `strategicpatch` (StrategicMergeMapPatch) as kube-apiserver
runs it, down to element order and error texts.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jsonpatch

from pyscaffold_op.envtest.jsonutil import json_copy
from pyscaffold_op.envtest.status import StatusError, bad_request
from pyscaffold_op.models import spec


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null deletes, everything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# kube-apiserver answers every failure of a JSON patch (an unknown op, a missing path, a failed
# `test`) with the same 422: the patch library's text stays in its log, not in the Status
_JSON_PATCH_FAILED = "the server rejected our request due to an error in our request"


def json_patch(target: dict[str, Any], ops: Any) -> dict[str, Any]:
    """RFC 6902 (with `test`). A body that is not a list is 400; any failure applying it is the
    server's generic 422 (details `{}`)."""
    if not isinstance(ops, list):
        raise bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    try:
        doc = json_copy(target)
        for op in ops:  # one at a time: each op's path is read against what the ones before left
            doc = jsonpatch.JsonPatch([_replace_or_add(doc, op)]).apply(doc, in_place=True)
        return doc
    except (
        jsonpatch.JsonPatchException,
        jsonpatch.JsonPointerException,
        KeyError,
        IndexError,
        TypeError,
    ):
        raise StatusError(422, "Invalid", _JSON_PATCH_FAILED, {}) from None


def _replace_or_add(target: Any, op: Any) -> Any:
    """evanphx/json-patch's `replace` of a missing key of an object sets it, as `add` does (an
    index past a list's end stays an error)."""
    if not isinstance(op, dict) or op.get("op") != "replace" or not isinstance(op.get("path"), str):
        return op
    try:
        pointer = jsonpatch.JsonPointer(op["path"])
        parent, key = pointer.to_last(target)
    except (jsonpatch.JsonPointerException, KeyError, IndexError, TypeError):
        return op
    if isinstance(parent, dict) and key not in parent:
        return {**op, "op": "add"}
    return op


# ---------------------------------------------------------------------------------------------------
# Strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch, server side: StrategicMergeMapPatch
# with MergeParallelList and IgnoreUnmatchedNulls), driven by the patch metadata of the kind's types.

_DIRECTIVE = "$patch"
_RETAIN_KEYS = "$retainKeys"
_DELETE_PREFIX = "$deleteFromPrimitiveList"
_ORDER_PREFIX = "$setElementOrder"

# mergepatch's sentinel errors: the server answers 400 or 422 for these, 500 for any other failure
_BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
_BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
_BAD_ORDER_LIST = "invalid patch format of setElementOrder list"
_NO_LIST_OF_LISTS = "lists of lists are not supported"


@dataclass(frozen=True, slots=True)
class _Meta:
    """A field's patch metadata: its strategy apart from retainKeys (`merge`, `replace` or ""), its
    merge key ("" for none) and its type (a list's element type): a definition name of `_spec.json`,
    a path tree for kinds the models lack, or None (no metadata below)."""

    strategy: str = ""
    key: str = ""
    child: Any = None


_NO_META = _Meta()
_OBJECT_META = "meta_v1.ObjectMeta"

# Struct tags the compact spec loses: it keeps extensions on array properties only, not on `$ref`s.
# (retainKeys alone changes nothing server side; listed for completeness.)
_REF_STRATEGIES: dict[tuple[str, str], str] = {
    ("policy_v1.PodDisruptionBudgetSpec", "selector"): "replace",
    ("apps_v1.DeploymentSpec", "strategy"): "retainKeys",
}

_CONDITIONS = {"status": {"conditions": _Meta("merge", "type")}}
# Served kinds the models do not cover: their list fields with a patch strategy (k8s.io/api types.go,
# kube-aggregator for APIService); everything else in them has no metadata (lists are replaced).
_UNMODELLED: dict[tuple[str, str], dict[str, Any]] = {
    ("apiregistration.k8s.io", "APIService"): _CONDITIONS,
    ("certificates.k8s.io", "PodCertificateRequest"): _CONDITIONS,
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"): _CONDITIONS,
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): _CONDITIONS,
    ("resource.k8s.io", "DeviceTaintRule"): _CONDITIONS,
    ("resource.k8s.io", "ResourceClaim"): {"status": {"reservedFor": _Meta("merge", "uid")}},
    ("storagemigration.k8s.io", "StorageVersionMigration"): _CONDITIONS,
}


def _strategy(tag: str) -> str:
    """extractRetainKeysPatchStrategy: the strategy that is not retainKeys."""
    parts = [p for p in tag.split(",") if p != "retainKeys"] if tag else []
    if len(parts) > 1:
        raise internal_error(f"unexpected patch strategy: [{' '.join(tag.split(','))}]")
    return parts[0] if parts else ""


@functools.cache
def _def_field(name: str, field: str) -> _Meta:
    try:
        prop = (spec.definition(name).get("properties") or {}).get(field)
    except KeyError:
        return _NO_META
    if prop is None:
        return _NO_META
    tag = prop.get("x-kubernetes-patch-strategy") or _REF_STRATEGIES.get((name, field), "")
    child = prop.get("$ref") or (prop.get("items") or {}).get("$ref")
    return _Meta(_strategy(tag), prop.get("x-kubernetes-patch-merge-key") or "", child)


def _field(node: Any, field: str) -> _Meta:
    """The metadata of `field` of the type `node` (LookupPatchMetadataForStruct/ForSlice)."""
    if node is None:
        return _NO_META
    if isinstance(node, str):
        return _def_field(node, field)
    sub = node.get(field)
    if sub is None:
        return _NO_META
    return sub if isinstance(sub, _Meta) else _Meta(child=sub)


@functools.cache
def _root_for(api_version: str, kind: str) -> Any:
    group, _, version = api_version.rpartition("/")
    name = spec.kinds().get((group, version, kind))
    if name is not None:
        return name
    return {"metadata": _OBJECT_META, **_UNMODELLED.get((group, kind), {})}


def _root(obj: dict[str, Any]) -> Any:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return {"metadata": _OBJECT_META}
    return _root_for(api_version, kind)


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    """Kubernetes strategic merge patch of a built-in object, as kube-apiserver applies it: each list's
    strategy and merge key come from the patch metadata of the type at that path (the kind's
    definition in `_spec.json`, followed through `$ref`s); directives `$patch` (replace, delete; merge
    is refused in lists), `$retainKeys`, `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>`.
    Neither argument is modified."""
    if patch is None:
        patch = {}
    if not isinstance(patch, dict):
        kind = "array" if isinstance(patch, list) else _json_kind(patch)
        raise bad_request(f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}")
    original = json_copy(target) if isinstance(target, dict) else {}
    return _merge_map(original, json_copy(patch), _root(original))


def _json_kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, str):
        return "string"
    return "number"


def _kind(v: Any) -> str:
    """The Go type of a decoded JSON value, as reflect.TypeOf tells them apart (whole numbers are
    int64: apimachinery's json turns whole float64s into int64)."""
    if isinstance(v, dict):
        return "map"
    if isinstance(v, list):
        return "slice"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer()):
        return "int64"
    if isinstance(v, float):
        return "float64"
    return "nil"


def _merge_map(original: dict[str, Any], patch: dict[str, Any], node: Any) -> dict[str, Any]:
    if _DIRECTIVE in patch:
        directive = patch[_DIRECTIVE]
        if directive == "replace":
            del patch[_DIRECTIVE]
            return _clean(patch)
        if directive == "delete":
            return {}
        raise internal_error(f"unknown patch type: {_gofmt(directive)} in map: {_gofmt(patch)}")
    _apply_retain_keys(original, patch)
    _merge_ordered_lists(original, patch, node)
    for key, value in patch.items():
        delete_list = key.startswith(_DELETE_PREFIX)
        if delete_list:
            key = _extract_key(key, _DELETE_PREFIX, _BAD_PRIMITIVE_LIST)
        if value is None:
            original.pop(key, None)
            continue
        if key not in original or _kind(original[key]) != _kind(value):
            if not delete_list:
                kept, keep = _remove_directives(value)
                if keep:
                    original[key] = _clean(kept)
                else:
                    original.pop(key, None)
            continue
        current = original[key]
        if isinstance(current, dict):
            meta = _field(node, key)
            original[key] = (
                _clean(value) if meta.strategy == "replace" else _merge_map(current, value, meta.child)
            )
        elif isinstance(current, list):
            original[key] = _merge_list(current, value, _field(node, key), delete_list)
        else:
            original[key] = value
    return original


def _merge_list(original: list[Any], patch: list[Any], meta: _Meta, delete_list: bool) -> list[Any]:
    """mergeSliceHandler: merge by the field's merge key (or as a set of primitives) when its
    strategy is merge, otherwise the patch's list replaces the field."""
    if meta.strategy == "merge" or delete_list:
        return _merge_slice(original, patch, meta, delete_list)
    return [_clean(v) for v in patch]


def _element_kind(*lists: list[Any]) -> str:
    kind = ""
    for items in lists:
        for v in items:
            k = _kind(v)
            if not kind:
                if k == "slice":
                    raise StatusError(422, "", _NO_LIST_OF_LISTS)
                kind = k
            elif k != kind:
                raise internal_error(
                    f"list element types are not identical: [{' '.join(_gofmt(x) for x in lists)}]"
                )
    if not kind:
        raise internal_error("no elements in any of the given slices")
    return kind


def _merge_slice(original: list[Any], patch: list[Any], meta: _Meta, delete_list: bool) -> list[Any]:
    if not original and not patch:
        return original
    kind = _element_kind(original, patch)
    key = meta.key
    if kind != "map":
        if delete_list:
            return [v for v in original if not any(_same(v, d) for d in patch)]
        merged: list[Any] = []
        for v in original + patch:
            if not any(_same(v, m) for m in merged):
                merged.append(v)
    else:
        if not key:
            raise internal_error("cannot merge lists without merge key for struct")
        original, patch = _special_elements(original, patch, key)
        merged = _merge_by_key(original, patch, key, meta.child)
    if not key:
        ours, theirs = _partition_primitives(merged, patch)
    else:
        ours, theirs = _partition_maps(merged, patch, key)
    return _normalize_order(ours, theirs, patch, original, key)


def _same(a: Any, b: Any) -> bool:
    """Go's == on two decoded JSON scalars: equal values of the same type."""
    return _kind(a) == _kind(b) and a == b


def _special_elements(original: list[Any], patch: list[Any], key: str) -> tuple[list[Any], list[Any]]:
    """mergeSliceWithSpecialElements: apply `{$patch: delete}` items, note `{$patch: replace}`."""
    plain: list[Any] = []
    replace = False
    for item in patch:
        if _DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[_DIRECTIVE]
        if directive == "delete":
            if key not in item:
                raise _no_merge_key(item, key)
            value = item[key]
            original = [o for o in _maps(original) if not (key in o and _same(o[key], value))]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise internal_error("merging lists cannot yet be specified in the patch")
        else:
            raise internal_error(f"unknown patch type: {_gofmt(directive)} in map: {_gofmt(item)}")
    if replace:
        return plain, []
    return original, plain


def _maps(items: list[Any]) -> list[Any]:
    for i, v in enumerate(items):
        if not isinstance(v, dict):
            raise internal_error(f"value for key {i} is not a map")
    return items


def _merge_by_key(original: list[Any], patch: list[Any], key: str, child: Any) -> list[Any]:
    """mergeSliceWithoutSpecialElements: merge each patch item into the first item with its merge
    key's value, or append it."""
    out = list(original)
    for item in patch:
        if key not in item:
            raise _no_merge_key(item, key)
        value = item[key]
        for i, cur in enumerate(_maps(out)):
            if key in cur and _same(cur[key], value):
                out[i] = _merge_map(cur, item, child)
                break
        else:
            out.append(_clean(item))
    return out


def _partition_primitives(merged: list[Any], by: list[Any]) -> tuple[list[Any], list[Any]]:
    ours: list[Any] = []
    theirs: list[Any] = []
    for v in merged:
        (ours if any(_same(v, b) for b in by) else theirs).append(v)
    return ours, theirs


def _partition_maps(merged: list[Any], by: list[Any], key: str) -> tuple[list[Any], list[Any]]:
    ours: list[Any] = []
    theirs: list[Any] = []
    for v in merged:
        if not isinstance(v, dict):
            raise internal_error(f"expected a map[string]interface {{}}, but received a {_gotype(v)}")
        if key not in v:
            raise _no_merge_key(v, key)
        found = any(key in b and _same(b[key], v[key]) for b in _maps(by))
        (ours if found else theirs).append(v)
    return ours, theirs


def _position(order: list[Any], key: str) -> Callable[[Any], int]:
    """index(): where an item (a map by its merge key's value) first appears in `order`, -1 if not."""

    def value(item: Any) -> Any:
        if key:
            return item.get(key) if isinstance(item, dict) else None
        return item

    values = [value(v) for v in order]

    def pos(item: Any) -> int:
        v = value(item)
        for i, w in enumerate(values):
            if _same(v, w):
                return i
        return -1

    return pos


def _normalize_order(
    ours: list[Any], theirs: list[Any], patch_order: list[Any], server_order: list[Any], key: str
) -> list[Any]:
    """normalizeElementOrder: the patch's items in the patch's order, the server-only items in the
    live order, then the two interleaved by the live order (mergeSortedSlice)."""
    if key:
        for v in (*ours, *patch_order, *theirs, *server_order):
            if not isinstance(v, dict):
                raise internal_error(f"expected a map[string]interface {{}}, but received a {_gotype(v)}")
            if key not in v:
                raise _no_merge_key(v, key)
    in_patch = _position(patch_order, key)
    ours = _stable_sort(ours, in_patch)
    live = _position(server_order, key)
    theirs = _stable_sort(theirs, live)
    out: list[Any] = []
    i = j = 0
    while i < len(theirs) or j < len(ours):
        if i >= len(theirs):
            out.append(ours[j])
            j += 1
        elif j >= len(ours):
            out.append(theirs[i])
            i += 1
        else:
            li, ri = live(theirs[i]), live(ours[j])
            if li >= 0 and ri >= 0 and li < ri:
                out.append(theirs[i])
                i += 1
            else:
                out.append(ours[j])
                j += 1
    return out


def _stable_sort(items: list[Any], pos: Callable[[Any], int]) -> list[Any]:
    """sort.SliceStable by the position in an order list; an item missing from it sorts first, as
    Go's comparator (`true` when either is missing) does for the insertion sort of short lists."""
    keyed = [(pos(v), v) for v in items]
    if all(p >= 0 for p, _ in keyed):
        return [v for _, v in sorted(keyed, key=lambda pv: pv[0])]
    # insertion sort with Go's comparator: less(a, b) = pos(a) < pos(b) when both are found, else true
    out = list(keyed)
    for i in range(1, len(out)):
        j = i
        while j > 0 and _go_less(out[j], out[j - 1]):
            out[j], out[j - 1] = out[j - 1], out[j]
            j -= 1
    return [v for _, v in out]


def _go_less(a: tuple[int, Any], b: tuple[int, Any]) -> bool:
    if a[0] >= 0 and b[0] >= 0:
        return a[0] < b[0]
    return True


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    """`$retainKeys`: every key the patch sets must be listed; the original keeps only the listed."""
    if _RETAIN_KEYS not in patch:
        return
    retain = patch.pop(_RETAIN_KEYS)
    if not isinstance(retain, list):
        raise bad_request(_BAD_RETAIN_KEYS)
    for k, v in patch.items():
        if v is None or k.startswith((_DELETE_PREFIX, _ORDER_PREFIX)):
            continue
        if not any(_same(k, r) for r in retain):
            raise bad_request(_BAD_RETAIN_KEYS)
    for k in list(original):
        if not any(_same(k, r) for r in retain):
            del original[k]


def _merge_ordered_lists(original: dict[str, Any], patch: dict[str, Any], node: Any) -> None:
    """mergePatchIntoOriginal: each `$setElementOrder/<field>` with its list (merged here, then
    dropped from the patch) ordered: the directive's order, then the patch's, then the live one."""
    for directive in [k for k in patch if k.startswith(_ORDER_PREFIX)]:
        order = patch.pop(directive)
        if not isinstance(order, list):
            raise internal_error(f"expected a []interface {{}}, but received a {_gotype(order)}")
        field = _extract_key(directive, _ORDER_PREFIX, _BAD_ORDER_LIST)
        in_original, in_patch = field in original, field in patch
        current, change = _as_list(original, field), _as_list(patch, field)
        meta = _field(node, field)
        _check_order(change, order, meta.key)
        if in_original and not in_patch:
            merged = current
        elif in_patch and not in_original:
            merged, _ = _remove_directives(change)
            merged = _clean(merged)
        elif in_patch:
            merged = _merge_list(current, change, meta, False)
        else:
            continue
        if meta.key:
            ours, theirs = _partition_maps(merged, order, meta.key)
        else:
            ours, theirs = _partition_primitives(merged, order)
        _element_kind(current, change)
        original[field] = _normalize_order(ours, theirs, order, current, meta.key)
        patch.pop(field, None)


def _as_list(m: dict[str, Any], field: str) -> list[Any]:
    v = m.get(field, [])
    if not isinstance(v, list):
        raise internal_error(f"expected a []interface {{}}, but received a {_gotype(v)}")
    return v


def _check_order(change: list[Any], order: list[Any], key: str) -> None:
    """validatePatchWithSetOrderList: the patch's items appear in the directive, in its order."""
    if not order or not change:
        return
    items = change
    if key:
        for v in change:
            if not isinstance(v, dict):
                raise internal_error(f"expected a map[string]interface {{}}, but received a {_gotype(v)}")
        items = [v for v in change if v.get(_DIRECTIVE) != "delete"]
    i = j = 0
    while i < len(items) and j < len(order):
        if isinstance(items[i], dict) and _DIRECTIVE in items[i]:
            i += 1
            continue
        if key:
            a, b = items[i], order[j]
            if not isinstance(b, dict):
                raise internal_error(f"expected a map[string]interface {{}}, but received a {_gotype(b)}")
            for m in (a, b):
                if key not in m:
                    raise _no_merge_key(m, key)
            equal = _same(a[key], b[key])
        else:
            equal = _same(items[i], order[j])
        if equal:
            i += 1
        j += 1
    if i < len(items) and j >= len(order):
        raise internal_error(
            f"The order in patch list:\n{_gofmt(change)}\n doesn't match {_ORDER_PREFIX} list:\n"
            f"{_gofmt(order)}\n"
        )


def _extract_key(key: str, prefix: str, error: str) -> str:
    head, sep, rest = key.partition("/")
    if not sep or head != prefix:
        raise bad_request(error)
    return rest


def _remove_directives(v: Any) -> tuple[Any, bool]:
    """removeDirectives: maps holding `$patch` are dropped, wherever they are."""
    if isinstance(v, dict):
        if _DIRECTIVE in v:
            return None, False
        out = {}
        for k, x in v.items():
            kept, keep = _remove_directives(x)
            if keep:
                out[k] = kept
        return out, True
    if isinstance(v, list):
        items = []
        for x in v:
            kept, keep = _remove_directives(x)
            if keep:
                items.append(kept)
        return items, True
    return v, True


def _is_directive(key: str) -> bool:
    return key in (_DIRECTIVE, _RETAIN_KEYS) or key.startswith((_DELETE_PREFIX + "/", _ORDER_PREFIX + "/"))


def _clean(v: Any) -> Any:
    """What the typed object keeps of a value taken from the patch as is: no nulls (omitted fields),
    no leftover directives (unknown fields)."""
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items() if x is not None and not _is_directive(k)}
    if isinstance(v, list):
        return [_clean(x) for x in v]
    return v


def _no_merge_key(m: Any, key: str) -> StatusError:
    return internal_error(f"map: {_gofmt(m)} does not contain declared merge key: {key}")


def _gotype(v: Any) -> str:
    return {
        "map": "map[string]interface {}",
        "slice": "[]interface {}",
        "nil": "<nil>",
    }.get(_kind(v), _kind(v))


def _gofmt(v: Any) -> str:
    """Go's %v of a decoded JSON value (maps print sorted by key)."""
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{_gofmt(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(_gofmt(x) for x in v) + "]"
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def internal_error(message: str) -> StatusError:
    """A failure the server does not classify: 500, the error's text as the message, no reason."""
    return StatusError(500, "", message)


__all__ = ["json_patch", "merge_patch", "strategic_merge_patch"]
