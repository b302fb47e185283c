"""Kubernetes API machinery as pydantic models: the base class for custom resources and shared types.

Pure pydantic, no client libraries: importing it is cheap, so `pyop generate` stays fast.
"""

from pyscaffold_op.apimachinery.fields import (
    EmbeddedResource,
    FreeForm,
    IntOrString,
    ListType,
    MapType,
    Nullable,
    PreserveUnknownFields,
    Quantity,
    XValidation,
)
from pyscaffold_op.apimachinery.resource import (
    Condition,
    CustomResource,
    GroupVersionKind,
    KubeModel,
    ObjectMeta,
    OwnerReference,
    find_condition,
    remove_condition,
    set_condition,
)

__all__ = [
    "Condition",
    "CustomResource",
    "EmbeddedResource",
    "FreeForm",
    "GroupVersionKind",
    "IntOrString",
    "KubeModel",
    "ListType",
    "MapType",
    "Nullable",
    "ObjectMeta",
    "OwnerReference",
    "PreserveUnknownFields",
    "Quantity",
    "XValidation",
    "find_condition",
    "remove_condition",
    "set_condition",
]
