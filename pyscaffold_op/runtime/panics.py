"""Recovering from what user code raises (controller-runtime's `RecoverPanic`, default true).

A Go panic in a reconciler or a webhook is recovered, logged, counted and turned into an error. The
Python counterparts of a panic are the exceptions no handler expects: `SystemExit`, `KeyboardInterrupt`,
a `CancelledError` that user code raised itself (not the cancellation of its own task at shutdown),
and exceptions whose `__str__` raises. These helpers tell them apart and describe them safely."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Callable, Iterator


def safe_str(err: BaseException) -> str:
    """`str(err)`, never raising: a broken `__str__` gives `<TypeName: str() failed>`."""
    try:
        text = str(err)
    except Exception:
        return f"<{_type_name(err)}: str() failed>"
    return text if isinstance(text, str) else f"<{_type_name(err)}: str() failed>"


def describe(err: BaseException) -> str:
    """The error's message, or its type's name when the message is empty."""
    return safe_str(err) or _type_name(err)


def panic_message(err: BaseException) -> str:
    """`panic: <type>: <message> [recovered]`, as controller-runtime wraps a recovered panic."""
    text = safe_str(err)
    return f"panic: {_type_name(err)}{': ' + text if text else ''} [recovered]"


def own_cancellation() -> bool:
    """True when the running task has been asked to cancel (shutdown, a timeout): a CancelledError
    then is its own and must propagate. False when code raised CancelledError on its own."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _type_name(err: BaseException) -> str:
    try:
        return type(err).__name__
    except Exception:  # pragma: no cover - a metaclass that breaks __name__
        return "BaseException"


# The webhook server counts panics its endpoints recover (controller_runtime_webhook_panics_total):
# it sets this hook around each request; `Admission` calls `report_panic()` when it recovers one.
_panic_hook: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "pyop_panic_hook", default=None
)


def report_panic() -> None:
    """Count a recovered panic with whoever serves the current request (no-op outside a server)."""
    hook = _panic_hook.get()
    if hook is not None:
        hook()


@contextlib.contextmanager
def panic_hook(hook: Callable[[], None] | None) -> Iterator[None]:
    token = _panic_hook.set(hook)
    try:
        yield
    finally:
        _panic_hook.reset(token)
