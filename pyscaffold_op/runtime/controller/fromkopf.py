"""Taking objects over from a kopf operator: remove what kopf left on them (docs/coming-from-kopf.md,
"Moving a live cluster").

An object a kopf operator handled carries kopf's finalizer (`kopf.zalando.org/KopfFinalizerMarker`,
whenever the operator had an `@kopf.on.delete` handler or a daemon), its last-handled configuration
(`kopf.zalando.org/last-handled-configuration`), per-handler progress annotations
(`kopf.zalando.org/<handler id>`, left behind by a handler that was still retrying) and, from kopf
releases before 1.0 or with `StatusProgressStorage`, `status.kopf`. With kopf stopped, nobody removes
the finalizer: deleting such an object hangs. `release_from_kopf` removes all of it in one patch
(guarded by the object's resourceVersion, so it never undoes a newer write); `builder
.taking_over_from_kopf()` does so after each successful reconcile of an object that still has them,
so objects move over as the new controller adopts them. The values kopf's handlers returned
(`status.<handler id>`, such as `status.create_fn`) are the operator's own data and are kept.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from pyscaffold_op.runtime.client.errors import NotFound
from pyscaffold_op.runtime.controller.diff import wire

KOPF_FINALIZER = "kopf.zalando.org/KopfFinalizerMarker"
KOPF_PREFIX = "kopf.zalando.org/"


@dataclass(frozen=True)
class KopfMarks:
    """Where kopf keeps its state; the defaults are kopf's (`settings.persistence`): change them when
    the kopf operator set its own finalizer or storage prefix."""

    finalizer: str = KOPF_FINALIZER
    annotation_prefix: str = KOPF_PREFIX
    status_field: str | None = "kopf"

    def found(self, obj: Any) -> dict[str, Any]:
        """What kopf left on `obj` (typed, a dict, or the cache's JSON) as the merge patch removing it
        (guarded by the object's resourceVersion); empty when there is nothing."""
        data = wire(obj)
        raw_meta = data.get("metadata")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        status = data.get("status")
        patch: dict[str, Any] = {}
        finalizers = meta.get("finalizers") or []
        if self.finalizer in finalizers:
            kept = [f for f in finalizers if f != self.finalizer]
            patch.setdefault("metadata", {})["finalizers"] = kept or None
        gone = sorted(k for k in meta.get("annotations") or {} if k.startswith(self.annotation_prefix))
        if gone:
            patch.setdefault("metadata", {})["annotations"] = dict.fromkeys(gone)
        if self.status_field and isinstance(status, dict) and self.status_field in status:
            patch["status"] = {self.status_field: None}
        if patch:
            patch.setdefault("metadata", {})["resourceVersion"] = meta.get("resourceVersion")
        return patch

    def on(self, obj: Any) -> bool:
        """Whether kopf left anything on `obj`."""
        return bool(self.found(obj))


DEFAULT_MARKS = KopfMarks()


async def release_from_kopf(
    client: Any, obj: Any, *, kind: type | None = None, marks: KopfMarks = DEFAULT_MARKS
) -> bool:
    """Remove kopf's finalizer, annotations and `status.kopf` from `obj`; True when there was any.

    `obj` is the object as read (typed, or a dict or the cache's JSON with `kind=` its class); the
    write is a merge patch guarded by its resourceVersion, so a Conflict (someone wrote since) raises
    and the reconcile retries on the newer object. A typed object hides `status.kopf` unless its
    model keeps unknown status fields: `taking_over_from_kopf()` reads the cache's JSON and sees it."""
    patch = marks.found(obj)
    if not patch:
        return False
    meta = wire(obj).get("metadata") or {}
    cls = kind or type(obj)
    name, namespace = meta.get("name", ""), meta.get("namespace") or None
    await client.patch(cls, name, patch, namespace=namespace)
    if "status" in patch:  # with the status subresource the main patch leaves status alone
        # NotFound: no status subresource (the main patch cleared it), or the object is gone
        with contextlib.suppress(NotFound):
            await client.status().patch(cls, name, {"status": patch["status"]}, namespace=namespace)
    return True
