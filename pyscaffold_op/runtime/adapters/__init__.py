"""Adapters for other model libraries' objects (optional; each behind its own extra).

The runtime's own object model is pyop's typed `KubeObject`s plus the untyped shapes (plain dicts and the
informer's `RawObject`). An object or class of another library reaches the runtime only through an
adapter: `adapter_for` finds it by the library's top-level module, imported on first use, so the
runtime's hot paths never test for foreign shapes and no library is imported unless its objects appear.
"""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pyscaffold_op.runtime.client.restconfig import RestConfig
    from pyscaffold_op.runtime.objects.kinds import ResourceInfo
    from pyscaffold_op.runtime.objects.objmeta import OwnerRef

# a library's top-level module -> the adapter module for its objects
ADAPTERS = {"lightkube": "pyscaffold_op.runtime.adapters.lightkube"}


class ModelAdapter(Protocol):
    """What the runtime asks of another library's kinds, objects and configurations."""

    def info_for(self, cls: type) -> ResourceInfo: ...
    def get_field(self, obj: Any, snake: str) -> Any: ...
    def set_field(self, obj: Any, snake: str, value: Any) -> None: ...
    def owner_references(self, obj: Any) -> list[OwnerRef]: ...
    def set_owner_references(self, obj: Any, refs: list[OwnerRef]) -> None: ...
    def replace_contents(self, target: Any, source: Any) -> None: ...
    def rest_config(self, config: Any) -> RestConfig: ...


class NotAdapted(TypeError):
    """An object or class that is neither pyop's nor of a library with an adapter."""


@functools.cache
def _adapter_of_class(cls: type) -> ModelAdapter | None:
    for base in cls.__mro__:
        module = ADAPTERS.get(base.__module__.partition(".")[0])
        if module is not None:
            adapter: ModelAdapter = importlib.import_module(module).ADAPTER
            return adapter
    return None


def adapter_for(obj_or_cls: Any, what: str = "") -> ModelAdapter:
    """The adapter for `obj_or_cls`'s library; NotAdapted naming `what` was expected when none."""
    cls = obj_or_cls if isinstance(obj_or_cls, type) else type(obj_or_cls)
    adapter = _adapter_of_class(cls)
    if adapter is None:
        raise NotAdapted(
            f"{cls!r} is not {what or 'an object the runtime handles'}: use a CustomResource subclass, "
            "a built-in model of pyscaffold_op.models (core_v1.Pod, apps_v1.Deployment, ...) or, for an "
            "object, a dict with the apiVersion and kind of one of those"
        )
    return adapter
