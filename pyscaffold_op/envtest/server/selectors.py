"""The `labelSelector` and `fieldSelector` query parameters as predicates over stored objects.

The grammars are apimachinery's (`labels`, `fieldselector`, shared with the runtime); what is the
server's own is which fields a kind may be selected by.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyscaffold_op.apimachinery import fieldselector, labels
from pyscaffold_op.envtest.registry.resources import ServedResource
from pyscaffold_op.envtest.server.protocol import HttpRequest
from pyscaffold_op.envtest.status import bad_request

Predicate = Callable[[dict[str, Any]], bool]


def parse_label_selector(text: str | None) -> Predicate | None:
    """A predicate over an object's labels, or None for "everything". Raises 400 on bad syntax."""
    if not text or not text.strip():
        return None
    try:
        selector = labels.parse(text)
    except labels.SelectorError as err:
        raise bad_request(str(err)) from None
    return lambda obj: selector.matches(obj.get("metadata", {}).get("labels") or {})


def parse_field_selector(text: str | None, allowed: tuple[str, ...]) -> Predicate | None:
    """A predicate for `metadata.name=x,status.phase!=Running`; 400 for fields the kind does not index."""
    if not text or not text.strip():
        return None
    try:
        selector = fieldselector.parse(text)
    except fieldselector.FieldSelectorError as err:
        raise bad_request(str(err)) from None
    for req in selector.requirements:
        if req.field not in ("metadata.name", "metadata.namespace") and req.field not in allowed:
            raise bad_request(f"field label not supported: {req.field}")
    return selector.matches


def query_selector(req: HttpRequest, allowed: tuple[str, ...]) -> Predicate | None:
    """The request's `labelSelector` and `fieldSelector` together, over served objects."""
    return combine(
        parse_label_selector(req.q("labelSelector")),
        parse_field_selector(req.q("fieldSelector"), allowed),
    )


def served_selector(req: HttpRequest, info: ServedResource) -> Predicate | None:
    """`query_selector` over stored objects: each is seen in its served form (regarding.name, ...)."""
    pred = query_selector(req, info.field_selectors)
    conv = info.from_storage
    if pred is not None and conv is not None:
        inner = pred
        return lambda o: inner(conv(o))
    return pred


def combine(*preds: Predicate | None) -> Predicate | None:
    active = [p for p in preds if p is not None]
    if not active:
        return None
    if len(active) == 1:
        return active[0]
    return lambda obj: all(p(obj) for p in active)


__all__ = [
    "combine",
    "parse_field_selector",
    "parse_label_selector",
    "query_selector",
    "served_selector",
]
