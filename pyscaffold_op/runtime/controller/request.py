"""`Request` and `Result`: what a reconciler receives and returns (controller-runtime's pkg/reconcile)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class Request:
    """The key of one object to reconcile. Hashable, so the work queue can dedupe it.

    Cluster-scoped objects have `namespace == ""`.
    """

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(slots=True)
class Result:
    """What to do after a reconcile that raised no exception.

    `requeue_after` wins over `requeue`: the request is forgotten by the rate limiter and added again
    after that delay. `requeue=True` alone re-adds it with the rate limiter's backoff.
    """

    requeue: bool = False
    requeue_after: float | timedelta | None = None

    @property
    def requeue_after_seconds(self) -> float:
        value = self.requeue_after
        if value is None:
            return 0.0
        if isinstance(value, timedelta):
            return value.total_seconds()
        return float(value)

    def is_zero(self) -> bool:
        return not self.requeue and self.requeue_after_seconds <= 0


@runtime_checkable
class Reconciler(Protocol):
    """Anything with `async def reconcile(self, request) -> Result | None`."""

    async def reconcile(self, request: Request) -> Result | None: ...


class TerminalError(Exception):
    """Raise from reconcile to record an error that retrying cannot fix: logged and counted, not requeued."""

    def __init__(self, cause: Any) -> None:
        super().__init__(str(cause))
        self.cause = cause
