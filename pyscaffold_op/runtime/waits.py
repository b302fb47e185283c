"""Waiting for an asyncio.Event with a deadline: True once it is set, False when `timeout` runs out
(None waits for ever), as client-go's WaitForCacheSync answers with a bool rather than an error."""

from __future__ import annotations

import asyncio


async def event_set_within(event: asyncio.Event, timeout: float | None) -> bool:  # noqa: ASYNC109
    try:
        async with asyncio.timeout(timeout):
            await event.wait()
        return True
    except TimeoutError:
        return False
