"""Apply configurations: the typed objects of server-side apply (controller-runtime's `client.Apply`).

An apply configuration says which fields a field owner wants, and only those: Go generates one type per
kind whose fields are all optional pointers. pyop uses the kind's own pydantic model instead, so the IDE
completes it and the type checker checks it, and pydantic already records which fields were set:

    navigator = apply_configuration(Navigator, "nav", "default")   # metadata.name/namespace only
    navigator.spec = NavigatorSpec(foo="bar")                       # the fields this owner manages
    await client.apply(navigator, field_owner="navigator-controller", force=True)

Only fields given to a model (to its constructor, or assigned) are sent; defaults are not, so the owner
claims nothing it did not mean to. A list's items are sent whole (with their defaults): an item of a
list is one unit to server-side apply (atomic, or keyed like conditions by `type`), and some defaults
are required there (a Condition's `lastTransitionTime`).
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from pydantic import BaseModel

from pyscaffold_op.apimachinery import KubeObject, ObjectMeta

K = TypeVar("K", bound=KubeObject)


def apply_configuration(kind: type[K], name: str, namespace: str | None = None) -> K:
    """An empty apply configuration of `kind`: only its name (and namespace) set. Assign the fields the
    owner manages (`cfg.spec = ...`, `cfg.status = ...`); the kind's required fields may stay unset."""
    metadata = ObjectMeta(name=name, namespace=namespace) if namespace else ObjectMeta(name=name)
    # model_construct: no validation, so a required `spec` need not be given for a status apply
    # (mypy reads its Self through type[K] as the bound, KubeObject; pyright keeps K)
    return cast("K", kind.model_construct(metadata=metadata))


def apply_body(obj: KubeObject, *, api_version: str, kind: str, only: str | None = None) -> dict[str, Any]:
    """The wire form of an apply configuration: apiVersion, kind and the fields set on `obj`.

    `only` keeps metadata and that one top-level field (the status subresource: "status"); the server
    ignores the rest there, but the body stays what the owner asked for.
    """
    body = _set_fields(obj)
    if only is not None:
        body = {key: value for key, value in body.items() if key in ("metadata", only)}
    return {"apiVersion": api_version, "kind": kind, **body}


def _set_fields(model: BaseModel) -> dict[str, Any]:
    # dumped whole (aliases, JSON types, the models' own serializers), then cut down to the set fields
    dumped = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    out: dict[str, Any] = {}
    for name in model.model_fields_set:
        field = type(model).model_fields.get(name)
        key = (field.serialization_alias or field.alias or name) if field is not None else name
        if key in ("apiVersion", "kind") or key not in dumped:
            continue
        value = getattr(model, name)
        out[key] = _set_fields(value) if isinstance(value, BaseModel) else dumped[key]
    extra = model.__pydantic_extra__ or {}
    out.update({key: dumped[key] for key in extra if key in dumped})
    return out
