"""Small helpers for asynchronous tests of controllers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def eventually(
    check: Callable[[], Awaitable[T]],
    *,
    timeout: float = 5.0,  # noqa: ASYNC109 - a polling deadline, not a cancellation scope
    interval: float = 0.02,
) -> T:
    """Await `check()` until it returns a truthy value without raising AssertionError.

    Returns that value; after `timeout` seconds re-raises the last AssertionError (or fails with one
    saying what the last value was), so a failing test names what it waited for.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = await check()
            if value:
                return value
            failure: AssertionError = AssertionError(f"condition still false after {timeout}s: {value!r}")
        except AssertionError as err:
            failure = err
        if time.monotonic() >= deadline:
            raise failure
        await asyncio.sleep(interval)
