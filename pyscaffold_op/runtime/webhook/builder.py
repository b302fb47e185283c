"""`webhook_managed_by(mgr).for_(CronJob).with_defaulter(d).with_validator(v).complete()`
(controller-runtime's `ctrl.NewWebhookManagedBy`): registers the kind's endpoints on the manager's
webhook server at kubebuilder's paths, `/mutate-<group with dashes>-<version>-<kind>`,
`/validate-...`, and `/convert` when a version of the kind is a conversion hub."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyscaffold_op.apimachinery import webhookpaths
from pyscaffold_op.apimachinery.webhookpaths import CONVERT_PATH
from pyscaffold_op.runtime.webhook.admission import (
    Admission,
    Defaulter,
    Validator,
    defaulting_handler,
    validating_handler,
)
from pyscaffold_op.runtime.webhook.conversion import Conversion, Hub

if TYPE_CHECKING:
    from pyscaffold_op.runtime.webhook.server import WebhookServer


def mutate_path(cls: type) -> str:
    gvk = cls.gvk  # type: ignore[attr-defined]
    return webhookpaths.mutate_path(gvk.group, gvk.version, gvk.kind)


def validate_path(cls: type) -> str:
    gvk = cls.gvk  # type: ignore[attr-defined]
    return webhookpaths.validate_path(gvk.group, gvk.version, gvk.kind)


def is_convertible(cls: type) -> bool:
    return issubclass(cls, Hub) or (hasattr(cls, "convert_to") and hasattr(cls, "convert_from"))


def versions_of(cls: type) -> list[type]:
    """Every registered class of the same group and kind (the versions a conversion covers)."""
    from pyscaffold_op.apimachinery import CustomResource

    gvk = cls.gvk  # type: ignore[attr-defined]
    return [c for g, c in CustomResource.registry.items() if (g.group, g.kind) == (gvk.group, gvk.kind)]


class WebhookBuilder:
    def __init__(self, server: WebhookServer) -> None:
        self._server = server
        self._for: type | None = None
        self._defaulter: Defaulter | None = None
        self._validator: Validator | None = None
        self._defaulter_path: str | None = None
        self._validator_path: str | None = None
        self._spokes: list[type] = []

    def for_(self, kind: type) -> WebhookBuilder:
        if self._for is not None:
            raise ValueError("for_() may only be called once")
        if not hasattr(kind, "gvk"):
            raise TypeError(f"{kind!r} is not a kind (it has no gvk)")
        self._for = kind
        return self

    def with_defaulter(self, defaulter: Defaulter) -> WebhookBuilder:
        if not callable(getattr(defaulter, "default", None)):
            raise TypeError(f"{defaulter!r} has no default(obj) method")
        self._defaulter = defaulter
        return self

    def with_validator(self, validator: Validator) -> WebhookBuilder:
        missing = [
            m for m in ("validate_create", "validate_update", "validate_delete") if not hasattr(validator, m)
        ]
        if missing:
            raise TypeError(f"{validator!r} lacks {', '.join(missing)}")
        self._validator = validator
        return self

    def with_spokes(self, *spokes: type) -> WebhookBuilder:
        """The spoke versions `/convert` serves besides the ones already imported (the hub's `for_`)."""
        self._spokes.extend(spokes)
        return self

    def with_defaulter_custom_path(self, path: str) -> WebhookBuilder:
        self._defaulter_path = path
        return self

    def with_validator_custom_path(self, path: str) -> WebhookBuilder:
        self._validator_path = path
        return self

    def complete(self) -> list[str]:
        """Register the endpoints; returns their paths."""
        if self._for is None:
            raise ValueError("call for_(Kind) before complete()")
        cls, paths = self._for, []
        if self._defaulter is not None:
            p = self._defaulter_path or mutate_path(cls)
            self._server.register(p, Admission(defaulting_handler(cls, self._defaulter)))
            paths.append(p)
        if self._validator is not None:
            p = self._validator_path or validate_path(cls)
            self._server.register(p, Admission(validating_handler(cls, self._validator)))
            paths.append(p)
        if is_convertible(cls) or self._spokes:
            kinds = [*versions_of(cls), *self._spokes]
            existing = self._server.endpoint(CONVERT_PATH)
            if isinstance(existing, Conversion):
                for v in kinds:
                    existing.add(v)
            else:
                self._server.register(CONVERT_PATH, Conversion(kinds))
            paths.append(CONVERT_PATH)
        if not paths:
            raise ValueError(
                f"{cls.__name__}: nothing to register; give with_defaulter(), with_validator(), "
                "or make a version of the kind a conversion Hub"
            )
        return paths


def webhook_managed_by(mgr_or_server: Any) -> WebhookBuilder:
    """A builder registering on `mgr.webhook_server` (or directly on a `WebhookServer`)."""
    server = getattr(mgr_or_server, "webhook_server", mgr_or_server)
    return WebhookBuilder(server)
