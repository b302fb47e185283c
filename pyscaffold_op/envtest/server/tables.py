"""`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`: the server-side printing kubectl get uses."""

from __future__ import annotations

import json
import re
from typing import Any

from pyscaffold_op.envtest.registry.resources import ServedResource
from pyscaffold_op.envtest.server import printers

_NAME_COL = {
    "name": "Name",
    "type": "string",
    "format": "name",
    "priority": 0,
    "description": "Name must be unique within a namespace. Is required when creating resources, "
    "although some resources may allow a client to request the generation of an "
    "appropriate name automatically. Name is primarily intended for creation "
    "idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
}


def age(ts: str | None) -> str:
    return printers.since(ts)


_SEG = re.compile(
    r"\.([A-Za-z0-9_\-]+)|\[(\d+|\*)\]|\[\?\(@\.([A-Za-z0-9_.\-]+)\s*==\s*[\"']([^\"']*)[\"']\)\]"
)


def jsonpath(obj: Any, path: str) -> list[Any]:
    """The subset of kubectl JSONPath printer columns use: `.a.b`, `[0]`, `[*]`, `[?(@.type=="Ready")]`."""
    path = path.strip().removeprefix("{").removesuffix("}")
    if path.startswith("$"):
        path = path[1:]
    if not path.startswith((".", "[")):
        path = "." + path
    cur = [obj]
    pos = 0
    while pos < len(path):
        m = _SEG.match(path, pos)
        if not m:
            return []
        pos = m.end()
        field, index, fkey, fval = m.groups()
        nxt: list[Any] = []
        for c in cur:
            if field is not None and isinstance(c, dict) and field in c:
                nxt.append(c[field])
            elif index is not None and isinstance(c, list):
                if index == "*":
                    nxt.extend(c)
                elif int(index) < len(c):
                    nxt.append(c[int(index)])
            elif fkey is not None and isinstance(c, list):
                for item in c:
                    v = jsonpath(item, "." + fkey)
                    if v and str(v[0]) == fval:
                        nxt.append(item)
        cur = nxt
    return cur


def _cell(values: list[Any], typ: str) -> Any:
    """apiextensions' tableconvertor: the first result; `string` columns print it as JSONPath does,
    other types keep a value of their type (else null); `date` is an age."""
    if not values or values[0] is None:
        return None
    v = values[0]
    if typ == "string":
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, dict | list):
            return json.dumps(v, separators=(",", ":"))
        return str(v)
    if typ == "integer" and isinstance(v, int | float) and not isinstance(v, bool):
        return int(v)
    if typ == "number" and isinstance(v, int | float) and not isinstance(v, bool):
        return float(v)
    if typ == "boolean" and isinstance(v, bool):
        return v
    if typ == "date" and isinstance(v, str):
        return age(v) if printers._parse(v) is not None else "<invalid>"
    return None


def columns_and_rows(
    info: ServedResource, items: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    if info.custom:
        cols = info.printer_columns
        if cols is None:
            cols = [{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]
        defs = [_NAME_COL] + [
            {
                "name": c["name"],
                "type": c.get("type", "string"),
                "format": c.get("format", ""),
                "description": c.get("description")
                or f"Custom resource definition column (in JSONPath format): {c['jsonPath']}",
                "priority": c.get("priority", 0),
            }
            for c in cols
        ]
        rows = [
            [o["metadata"]["name"]]
            + [_cell(jsonpath(o, c["jsonPath"]), c.get("type", "string")) for c in cols]
            for o in items
        ]
        return defs, rows
    return printers.builtin_rows(info.group, info.plural, items)


def partial_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]}


def to_table(
    info: ServedResource,
    items: list[dict[str, Any]],
    include_object: str,
    list_meta: dict[str, Any],
    with_columns: bool = True,
) -> dict[str, Any]:
    defs, rows = columns_and_rows(info, items)
    out_rows = []
    pods = not info.custom and info.group == "" and info.plural == "pods"
    for obj, cells in zip(items, rows, strict=True):
        row: dict[str, Any] = {"cells": cells}
        if pods:
            conditions = printers.pod_conditions(obj)
            if conditions is not None:
                row["conditions"] = conditions
        if include_object == "Object":
            row["object"] = obj
        elif include_object == "None":
            row["object"] = None
        else:
            row["object"] = partial_metadata(obj)
        out_rows.append(row)
    table: dict[str, Any] = {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta}
    if with_columns:
        table["columnDefinitions"] = defs
    else:
        table["columnDefinitions"] = None
    table["rows"] = out_rows
    return table


def watch_transform(info: ServedResource, include_object: str) -> Any:
    """A watch's events as Tables: the column definitions in the first event only (the server's
    watchEmbeddedEncoder prints headers once), null in the others."""
    first = [True]

    def transform(obj: dict[str, Any]) -> dict[str, Any]:
        headers, first[0] = first[0], False
        meta = {"resourceVersion": obj["metadata"].get("resourceVersion", "")}
        return to_table(info, [obj], include_object, meta, with_columns=headers)

    return transform


INCLUDE_OBJECT = ("", "None", "Metadata", "Object")
