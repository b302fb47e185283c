"""The event loop the emulator serves from when it owns its loop (`pyop envtest serve`, a thread).

uvloop when it is installed (the `envtest` extra brings it where it builds): the emulator's server
(aiohttp's then) cost ~35% less CPU per request on it (measured for issue 18: 63 vs 100 µs of server
CPU per request over loopback, interleaved runs at equal load). An emulator started on the caller's
loop (`async with Environment()`) runs on whatever loop that is.
"""

from __future__ import annotations

import asyncio
import os

# Set to "asyncio" to serve from the standard library's loop even where uvloop is installed.
LOOP_ENV = "PYOP_ENVTEST_LOOP"


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new loop: uvloop's when available and not turned off by PYOP_ENVTEST_LOOP=asyncio."""
    if os.environ.get(LOOP_ENV, "") != "asyncio":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()
