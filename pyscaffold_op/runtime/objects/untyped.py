"""Where a plain dict object lives in the API: found from its apiVersion and kind.

A dict carries no class to read the plural and scope from, so the client looks its kind up among the
kinds the runtime knows (no discovery round trip): the CustomResource subclasses imported so far
(`CustomResource.registry`) and the built-in models of `pyscaffold_op.models`. Its answers stay dicts:
a dict the client fills is filled with the server's JSON, not turned into a model.
"""

from __future__ import annotations

import copy
import importlib
from dataclasses import dataclass
from typing import Any

import msgspec

from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeObject
from pyscaffold_op.runtime.objects.kinds import ResourceInfo, info_for


@dataclass(frozen=True, eq=False)
class DictInfo(ResourceInfo):
    """A known kind's address, for objects that are plain dicts."""

    def decode(self, data: bytes | msgspec.Raw) -> Any:
        return msgspec.json.decode(bytes(data))

    def copy(self, obj: Any) -> Any:
        return copy.deepcopy(obj)


def dict_info(obj: dict[str, Any]) -> DictInfo:
    """The DictInfo of a dict object; TypeError naming what is missing or unknown."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
        raise TypeError("a dict object needs its apiVersion and kind (e.g. 'v1' and 'ConfigMap')")
    group, _, version = api_version.rpartition("/")
    cls = _known_kind(GroupVersionKind(group, version, kind))
    if cls is None:
        raise TypeError(
            f"{api_version} {kind} is not a kind the runtime knows: import its CustomResource subclass "
            "first, or use a built-in kind of pyscaffold_op.models"
        )
    info = info_for(cls)
    return DictInfo(dict, info.group, info.version, info.kind, info.plural, info.namespaced)


def _known_kind(gvk: GroupVersionKind) -> type[KubeObject] | None:
    custom = CustomResource.registry.get(gvk)
    if custom is not None:
        return custom
    module = f"pyscaffold_op.models.{gvk.group.split('.')[0] or 'core'}_{gvk.version}"
    try:
        models = importlib.import_module(module)
    except ImportError:
        return None
    cls = getattr(models, gvk.kind, None)
    known = isinstance(cls, type) and issubclass(cls, KubeObject) and getattr(cls, "gvk", None) == gvk
    return cls if known else None
