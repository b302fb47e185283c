"""Server-side apply and managedFields: field ownership per manager, conflicts, and the apply merge.

Ownership is a set of field paths per (manager, operation, subresource). A path is a tuple of
fieldsV1 elements (`f:spec`, `k:{"name":"app"}`, `v:"x"`); lists are associative (merge key), sets
(primitive), or atomic (a single leaf) as the structured-merge-diff library decides from the schema:
a custom resource's, or a built-in kind's definition in the models' spec (`fieldtypes`), the one
source of the type information strategic merge reads too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyscaffold_op.envtest.jsonutil import json_copy
from pyscaffold_op.envtest.registry import fieldtypes
from pyscaffold_op.envtest.registry.fieldtypes import Schema
from pyscaffold_op.envtest.status import StatusError

Path = tuple[str, ...]

_META_OWNED = ("generateName", "labels", "annotations", "finalizers", "ownerReferences")


@dataclass(frozen=True, kw_only=True)
class FieldOwner:
    """Who writes (the manager, at `now`) and the served resource's shape the fields are read with:
    a custom resource's `schema`, or for built-ins (`custom` false) the definition of `kind`."""

    manager: str
    now: str
    schema: dict[str, Any] | None
    custom: bool
    api_version: str
    subresource: str = ""
    kind: str = ""

    def type_schema(self, obj: dict[str, Any]) -> Schema | None:
        if self.custom:
            return self.schema
        kind = self.kind or obj.get("kind")
        return fieldtypes.kind_schema(self.api_version, kind) if isinstance(kind, str) else None


@dataclass(frozen=True, kw_only=True)
class ApplyRequest(FieldOwner):
    """A server-side apply: the writer, `force` to take contested fields, and the object's identity
    (group, resource, name)."""

    force: bool = False
    group: str
    resource: str
    name: str


def _key_elem(item: dict[str, Any], keys: list[str], item_schema: Schema | None) -> str:
    """`k:{...}`: the item's key fields (sorted); a missing key takes its schema default, as
    structured-merge-diff reads `protocol` of a port."""
    present: dict[str, Any] = {}
    for k in sorted(keys):
        if k in item:
            present[k] = item[k]
            continue
        default = (fieldtypes.child(item_schema, k) or {}).get("default")
        if default is not None:
            present[k] = default
    if not present and keys:
        present = {keys[0]: None}
    return "k:" + json.dumps(present, separators=(",", ":"), sort_keys=True)


def field_paths(
    obj: dict[str, Any],
    schema: Schema | None,
    custom: bool = False,
    status_only: bool = False,
    nodes: bool = False,
) -> dict[Path, Any]:
    """Owned paths of an object -> value at that path (leaves) or a marker (entries): the set
    structured-merge-diff's ToFieldSet makes of it, read with `schema` (a custom resource's, or a
    built-in kind's definition; None: maps granular, lists atomic). `nodes`: with the maps (for
    custom resources every object) as paths of their own, as an Update's comparison adds them (the
    `.` of `f:data` in a create's entry); the Go types' struct fields exist in every object, so a
    built-in's structs never appear."""
    out: dict[Path, Any] = {}
    walk = _Walk(out, ("all" if custom else "maps") if nodes else "", typed=schema is not None)
    for top, value in obj.items():
        if top in ("apiVersion", "kind"):
            continue
        if top == "metadata":
            if isinstance(value, dict):
                meta_schema = fieldtypes.object_meta()
                for mk in _META_OWNED:
                    if mk in value:
                        walk((("f:metadata", f"f:{mk}")), value[mk], fieldtypes.child(meta_schema, mk))
            continue
        if status_only != (top == "status"):
            continue
        walk((f"f:{top}",), value, fieldtypes.child(schema, top))
    return out


_ENTRY = object()


@dataclass(frozen=True, slots=True)
class _Walk:
    out: dict[Path, Any]
    nodes: str  # "": leaves and entries only; "maps": and maps; "all": and every object
    typed: bool = True  # False: no schema at all (a kind the models lack)

    def __call__(self, prefix: Path, value: Any, schema: Schema | None) -> None:
        node = fieldtypes.resolve(schema)
        if isinstance(value, dict):
            if not value or fieldtypes.atomic_map(node):  # an empty map is owned as itself
                self.out[prefix] = value
                return
            if self.nodes == "all" or (self.nodes == "maps" and fieldtypes.is_map(node)):
                self.out[prefix] = _ENTRY
            declared = (node or {}).get("properties") or {}
            for k, v in value.items():
                path = (*prefix, f"f:{k}")
                if self.typed and k not in declared and isinstance(v, dict) and v:
                    # a map's key, or a field of an untyped (preserve-unknown) object, holding an
                    # object is a member itself (ToFieldSet's visitMapItems): `.` under `f:x`
                    self.out[path] = _ENTRY
                self(path, v, fieldtypes.child(node, k))
            return
        if not isinstance(value, list):
            self.out[prefix] = value
            return
        kind = fieldtypes.list_kind(node)
        if kind[0] == "map" and all(isinstance(i, dict) for i in value):
            item_schema = fieldtypes.items(node)
            atomic_items = fieldtypes.atomic_map(item_schema)  # ownerReferences: owned as keys only
            for item in value:
                entry = (*prefix, _key_elem(item, kind[1], item_schema))
                self.out[entry] = item if atomic_items else _ENTRY
                if atomic_items:
                    continue
                for k, v in item.items():
                    self((*entry, f"f:{k}"), v, fieldtypes.child(item_schema, k))
        elif kind[0] == "set":
            for item in value:
                self.out[(*prefix, "v:" + json.dumps(item, separators=(",", ":")))] = _ENTRY
        elif kind[0] == "atomic" or value:
            self.out[prefix] = value  # an atomic list is one value; an empty associative list owns nothing


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
        if path:
            entries.append(node)
    for node in entries:  # a member that has children needs the "." marker (after them); leaves stay {}
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


def written_entries(sent: Any, live: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """The managedFields an update or patch leaves when its object carries `sent`: `[]` or `[{}]`
    reset them to none (isResetManagedFields; an object without managed fields is then not tracked
    by updates), entries that all decode replace them, anything else leaves the live ones."""
    if sent == live:
        return live
    if sent == [] or sent == [{}]:
        return None
    if isinstance(sent, list) and all(_decodes(e) for e in sent):
        return sent  # the update then tracks on them; entries left empty are dropped
    return live


def _decodes(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and entry.get("operation") in ("Apply", "Update")
        and entry.get("fieldsType") == "FieldsV1"
        and bool(entry.get("apiVersion"))
        and isinstance(entry.get("fieldsV1", {}), dict)
    )


def record_update(old: dict[str, Any] | None, new: dict[str, Any], owner: FieldOwner) -> None:
    """Give `owner.manager` (operation Update) the fields this write changed; drop removed fields from all."""
    status_only = owner.subresource == "status"
    schema = owner.type_schema(new)
    me = (owner.manager, "Update", owner.subresource)
    if old is None:  # a create: the writer owns all it wrote, no one else owns anything
        fields = to_fields_v1(field_paths(new, schema, owner.custom, status_only, nodes=True))
        entry = _new_entry(me, owner.now, owner.api_version, fields) if fields else None
        meta = new.setdefault("metadata", {})
        if entry:
            meta["managedFields"] = [entry]
        else:  # nothing tracked was written (a bare ConfigMap): no entry, and no empty list either
            meta.pop("managedFields", None)
        return
    entries = _entries(new)  # the live entries, or those the write set (written_entries)
    if not entries:
        # an object without managed fields stays without: updates are not tracked on it
        # (the apiserver's skipNonAppliedManager; an apply first gives them to before-first-apply)
        new["metadata"].pop("managedFields", None)
        return
    new_paths = field_paths(new, schema, owner.custom, status_only, nodes=True)
    old_paths = field_paths(old, schema, owner.custom, status_only, nodes=True)
    changed = {p for p, v in new_paths.items() if p not in old_paths or old_paths[p] != v}
    removed = set(old_paths) - set(new_paths)
    _set_ownership(new, entries, me, changed, removed, owner.now, owner.api_version)


def _set_ownership(
    obj: dict[str, Any],
    entries: list[dict[str, Any]],
    me: tuple[str, str, str],
    mine: set[Path],
    removed: set[Path],
    now: str,
    api_version: str,
) -> None:
    """An Update's ownership (structured-merge-diff's Updater.Update through the apiserver's
    managedFieldsUpdater): the writer adds the fields it changed, every manager loses what was
    removed and others what the writer changed; the writer's time and apiVersion move only when it
    changed something, and managers left with nothing are dropped."""
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
            elif all(_owns(fields, p) for p in mine) and not any(_owns(fields, p) for p in removed):
                found = True
                result.append({**e, "time": now, "apiVersion": api_version} if mine else e)
                continue
        before = from_fields_v1(fields)
        if _entry_key(e) == me:
            found = True
            paths = (before | mine) - removed
            if mine:
                e = {**e, "time": now, "apiVersion": api_version}
        else:
            paths = before - mine - removed
        if paths == before and e.get("fieldsType") == "FieldsV1":
            result.append(e)  # the same set: keep its fieldsV1 instead of rebuilding it
        elif paths:
            result.append({**e, "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(paths)})
    if not found and mine:
        result.append(_new_entry(me, now, api_version, to_fields_v1(mine)))
    _store_entries(obj, result)


def _store_entries(obj: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    """managedFields in the order the server encodes them (sortEncodedManagedFields): by operation
    (Apply before Update), time (none first), manager, apiVersion, subresource; managers that own
    nothing are dropped."""
    entries[:] = [e for e in entries if e.get("fieldsV1")]
    entries.sort(
        key=lambda e: (
            e.get("operation", ""),
            e.get("time", ""),
            e.get("manager", ""),
            e.get("apiVersion", ""),
            e.get("subresource", ""),
        )
    )
    meta = obj.setdefault("metadata", {})
    if entries:
        meta["managedFields"] = entries
    else:
        meta.pop("managedFields", None)


def _new_entry(
    me: tuple[str, str, str], now: str | None, api_version: str, fields: dict[str, Any]
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "manager": me[0],
        "operation": me[1],
        "apiVersion": api_version,
    }
    if now is not None:
        entry["time"] = now
    entry["fieldsType"] = "FieldsV1"
    entry["fieldsV1"] = fields
    if me[2]:
        entry["subresource"] = me[2]
    return entry


def apply(current: dict[str, Any] | None, applied: dict[str, Any], req: ApplyRequest) -> dict[str, Any]:
    """The server-side apply of `applied` over `current` (structured-merge-diff's Updater.Apply):
    merge, prune what this manager applied before and gave up, then ownership; raises 409 Conflict
    listing the contested fields unless `req.force`, 500 when `applied` is not a value of the kind."""
    schema = req.type_schema(applied)
    if schema is not None:
        _check_typed(applied, schema)
    status_only = req.subresource == "status"
    applied_paths = field_paths(applied, schema, req.custom, status_only)
    mine = set(applied_paths)
    me = (req.manager, "Apply", req.subresource)
    if current is None:
        result = _drop_empty(json_copy(applied), schema) if not req.custom else json_copy(applied)
        fields = to_fields_v1(mine)
        _store_entries(result, [_new_entry(me, req.now, req.api_version, fields)] if mine else [])
        return result
    entries = _entries(current)
    if not entries:  # an object no one manages: an Update first gives its fields to this name
        fields = to_fields_v1(field_paths(current, schema, req.custom, status_only, nodes=True))
        if fields:
            entries = [_new_entry(("before-first-apply", "Update", ""), req.now, req.api_version, fields)]
    sets = {_entry_key(e): from_fields_v1(e.get("fieldsV1") or {}) for e in entries}
    previous = sets.get(me, set())
    others: set[Path] = set().union(*(p for k, p in sets.items() if k != me))
    result = _merge_object(json_copy(current), applied, schema)
    _prune(result, previous - mine, others, mine)
    if not req.custom:
        _drop_empty(result, schema)
    cur_paths = field_paths(current, schema, req.custom, status_only, nodes=True)
    new_paths = field_paths(result, schema, req.custom, status_only, nodes=True)
    # what the apply changes (Compare's Modified and Added: values, not the maps holding them)
    changed = {p for p, v in new_paths.items() if v is not _ENTRY and cur_paths.get(p, _ENTRY) != v}
    conflicts: list[tuple[str, Path]] = []
    for e in entries:
        key = _entry_key(e)
        if key == me:  # any other manager, of any subresource (a /scale apply meets the spec's)
            continue
        conflicts.extend((_manager_label(e), p) for p in sorted(sets[key] & changed))
    if conflicts and not req.force:
        raise _conflict_error(conflicts)
    forced = {p for _, p in conflicts}
    removed = set(cur_paths) - set(new_paths)
    modified = _without_meta(result) != _without_meta(current)
    kept: list[dict[str, Any]] = []
    for e in entries:
        key = _entry_key(e)
        if key == me:
            continue
        paths = sets[key] - forced - removed
        if paths == sets[key]:
            kept.append(e)
        elif paths:
            kept.append({**e, "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(paths)})
    if mine:
        # the apply's time moves only when the object changed (managedFieldsUpdater.Apply)
        mine_entry = next((e for e in entries if _entry_key(e) == me), None)
        time = req.now if modified else (mine_entry or {}).get("time")
        if req.subresource == "scale":  # the scale handler's entries carry no time
            time = None
        kept.append(_new_entry(me, time, req.api_version, to_fields_v1(mine)))
    _store_entries(result, kept)
    return result


def _without_meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return {**obj, "metadata": meta}


def _check_typed(applied: dict[str, Any], schema: Schema) -> None:
    """The typed conversion of the applied object (built-in or custom): an unknown field, a value of
    the wrong type, an associative list item without a key or a duplicate item is the server's
    unclassified 500."""
    found = fieldtypes.typed_error(applied, schema)
    if found is None:
        return
    meta = applied.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    api_version = str(applied.get("apiVersion", ""))
    group_version = api_version if "/" in api_version else "/" + api_version
    name = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    where = f"{name}; {group_version}, Kind={applied.get('kind', '')}"
    raise StatusError(500, "", f"failed to create typed patch object ({where}): {found}")


_ZERO: dict[str, Any] = {"string": "", "integer": 0, "number": 0, "boolean": False}


def _drop_empty(obj: dict[str, Any], schema: Schema | None, top: bool = True) -> dict[str, Any]:
    """Go's `omitempty`: a built-in's empty maps and lists (labels, data, matchLabels, finalizers,
    ...) are not written. Required fields are the ones without `omitempty` in the Go types."""
    node = fieldtypes.resolve(schema)
    required = set((node or {}).get("required") or ())
    for k in list(obj):
        sub = fieldtypes.object_meta() if top and k == "metadata" else fieldtypes.child(node, k)
        v = obj[k]
        if v is None:
            if fieldtypes.is_map(node):  # a null value of a Go map is the element's zero value
                obj[k] = _ZERO.get(str((sub or {}).get("type")), "")
            else:  # a null field (an applied `replicas: null`) is a nil pointer: not written
                del obj[k]
            continue
        if sub is None or k in required:
            continue
        if (v == {} and fieldtypes.is_map(sub)) or (v == [] and sub.get("type") == "array"):
            del obj[k]
        elif isinstance(v, dict):
            _drop_empty(v, sub, top=False)
        elif isinstance(v, list):
            item = fieldtypes.items(sub)
            for x in v:
                if isinstance(x, dict) and item is not None:
                    _drop_empty(x, item, top=False)
    return obj


def _manager_label(e: dict[str, Any]) -> str:
    """printManager: how a conflict names the manager (Update entries with their apiVersion)."""
    label = json.dumps(e.get("manager", ""))
    if e.get("subresource"):
        label += f" with subresource {json.dumps(e['subresource'])}"
    if e.get("operation") == "Update":
        label += f" using {e.get('apiVersion', '')}"
    return label


def _conflict_error(conflicts: list[tuple[str, Path]]) -> StatusError:
    """NewConflictError: one cause per contested field; the details name nothing else."""
    causes = [
        {"reason": "FieldManagerConflict", "message": f"conflict with {who}", "field": _dotted(path)}
        for who, path in conflicts
    ]
    if len(conflicts) == 1:
        who, path = conflicts[0]
        msg = f"Apply failed with 1 conflict: conflict with {who}: {_dotted(path)}"
    else:
        by_manager: dict[str, list[str]] = {}
        for who, path in conflicts:
            by_manager.setdefault(who, []).append(_dotted(path))
        lines: list[str] = []
        for who in sorted(by_manager):
            lines.append(f"conflicts with {who}:")
            lines.extend(f"- {p}" for p in by_manager[who])
        msg = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return StatusError(409, "Conflict", msg, {"causes": causes})


def _dotted(path: Path) -> str:
    """fieldpath.Path.String: `.spec.containers[name="c"].image`, `.metadata.finalizers[="x"]`."""
    out = ""
    for elem in path:
        if elem.startswith("f:"):
            out += "." + elem[2:]
        elif elem.startswith("k:"):
            keys = json.loads(elem[2:])
            out += "[" + ",".join(f"{k}={_go_string(v)}" for k, v in keys.items()) + "]"
        elif elem.startswith("v:"):
            out += f"[={_go_string(json.loads(elem[2:]))}]"
        else:
            out += f"[{elem[2:]}]"
    return out


def _go_string(v: Any) -> str:
    """value.ToString: strings quoted, other scalars as JSON."""
    return json.dumps(v, separators=(",", ":"))


def _merge_object(current: dict[str, Any], applied: dict[str, Any], schema: Schema | None) -> dict[str, Any]:
    """The applied configuration merged into the live object; of metadata only the owned fields."""
    for k, v in applied.items():
        if k == "metadata" and isinstance(v, dict):
            meta = current.setdefault("metadata", {})
            meta_schema = fieldtypes.object_meta()
            for mk in _META_OWNED:
                if mk in v:
                    meta[mk] = _merge(meta.get(mk), v[mk], fieldtypes.child(meta_schema, mk))
            continue
        current[k] = _merge(current.get(k), v, fieldtypes.child(schema, k))
    return current


def _merge(current: Any, applied: Any, schema: Schema | None) -> Any:
    node = fieldtypes.resolve(schema)
    if isinstance(current, dict) and isinstance(applied, dict) and not fieldtypes.atomic_map(node):
        for k, v in applied.items():
            current[k] = _merge(current.get(k), v, fieldtypes.child(node, k))
        return current
    if isinstance(current, list) and isinstance(applied, list):
        kind = fieldtypes.list_kind(node)
        if kind[0] == "set":
            return _merge_items(current, applied, lambda v: json.dumps(v, sort_keys=True), None)
        if kind[0] == "map" and all(isinstance(i, dict) for i in applied + current):
            item_schema = fieldtypes.items(node)
            return _merge_items(current, applied, lambda i: _key_elem(i, kind[1], item_schema), item_schema)
    return json_copy(applied)


def _merge_items(
    live: list[Any], applied: list[Any], key: Callable[[Any], str], item_schema: Schema | None
) -> list[Any]:
    """structured-merge-diff's merge of two sets or associative lists (visitListItems): both orders
    kept as far as they agree; a shared item waits until the applied order reaches it, an item only
    live stays where it was, an applied one goes where the applied list puts it."""
    lkeys, rkeys = [key(i) for i in live], [key(i) for i in applied]
    lhs, rhs = dict(zip(lkeys, live, strict=True)), dict(zip(rkeys, applied, strict=True))
    shared = [k for k in rkeys if k in lhs]
    out: list[Any] = []
    merged: set[str] = set()

    def take(k: str) -> None:
        merged.add(k)
        if k in lhs and item_schema is not None:
            out.append(_merge(lhs[k], rhs[k], item_schema))
        else:
            out.append(lhs[k] if k in lhs else json_copy(rhs[k]))

    def advance(k: str) -> None:
        if shared and shared[0] == k:
            shared.pop(0)

    li = ri = 0
    while li < len(lkeys) or ri < len(rkeys):
        if li < len(lkeys) and ri < len(rkeys):
            lk = lkeys[li]
            if lk == rkeys[ri]:
                take(lk)
                advance(lk)
                li, ri = li + 1, ri + 1
                continue
            if lk in rhs and shared and shared[0] != lk:
                li += 1  # a shared item the applied order puts later
                continue
        if li < len(lkeys):
            lk = lkeys[li]
            if lk not in rhs:
                out.append(lhs[lk])
                li += 1
                continue
            if lk in merged:
                li += 1
                continue
        if ri < len(rkeys):
            rk = rkeys[ri]
            take(rk)
            advance(rk)
            ri += 1
    return out


def _prune(obj: dict[str, Any], given_up: set[Path], others: set[Path], mine: set[Path]) -> None:
    """Remove what this manager applied before and no longer does, unless another manager owns it
    (or something under it), or it is still the parent of a field it applies (`data: {}` then
    `data: {key1: v}`: data stays). Shallowest first: an item goes whole, with the defaults in it."""
    keep = others | mine
    parents = {p[:i] for p in keep for i in range(1, len(p))}
    for p in sorted(given_up, key=len):
        if p not in keep and p not in parents:
            _remove_path(obj, p)


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
            if isinstance(item, dict) and all(item.get(k, v) == v for k, v in want.items()):
                return item
    elif elem.startswith("v:"):
        want = json.loads(elem[2:])
        for item in node:
            if item == want:
                return item
    return None
