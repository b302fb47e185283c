"""The admission gate every write passes (`WriteVerbs` holds one, `Api` builds it): the mutating
webhooks, a dry-run write, the validating webhooks, then the write; and conversion between the served
versions of a CRD by its conversion webhook (for the webhooks' objects and `Api._via_storage`)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pyscaffold_op.envtest.admission.webhooks import VALIDATING, Admission, Attributes, warning_header
from pyscaffold_op.envtest.registry.resources import ServedResource
from pyscaffold_op.envtest.server import wire
from pyscaffold_op.envtest.server.auth import ADMIN_USER, MASTERS, Policy
from pyscaffold_op.envtest.server.protocol import HttpRequest, Response, Target

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Store


class AdmissionGate:
    """`admitted(...)` runs a write through the admission webhooks; `warn(...)` adds their warnings."""

    def __init__(self, store: Store, policy: Policy) -> None:
        self.policy = policy
        self.admission = Admission(store)

    def user(self, req: HttpRequest) -> dict[str, Any]:
        auth = req.headers.get("authorization", "")
        user = self.policy.authenticate(auth[7:]) if auth.lower().startswith("bearer ") else None
        if user is None:
            return {"username": ADMIN_USER, "groups": [MASTERS, "system:authenticated"]}
        return {"username": user.username, "groups": [*user.groups, "system:authenticated"]}

    async def convert(self, obj: dict[str, Any], to: ServedResource) -> dict[str, Any]:
        """An object of one served version of a resource in another: by the CRD's conversion webhook,
        else (strategy None) only the apiVersion changes."""
        if obj.get("apiVersion") == to.api_version:
            return obj
        if to.conversion_webhook is not None:
            from pyscaffold_op.envtest.admission import conversionwebhook

            services = self.admission.services
            return await conversionwebhook.convert(services, to.conversion_webhook, obj, to.api_version)
        return {**obj, "apiVersion": to.api_version}

    async def admitted(
        self,
        req: HttpRequest,
        t: Target,
        operation: str,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
        write: Callable[[Any, bool], Any],
        *,
        dry_run: bool | None = None,
    ) -> tuple[Any, list[str]]:
        """Run `write(obj, dry_run)` through the admission webhooks: mutating ones on the decoded
        object, then `write` as a dry run (defaulting and schema validation), the validating ones on
        its result, then the real `write`. Returns what `write` returned and the webhooks' warnings.
        `dry_run`: the request's, when its DeleteOptions body asks (the query is read otherwise)."""
        if dry_run is None:
            dry_run = wire.dry_run(req)
        if not self.admission.active() or (operation != "CREATE" and old is None):
            return write(obj, dry_run), []  # nothing to call, or the write fails on its own (404)
        info = t.info
        if obj is not None and info.custom:  # custom resources are pruned and defaulted on decode
            obj = copy.deepcopy(obj)
            info.compiled_schema.prune(obj)
            info.compiled_schema.apply_defaults(obj)
        name = t.name or ((obj or {}).get("metadata") or {}).get("name") or ""
        namespace = (t.namespace or "") if info.namespaced else ""
        a = Attributes(operation, info, namespace, name, obj, old, t.subresource, dry_run, self.user(req))
        mutated, warnings = await self.admission.mutate(a, self.convert)
        if self.admission.matching(VALIDATING, a):
            if operation != "DELETE":
                a.obj = wire.served(info, write(copy.deepcopy(mutated), True))
            warnings += await self.admission.validate(a, self.convert)
        return write(mutated, dry_run), warnings

    @staticmethod
    def warn(resp: Response, *warnings: str) -> Response:
        """Add Warning headers: preformatted ones (`299 - ...`) and plain webhook warnings."""
        values = [w if w.startswith("299 ") else warning_header([w]) for w in warnings if w]
        if values:
            resp.headers["Warning"] = ", ".join(values)
        return resp
