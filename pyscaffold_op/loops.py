"""The event-loop policy shared by the runtime and the emulator: uvloop when it is installed, unless
an environment variable says `asyncio`.

A bottom-layer module (stdlib only, uvloop imported when asked), so the emulator's own loop
(`pyop envtest serve`, `Environment.start_in_thread`: `PYOP_ENVTEST_LOOP`) and the manager's
(`runtime.run`: `PYOP_RUNTIME_LOOP`) follow one rule without the emulator importing the runtime.
Nothing here changes the process-wide loop policy.
"""

from __future__ import annotations

import asyncio
import os


def new_event_loop(env: str) -> asyncio.AbstractEventLoop:
    """uvloop's loop when it is installed and not turned off by `<env>=asyncio`; the standard
    library's otherwise."""
    if os.environ.get(env, "") != "asyncio":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


__all__ = ["new_event_loop"]
