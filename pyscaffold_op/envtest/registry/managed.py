"""Server-side apply and managedFields: field ownership per manager, conflicts, and the apply merge.

Ownership is a set of field paths per (manager, operation, subresource). A path is a tuple of
fieldsV1 elements (`f:spec`, `k:{"name":"app"}`, `v:"x"`); lists are associative (merge key), sets
(primitive), or atomic (a single leaf) as the structured-merge-diff library decides from the schema.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyscaffold_op.envtest.jsonutil import json_copy
from pyscaffold_op.envtest.registry.patch import MERGE_KEYS
from pyscaffold_op.envtest.status import StatusError

Path = tuple[str, ...]
# (field name, schema node of the list or None) -> ("map", keys) | ("set",) | ("atomic",)
ListKind = Callable[[str, dict[str, Any] | None], tuple[Any, ...]]

_META_OWNED = ("generateName", "labels", "annotations", "finalizers", "ownerReferences")


@dataclass(frozen=True, kw_only=True)
class FieldOwner:
    """Who writes (the manager, at `now`) and the served resource's shape the fields are read with."""

    manager: str
    now: str
    schema: dict[str, Any] | None
    custom: bool
    api_version: str
    subresource: str = ""


@dataclass(frozen=True, kw_only=True)
class ApplyRequest(FieldOwner):
    """A server-side apply: the writer, `force` to take contested fields, and the object's identity
    (group, resource, name) for the 409's details."""

    force: bool = False
    group: str
    resource: str
    name: str


def builtin_list_kind(field: str, schema: dict[str, Any] | None, items: list[Any] | None = None) -> tuple:
    if field not in MERGE_KEYS:
        return ("atomic",)
    key = MERGE_KEYS[field]
    if key is None:
        return ("set",)
    if field == "ports" and items and any(isinstance(i, dict) and "containerPort" in i for i in items):
        return ("map", ["containerPort", "protocol"])
    if field == "ports":
        return ("map", ["port", "protocol"])
    return ("map", [key])


def schema_list_kind(field: str, schema: dict[str, Any] | None, items: list[Any] | None = None) -> tuple:
    if field in ("finalizers",):
        return ("set",)
    if field == "ownerReferences":
        return ("map", ["uid"])
    if not schema:
        return ("atomic",)
    lt = schema.get("x-kubernetes-list-type")
    if lt == "map":
        return ("map", schema.get("x-kubernetes-list-map-keys") or [])
    if lt == "set":
        return ("set",)
    return ("atomic",)


def _key_elem(item: dict[str, Any], keys: list[str]) -> str:
    present = {k: item[k] for k in sorted(keys) if k in item}
    if not present and keys:
        present = {keys[0]: None}
    return "k:" + json.dumps(present, separators=(",", ":"), sort_keys=True)


def _child_schema(schema: dict[str, Any] | None, key: str) -> dict[str, Any] | None:
    if not schema:
        return None
    props = schema.get("properties")
    if props and key in props:
        return props[key]
    ap = schema.get("additionalProperties")
    return ap if isinstance(ap, dict) else None


def field_paths(
    obj: dict[str, Any],
    schema: dict[str, Any] | None,
    custom: bool,
    status_only: bool = False,
) -> dict[Path, Any]:
    """Owned paths of an object -> value at that path (leaves) or a marker (entries)."""
    out: dict[Path, Any] = {}
    lk = schema_list_kind if custom else builtin_list_kind
    for top, value in obj.items():
        if top in ("apiVersion", "kind"):
            continue
        if top == "metadata":
            for mk in _META_OWNED:
                if mk in value:
                    _walk(("f:metadata", f"f:{mk}"), mk, value[mk], None, lk, out)
            continue
        if status_only != (top == "status"):
            continue
        _walk((f"f:{top}",), top, value, _child_schema(schema, top), lk, out)
    return out


_ENTRY = object()


def _walk(
    prefix: Path, name: str, value: Any, schema: dict[str, Any] | None, lk: Any, out: dict[Path, Any]
) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _walk((*prefix, f"f:{k}"), k, v, _child_schema(schema, k), lk, out)
    elif isinstance(value, list) and value:
        kind = lk(name, schema, value)
        item_schema = schema.get("items") if schema else None
        if kind[0] == "map" and all(isinstance(i, dict) for i in value):
            for item in value:
                entry = (*prefix, _key_elem(item, kind[1]))
                out[entry] = _ENTRY
                for k, v in item.items():
                    _walk((*entry, f"f:{k}"), k, v, _child_schema(item_schema, k), lk, out)
        elif kind[0] == "set":
            for item in value:
                out[(*prefix, "v:" + json.dumps(item, separators=(",", ":")))] = _ENTRY
        else:
            out[prefix] = value
    else:
        out[prefix] = value


def to_fields_v1(paths: set[Path] | dict[Path, Any]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    entries: list[dict[str, Any]] = []
    for path in sorted(paths):  # sorted: each level's keys in order, as the server writes them
        node = root
        for elem in path:
            child = node.get(elem)
            if child is None:
                child = node[elem] = {}
            node = child
        if path and path[-1][:2] in ("k:", "v:"):
            entries.append(node)
    for node in entries:  # an entry that gained children needs the "." marker (after them); leaves stay {}
        if node and "." not in node:
            node["."] = {}
    return root


def from_fields_v1(fields: dict[str, Any], prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    if not fields and prefix:
        out.add(prefix)
        return out
    for k, child in fields.items():
        if k == ".":
            out.add(prefix)
        else:
            out |= from_fields_v1(child if isinstance(child, dict) else {}, (*prefix, k))
    return out


def _owns(fields: dict[str, Any], path: Path) -> bool:
    """Whether `path` is in the set `fields` (FieldsV1) holds, as `from_fields_v1` reads it, without
    building that set."""
    node: Any = fields
    for elem in path:
        if not isinstance(node, dict):
            return False  # a leaf above `path`: the set holds the leaf, nothing under it
        node = node.get(elem)
        if node is None:
            return False
    return not isinstance(node, dict) or not node or "." in node


def _entries(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return list(obj.get("metadata", {}).get("managedFields") or [])


def _entry_key(e: dict[str, Any]) -> tuple[str, str, str]:
    return (e.get("manager", ""), e.get("operation", ""), e.get("subresource", ""))


def record_update(old: dict[str, Any] | None, new: dict[str, Any], owner: FieldOwner) -> None:
    """Give `owner.manager` (operation Update) the fields this write changed; drop removed fields from all."""
    status_only = owner.subresource == "status"
    me = (owner.manager, "Update", owner.subresource)
    if old is None:  # a create: the writer owns all it wrote, no one else owns anything
        fields = to_fields_v1(field_paths(new, owner.schema, owner.custom, status_only))
        entry = _new_entry(me, owner.now, owner.api_version, fields) if fields else None
        meta = new.setdefault("metadata", {})
        if entry:
            meta["managedFields"] = [entry]
        else:  # nothing tracked was written (a bare ConfigMap): no entry, and no empty list either
            meta.pop("managedFields", None)
        return
    new_paths = field_paths(new, owner.schema, owner.custom, status_only)
    old_paths = field_paths(old, owner.schema, owner.custom, status_only) if old else {}
    changed = {p for p, v in new_paths.items() if p not in old_paths or old_paths[p] != v}
    removed = set(old_paths) - set(new_paths)
    entries = _entries(old) if old else []
    _set_ownership(new, entries, me, changed, removed, owner.now, owner.api_version, replace=False)


def _set_ownership(
    obj: dict[str, Any],
    entries: list[dict[str, Any]],
    me: tuple[str, str, str],
    mine: set[Path],
    removed: set[Path],
    now: str,
    api_version: str,
    replace: bool,
) -> None:
    result: list[dict[str, Any]] = []
    found = False
    touched = mine | removed
    for e in entries:
        fields = e.get("fieldsV1") or {}
        if e.get("fieldsType") == "FieldsV1":
            # the usual write (a status update, a new manager) leaves the sets as they are: seen
            # without reading every entry into a set
            if _entry_key(e) != me:
                if not any(_owns(fields, p) for p in touched):
                    result.append(e)
                    continue
            elif (
                not replace
                and all(_owns(fields, p) for p in mine)
                and not any(_owns(fields, p) for p in removed)
            ):
                found = True
                result.append({**e, "time": now, "apiVersion": api_version})
                continue
        before = from_fields_v1(fields)
        if _entry_key(e) == me:
            found = True
            paths = set(mine) if replace else (before | mine)
            paths -= removed
            e = {**e, "time": now, "apiVersion": api_version}
        else:
            paths = before - mine - removed if me[1] == "Update" or not replace else before - removed
        if paths == before and e.get("fieldsType") == "FieldsV1":
            result.append(e)  # the same set: keep its fieldsV1 instead of rebuilding it
        elif paths:
            result.append({**e, "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(paths)})
    if not found and mine:
        result.append(_new_entry(me, now, api_version, to_fields_v1(mine)))
    obj.setdefault("metadata", {})["managedFields"] = sorted(result, key=_entry_order)


def _entry_order(e: dict[str, Any]) -> tuple[str, str, str, str, str]:
    """The order the server stores managedFields in (apimachinery's sortEncodedManagedFields): by
    operation (Apply before Update), then time (RFC 3339 to the second: its text sorts as the time),
    manager, apiVersion and subresource."""
    return (
        e.get("operation", ""),
        e.get("time", ""),
        e.get("manager", ""),
        e.get("apiVersion", ""),
        e.get("subresource", ""),
    )


def _new_entry(
    me: tuple[str, str, str], now: str, api_version: str, fields: dict[str, Any]
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "manager": me[0],
        "operation": me[1],
        "apiVersion": api_version,
        "time": now,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    if me[2]:
        entry["subresource"] = me[2]
    return entry


def apply(current: dict[str, Any] | None, applied: dict[str, Any], req: ApplyRequest) -> dict[str, Any]:
    """The server-side apply of `applied` over `current`; raises 409 Conflict listing contested fields."""
    schema, custom, now, api_version, force = req.schema, req.custom, req.now, req.api_version, req.force
    subresource = req.subresource
    status_only = subresource == "status"
    lk = schema_list_kind if custom else builtin_list_kind
    applied_paths = field_paths(applied, schema, custom, status_only)
    mine = set(applied_paths)
    me = (req.manager, "Apply", subresource)
    if current is None:
        result = json_copy(applied)
        _set_ownership(result, [], me, mine, set(), now, api_version, replace=True)
        return result
    cur_paths = field_paths(current, schema, custom, status_only)
    entries = _entries(current)
    conflicts: list[tuple[str, str, Path]] = []
    for e in entries:
        if _entry_key(e) == me or e.get("subresource", "") != subresource:
            continue
        for p in from_fields_v1(e.get("fieldsV1") or {}) & mine:
            if applied_paths[p] is not _ENTRY and cur_paths.get(p, _ENTRY) != applied_paths[p]:
                conflicts.append((e.get("manager", ""), e.get("apiVersion", api_version), p))
    if conflicts and not force:
        raise _conflict_error(conflicts, req.group, req.resource, req.name)
    result = _merge(json_copy(current), applied, schema if custom else None, lk)
    previous: set[Path] = set()
    others: set[Path] = set()
    for e in entries:
        paths = from_fields_v1(e.get("fieldsV1") or {})
        if _entry_key(e) == me:
            previous = paths
        else:
            others |= paths
    # a field this manager applied before and no longer does goes, unless it is still the parent
    # of one it applies (`data: {}` then `data: {key1: v}`: data stays)
    parents = {p[:i] for p in mine for i in range(1, len(p))}
    for p in sorted(previous - mine - (others - (mine if force else set())), key=len, reverse=True):
        if p not in others and p not in parents:
            _remove_path(result, p)
    if force:
        forced = {c[2] for c in conflicts}
        # forced fields move to this manager: strip them from everyone else, and an entry left with no
        # field goes (the server keeps no empty entries)
        stripped = []
        for e in entries:
            paths = from_fields_v1(e.get("fieldsV1") or {})
            if _entry_key(e) == me or not paths & forced:
                stripped.append(e)
            elif paths - forced:
                stripped.append({**e, "fieldsV1": to_fields_v1(paths - forced)})
        entries = stripped
    _set_ownership(result, entries, me, mine, set(), now, api_version, replace=True)
    return result


def _conflict_error(
    conflicts: list[tuple[str, str, Path]], group: str, resource: str, name: str
) -> StatusError:
    causes = []
    lines = []
    for mgr, av, path in conflicts:
        dotted = _dotted(path)
        causes.append(
            {
                "reason": "FieldManagerConflict",
                "message": f'conflict with "{mgr}" using {av}',
                "field": dotted,
            }
        )
        lines.append(f'conflict with "{mgr}" using {av}: {dotted}')
    n = len(conflicts)
    msg = f"Apply failed with {n} conflict{'s' if n > 1 else ''}: " + "\n".join(lines)
    # apimachinery's NewApplyConflict: the causes only, no name, group or kind ("TODO: Get obj details")
    del group, resource, name
    return StatusError(409, "Conflict", msg, {"causes": causes})


def _dotted(path: Path) -> str:
    out = ""
    for elem in path:
        if elem.startswith("f:"):
            out += "." + elem[2:]
        else:
            out += "[" + elem[2:].replace('"', "").replace("{", "").replace("}", "").replace(":", "=") + "]"
    return out


def _merge(current: Any, applied: Any, schema: dict[str, Any] | None, lk: Any, name: str = "") -> Any:
    if isinstance(current, dict) and isinstance(applied, dict):
        for k, v in applied.items():
            if k == "metadata" and name == "" and isinstance(v, dict):
                meta = current.setdefault("metadata", {})
                for mk in _META_OWNED:
                    if mk in v:
                        meta[mk] = _merge(meta.get(mk), v[mk], None, schema_list_kind, mk)
                continue
            current[k] = _merge(current.get(k), v, _child_schema(schema, k), lk, k)
        return current
    if isinstance(current, list) and isinstance(applied, list):
        kind = lk(name, schema, applied + current)
        if kind[0] == "set":
            return current + [x for x in applied if x not in current]
        if kind[0] == "map" and all(isinstance(i, dict) for i in applied + current):
            keys = kind[1]
            idx = {_key_elem(i, keys): n for n, i in enumerate(current)}
            item_schema = schema.get("items") if schema else None
            for item in applied:
                k = _key_elem(item, keys)
                if k in idx:
                    current[idx[k]] = _merge(current[idx[k]], item, item_schema, lk, "")
                else:
                    idx[k] = len(current)
                    current.append(json_copy(item))
            return current
    return json_copy(applied)


def _remove_path(obj: Any, path: Path) -> None:
    node = obj
    for elem in path[:-1]:
        node = _step(node, elem)
        if node is None:
            return
    last = path[-1]
    if last.startswith("f:") and isinstance(node, dict):
        node.pop(last[2:], None)
    elif isinstance(node, list):
        target = _step(node, last)
        if target is not None:
            node.remove(target)


def _step(node: Any, elem: str) -> Any:
    if elem.startswith("f:"):
        return node.get(elem[2:]) if isinstance(node, dict) else None
    if not isinstance(node, list):
        return None
    if elem.startswith("k:"):
        want = json.loads(elem[2:])
        for item in node:
            if isinstance(item, dict) and all(item.get(k) == v for k, v in want.items()):
                return item
    elif elem.startswith("v:"):
        want = json.loads(elem[2:])
        for item in node:
            if item == want:
                return item
    return None
