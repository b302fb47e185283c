"""`Request` and `Result`: what a reconciler receives and returns (controller-runtime's pkg/reconcile)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pyscaffold_op.runtime.controller.diff import Change


class Request(NamedTuple):
    """The key of one object to reconcile. Hashable, so the work queue can dedupe it.

    Cluster-scoped objects have `namespace == ""`. A named tuple: the queue, the rate limiter and
    the controller hash and compare it a dozen times per reconcile, which a tuple does in C.
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


@dataclass(kw_only=True)
class ReconcileContext:
    """What a reconcile that takes a second parameter gets: `async def reconcile(self, request, ctx)`.

    Opt-in, and a help, not a trigger: the reconcile still runs for the object's whole state (events
    coalesce, a restart or resync calls it with nothing changed), so it must not act on `diff()`
    alone; it may use it to skip work or to say in a log or Event what moved."""

    request: Request
    attempt: int
    """Failed (or `requeue=True`) reconciles of this request since its last success: 0 on a first
    try (kopf's `retry`)."""
    reconcile_id: str
    _stored: Any = field(default=None, repr=False)
    _old_stored: Any = field(default=None, repr=False)
    _decode: Callable[[Any], Any] = field(default=lambda stored: stored, repr=False)

    @property
    def object(self) -> Any:
        """The `for_()` object as the cache held it when this reconcile began (a new copy per read);
        None when it is not there (deleted)."""
        return self._decode(self._stored)

    @property
    def old(self) -> Any:
        """The object as this controller's last successful reconcile of it saw it; None for the first
        reconcile of the object since the manager started (kopf keeps it in an annotation across
        restarts; pyop in memory, so after a restart everything counts as new)."""
        return self._decode(self._old_stored)

    def diff(self) -> tuple[Change, ...]:
        """What changed from `old` to `object`, status and server bookkeeping left out (kopf's
        `diff`): `(Change("change", ("spec", "size"), 1, 2), ...)`."""
        from pyscaffold_op.runtime.controller.diff import diff

        if self._old_stored is not None and self._old_stored is self._stored:
            return ()
        return diff(self.old, self.object)

    def changed(self, path: str) -> bool:
        """Whether the field at the dotted wire path (`"spec.size"`) differs from `old`'s."""
        from pyscaffold_op.runtime.controller.diff import parse_path

        want = parse_path(path)
        return any(c.path[: len(want)] == want or want[: len(c.path)] == c.path for c in self.diff())


@runtime_checkable
class Reconciler(Protocol):
    """Anything with `async def reconcile(self, request) -> Result | None`."""

    async def reconcile(self, request: Request) -> Result | None: ...


class TerminalError(Exception):
    """Raise from reconcile to record an error that retrying cannot fix: logged and counted, not requeued."""

    def __init__(self, cause: Any) -> None:
        super().__init__(str(cause))
        self.cause = cause
