"""The event loop the emulator serves from when it owns its loop (`pyop envtest serve`, a thread).

uvloop when it is installed (the `envtest` extra brings it where it builds): the emulator's server
(aiohttp's then) cost ~35% less CPU per request on it (measured for issue 18: 63 vs 100 µs of server
CPU per request over loopback, interleaved runs at equal load). An emulator started on the caller's
loop (`async with Environment()`) runs on whatever loop that is.
"""

from __future__ import annotations

import asyncio

from pyscaffold_op import loops

# Set to "asyncio" to serve from the standard library's loop even where uvloop is installed.
LOOP_ENV = "PYOP_ENVTEST_LOOP"


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new loop: uvloop's when available and not turned off by PYOP_ENVTEST_LOOP=asyncio."""
    return loops.new_event_loop(LOOP_ENV)
