"""Small helpers for asynchronous tests of controllers."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pyscaffold_op.runtime.clock import FakeClock

T = TypeVar("T")

__all__ = ["FakeClock", "eventually"]

_NOTHING = object()


async def eventually(
    check: Callable[[], T | Awaitable[T]],
    *,
    timeout: float = 5.0,  # noqa: ASYNC109 - a polling deadline, not a cancellation scope
    interval: float = 0.02,
) -> T:
    """Call `check()` (a plain function, a coroutine function, or a lambda returning an awaitable)
    until it returns a truthy value, and return that value.

    An exception from `check` (an AssertionError, a NotFound, ...) counts as "not yet" and is retried.
    After `timeout` seconds it fails with an AssertionError that names the check and shows the last
    value it returned, or the last error with its type (chained as the cause), so a failing test says
    what it waited for.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last_value: object = _NOTHING
    last_error: Exception | None = None
    while True:
        try:
            result = check()
            value = await result if inspect.isawaitable(result) else result
        except Exception as err:  # cancellation and KeyboardInterrupt are BaseException: they propagate
            last_error = err
        else:
            if value:
                return value  # type: ignore[return-value]
            last_value, last_error = value, None
        if loop.time() >= deadline:
            raise _failure(check, timeout, last_value, last_error)
        await asyncio.sleep(interval)


def _failure(check: object, timeout: float, value: object, error: Exception | None) -> AssertionError:
    name = getattr(check, "__qualname__", None) or repr(check)
    name = name.rpartition("<locals>.")[2]  # `fetch`, not `test_x.<locals>.fetch`
    detail = f"last error {type(error).__name__}: {error}" if error is not None else f"last value {value!r}"
    failure = AssertionError(f"{name} not true after {timeout}s: {detail}")
    failure.__cause__ = error
    return failure
