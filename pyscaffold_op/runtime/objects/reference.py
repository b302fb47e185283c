"""`object_reference(obj)`: an `ObjectReference` to an object, as client-go's `ref.GetReference` makes one.

A CronJob's `status.active`, an Event's `involvedObject` and many status fields point at other
objects this way: apiVersion and kind (from the kind's class for typed objects, so a freshly read
object, whose body the server sends without them, still gets them), name, namespace, uid and
resourceVersion.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyscaffold_op.runtime.objects import objmeta
from pyscaffold_op.runtime.objects.kinds import info_of

if TYPE_CHECKING:
    from pyscaffold_op.models.core_v1 import ObjectReference

__all__ = ["object_reference"]


def object_reference(obj: Any) -> ObjectReference:
    """An `ObjectReference` to `obj` (a `KubeObject`, a dict as the server sends it, or an adapted
    object); fields the object has no value for (a uid before it was created) are left unset."""
    from pyscaffold_op.models.core_v1 import ObjectReference

    if isinstance(obj, dict):
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not (api_version and kind):  # client-go asks the scheme; a dict has nothing else to go by
            raise ValueError("object_reference: the object has no apiVersion and kind")
    else:
        info = info_of(obj)
        api_version, kind = info.api_version, info.kind
    return ObjectReference(
        api_version=api_version,
        kind=kind,
        name=objmeta.name(obj) or None,
        namespace=objmeta.namespace(obj) or None,
        uid=objmeta.uid(obj) or None,
        resource_version=objmeta.resource_version(obj) or None,
    )
