"""Kubernetes API machinery as pydantic models: the base class for custom resources and shared types.

Pure pydantic, no client libraries. Names load on first use (PEP 562), so the CLI can import the
naming rules in `pyscaffold_op.apimachinery.naming` without building any pydantic model.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyscaffold_op.apimachinery.fields import (
        Duration,
        EmbeddedResource,
        FreeForm,
        Int32,
        Int64,
        IntOrString,
        ListType,
        MapType,
        Nullable,
        PreserveUnknownFields,
        Quantity,
        Time,
        XValidation,
    )
    from pyscaffold_op.apimachinery.resource import (
        Condition,
        CustomResource,
        GroupVersionKind,
        KubeModel,
        KubeObject,
        ObjectMeta,
        OwnerReference,
        find_condition,
        remove_condition,
        set_condition,
    )

_MODULE_OF = {
    **dict.fromkeys(
        (
            "Duration",
            "EmbeddedResource",
            "FreeForm",
            "Int32",
            "Int64",
            "IntOrString",
            "ListType",
            "MapType",
            "Nullable",
            "PreserveUnknownFields",
            "Quantity",
            "Time",
            "XValidation",
        ),
        "fields",
    ),
    **dict.fromkeys(
        (
            "Condition",
            "CustomResource",
            "GroupVersionKind",
            "KubeModel",
            "KubeObject",
            "ObjectMeta",
            "OwnerReference",
            "find_condition",
            "remove_condition",
            "set_condition",
        ),
        "resource",
    ),
}

__all__ = [
    "Condition",
    "CustomResource",
    "Duration",
    "EmbeddedResource",
    "FreeForm",
    "GroupVersionKind",
    "Int32",
    "Int64",
    "IntOrString",
    "KubeModel",
    "KubeObject",
    "ListType",
    "MapType",
    "Nullable",
    "ObjectMeta",
    "OwnerReference",
    "PreserveUnknownFields",
    "Quantity",
    "Time",
    "XValidation",
    "find_condition",
    "remove_condition",
    "set_condition",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
