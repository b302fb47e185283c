"""The garbage collector's settings for a process that only serves the emulator (`pyop envtest serve`).

The emulator keeps every object as nested dicts and lists, so the cyclic collector's full collections
walk the whole store (and every module, class and function imported at start) each time the heap grows
by a quarter: about 12% of the server's CPU under a burst of 10,000 objects. Stored objects never form
cycles (they are JSON), so after start-up we freeze what exists (moved out of every later collection;
refcounting still frees it) and collect less often: a young collection every 10,000 container
allocations instead of 700, a full one every 100 middle ones. Measured for issue 18: the collector's
share of the emulator's CPU from 0.55-0.67 s to 0.19 s per 10,000-object burst (docs/benchmarks.md).

Only for a process the emulator owns: an `Environment` started in a test process leaves that
process's collector alone.
"""

from __future__ import annotations

import gc

# (young, middle, old): gc.set_threshold's three numbers; CPython's defaults are (700, 10, 10)
SERVING_THRESHOLDS = (10_000, 50, 100)


def tune_for_serving() -> None:
    """Call once the emulator has started (modules imported, CRDs installed)."""
    gc.collect()  # start-up garbage goes now, not into the frozen set
    gc.freeze()
    gc.set_threshold(*SERVING_THRESHOLDS)
