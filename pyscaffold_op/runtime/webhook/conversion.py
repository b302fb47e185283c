"""ConversionReview v1 (pkg/webhook/conversion): hub and spokes.

One version of a kind is the hub (it subclasses `Hub`, usually the storage version); every other
version (a spoke) converts to and from it:

    class CronJob(CustomResource, Hub): ...                     # api/v1
    class CronJob(CustomResource):                              # api/v2
        def convert_to(self) -> v1.CronJob: ...
        @classmethod
        def convert_from(cls, hub: v1.CronJob) -> CronJob: ...

Spoke to spoke goes through the hub, so n versions need n-1 pairs of functions, not n²."""

from __future__ import annotations

import logging
from typing import Any

from pyscaffold_op.runtime.panics import safe_str

log = logging.getLogger("pyscaffold_op.runtime.webhook")

CONVERSION_API_VERSION = "apiextensions.k8s.io/v1"


class Hub:
    """Mixin marking the hub version of a kind."""


class Conversion:
    """The `/convert` endpoint for the given kinds (every version of each kind, hub included)."""

    def __init__(self, kinds: list[type] | None = None) -> None:
        self._by_gvk: dict[tuple[str, str], type] = {}
        for cls in kinds or []:
            self.add(cls)

    def add(self, cls: type) -> None:
        gvk = cls.gvk  # type: ignore[attr-defined]
        self._by_gvk[(gvk.api_version, gvk.kind)] = cls

    def kinds(self) -> list[type]:
        return list(self._by_gvk.values())

    def _hub_of(self, group: str, kind: str) -> type:
        hubs = [
            c
            for (av, k), c in self._by_gvk.items()
            if k == kind and av.split("/")[0] == group and issubclass(c, Hub)
        ]
        if len(hubs) != 1:
            found = "no hub" if not hubs else f"{len(hubs)} hubs"
            raise ValueError(f"{kind}.{group}: {found}; exactly one version must subclass Hub")
        return hubs[0]

    def convert(self, obj: dict[str, Any], desired: str) -> dict[str, Any]:
        src_av, kind = obj.get("apiVersion", ""), obj.get("kind", "")
        if src_av == desired:
            return obj
        src = self._by_gvk.get((src_av, kind))
        dst = self._by_gvk.get((desired, kind))
        if src is None or dst is None:
            missing = src_av if src is None else desired
            raise ValueError(f"no type registered for {kind} in {missing}")
        group = desired.split("/")[0] if "/" in desired else ""
        hub = self._hub_of(group, kind)
        typed = src.model_validate(obj)  # type: ignore[attr-defined]
        as_hub = typed if src is hub else typed.convert_to()
        if not isinstance(as_hub, hub):
            raise TypeError(f"{src.__name__}.convert_to() returned {type(as_hub).__name__}, not the hub")
        out = as_hub if dst is hub else dst.convert_from(as_hub)  # type: ignore[attr-defined]
        converted: dict[str, Any] = out.to_dict()  # type: ignore[union-attr]  # dst is a pydantic model class
        converted["apiVersion"], converted["kind"] = desired, kind
        return converted

    async def __call__(self, body: Any) -> dict[str, Any]:
        req = body.get("request") if isinstance(body, dict) else None
        raw_uid = req.get("uid", "") if isinstance(req, dict) else ""
        uid = raw_uid if isinstance(raw_uid, str) else ""
        try:
            if not isinstance(req, dict) or body.get("kind") != "ConversionReview":
                raise ValueError("the request body is not a ConversionReview")
            if uid is not raw_uid:
                raise ValueError("ConversionReview.request.uid must be a string")
            desired = req.get("desiredAPIVersion") or ""
            converted = [self.convert(o, desired) for o in req.get("objects") or []]
            result: dict[str, Any] = {"status": "Success"}
            response: dict[str, Any] = {"uid": uid, "convertedObjects": converted, "result": result}
        except Exception as err:
            log.warning("conversion failed: %s", safe_str(err))
            response = {
                "uid": uid,
                "convertedObjects": [],
                "result": {"status": "Failure", "message": safe_str(err)},
            }
        return {"apiVersion": CONVERSION_API_VERSION, "kind": "ConversionReview", "response": response}
