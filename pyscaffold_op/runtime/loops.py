"""The event loop a manager runs on: `run(mgr.start())` is `asyncio.run` on uvloop when it is installed.

uvloop (`pip install 'pyscaffold-op[uvloop]'`; a generated project opts in through its pyproject: it
adds 14 MB to the image) costs the runtime's client 2-17% less CPU per request than the standard
library's loop (issue 18, `benchmarks/bench_client_loop.py`). `asyncio.run(mgr.start())` keeps
working on the standard loop; nothing here changes the process-wide loop policy, so tests and code
that create their own loops are unaffected. Set `PYOP_RUNTIME_LOOP=asyncio` to run on the standard
loop even where uvloop is installed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from pyscaffold_op import loops

T = TypeVar("T")

LOOP_ENV = "PYOP_RUNTIME_LOOP"


def new_event_loop(env: str = LOOP_ENV) -> asyncio.AbstractEventLoop:
    """uvloop's loop when it is installed and not turned off by `<env>=asyncio` (PYOP_RUNTIME_LOOP;
    the emulator asks with its own PYOP_ENVTEST_LOOP): the package's one rule, `pyscaffold_op.loops`."""
    return loops.new_event_loop(env)


def run(main: Coroutine[Any, Any, T], *, debug: bool | None = None) -> T:
    """`asyncio.run(main)` on `new_event_loop()`: `run(mgr.start())`."""
    with asyncio.Runner(debug=debug, loop_factory=new_event_loop) as runner:
        return runner.run(main)
