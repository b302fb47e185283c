"""The `resource.Quantity` fields of built-in kinds as kube-apiserver stores them.

The server decodes a built-in body into its Go type, so every Quantity is parsed and written back
canonical (`0.25` is `250m`, `1.5Gi` is `1536Mi`), and the defaulting that runs on decode rounds the
values of ResourceLists (`resources.requests`, `hard`, `capacity`, `overhead`...) below a milli up to
one (`1n` is `1m`). A body whose Quantity does not parse cannot be decoded at all. Custom resources
keep what they were sent: their quantities are int-or-string strings, not Go Quantities.

Which fields are Quantities comes from the kind's definition in the models' spec (fieldtypes' kind
lookup, `$ref`s followed by name). The walk keeps only the paths that lead to a Quantity, once per
kind, so a write looks at those few paths and nothing else.
"""

from __future__ import annotations

import functools
from typing import Any

from pyscaffold_op.apiextensions import celquantity
from pyscaffold_op.envtest.registry import fieldtypes
from pyscaffold_op.envtest.server.quantity import canonical, rounded_up_to_milli
from pyscaffold_op.models import spec

QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"

# A plan is the part of a kind's type that holds Quantities:
#   SCALAR: a Quantity field; ROUNDED: a ResourceList (a map of Quantities, rounded up to a milli);
#   ("map", plan) each value of a map; ("list", plan) each item; {field: plan} a struct's fields
#   (a ResourceList or a Quantity is never an item of a list or map in the built-ins).
SCALAR = "quantity"
ROUNDED = "resource-list"
Plan = Any


def canonicalize(api_version: str, kind: str, obj: dict[str, Any]) -> str | None:
    """Rewrite `obj`'s Quantities in place as the server stores them; Go's decoding error (the
    apimachinery text) for the first that does not parse, or None. Kinds without Quantities, and
    kinds the models lack, are left alone."""
    plan = kind_plan(api_version, kind)
    if plan is None:
        return None
    changes: list[Change] = []
    try:
        _changes(obj, plan, changes)
    except celquantity.QuantityError as err:
        return str(err)
    for container, key, stored in changes:
        container[key] = stored
    return None


@functools.cache
def kind_plan(api_version: str, kind: str) -> Plan | None:
    schema = fieldtypes.kind_schema(api_version, kind)
    return _node_plan(schema) if schema else None


Change = tuple[Any, Any, str]  # (container, key or index, the stored string)


def _changes(value: Any, plan: Plan, out: list[Change]) -> None:
    """Collect where `plan`'s Quantities lie in `value` and their stored strings; nothing is changed
    until every one parsed (an undecodable body is reported as it was sent)."""
    if isinstance(plan, dict):
        if not isinstance(value, dict):
            return
        for key, sub in plan.items():
            found = value.get(key)
            if found is None:  # an absent or null field stays so (a nil pointer)
                continue
            if sub is SCALAR:
                out.append((value, key, _stored(found)))
            elif sub is ROUNDED:
                if isinstance(found, dict):
                    out.extend((found, name, _stored(q, rounded=True)) for name, q in found.items())
            else:
                _changes(found, sub, out)
        return
    shape, sub = plan
    if shape == "list" and isinstance(value, list):
        indexed: Any = enumerate(value)
    elif shape == "map" and isinstance(value, dict):
        indexed = value.items()
    else:
        return
    for key, item in indexed:
        if sub is SCALAR:
            out.append((value, key, _stored(item)))
        else:
            _changes(item, sub, out)


def _stored(value: Any, *, rounded: bool = False) -> str:
    """Quantity.UnmarshalJSON then MarshalJSON: a JSON string or number is parsed (`null` is the
    zero Quantity, `0`); anything else is no quantity."""
    if value is None:
        return "0"
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        text = "{}"  # objects, arrays and booleans fail the quantity pattern, as in Go
    else:
        text = value if isinstance(value, str) else repr(value)
    text = text.strip()
    return rounded_up_to_milli(text) if rounded else canonical(text)


@functools.cache
def _definition_plan(name: str) -> Plan | None:
    """The plan of a named definition; None when no Quantity lies below it. A definition that
    refers back to itself (JSONSchemaProps) holds none in the built-ins: the cycle reads as None."""
    if name in _visiting:
        return None
    _visiting.add(name)
    try:
        return _node_plan(spec.definition(name))
    except KeyError:
        return None
    finally:
        _visiting.discard(name)


_visiting: set[str] = set()


def _node_plan(node: dict[str, Any]) -> Plan | None:
    ref = node.get("$ref")
    if ref == QUANTITY:
        return SCALAR
    if ref is not None:
        return _definition_plan(ref)
    props = node.get("properties")
    if props:
        fields = {key: plan for key, sub in props.items() if (plan := _node_plan(sub)) is not None}
        return fields or None
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        if extra.get("$ref") == QUANTITY:
            return ROUNDED  # every map of Quantities in the built-ins is a core/v1 ResourceList
        sub = _node_plan(extra)
        return None if sub is None else ("map", sub)
    item = node.get("items")
    if isinstance(item, dict):
        sub = _node_plan(item)
        return None if sub is None else ("list", sub)
    return None
