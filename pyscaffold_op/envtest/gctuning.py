"""The cyclic garbage collector while an emulator serves: its youngest generation is collected every
20,000 net container allocations instead of CPython's 700.

The store holds every object as a tree of dicts and lists (acyclic JSON), and each write allocates a
few hundred containers, so with the default threshold the collector ran after every other request and
walked the new objects again and again: ~40 µs of server CPU per object written in the side-by-side
benchmark (8% of the emulator's thread at 10,000 objects; 16 collections instead of 470 with this).
Cycles are still collected, only less often. The setting is the process's (Python has no other), so
it is raised when the first emulator of the process starts and put back when the last one stops.

A process that does nothing but serve the emulator (`pyop envtest serve`, the benchmarks' server) goes
further with `own_process()`: what start-up left (modules, classes, functions, installed CRDs) is frozen
out of every later collection, and the older generations are collected less often, because full
collections walked the whole store each time the heap grew by a quarter (issue 18: the collector's share
of a 10,000-object burst 0.55-0.67 s -> 0.17 s with both).
"""

from __future__ import annotations

import gc
import threading

__all__ = [
    "OWN_PROCESS_THRESHOLDS",
    "SERVING_THRESHOLD",
    "own_process",
    "serving",
    "serving_count",
    "stopped",
]

SERVING_THRESHOLD = 20_000
# gc.set_threshold's (young, middle, old) for a process that only serves: CPython's are (700, 10, 10)
OWN_PROCESS_THRESHOLDS = (SERVING_THRESHOLD, 50, 100)

_lock = threading.Lock()
_serving = 0
_saved: tuple[int, ...] | None = None


def serving() -> None:
    """An emulator starts: raise the youngest generation's threshold (never lower it)."""
    global _serving, _saved
    with _lock:
        _serving += 1
        if _serving == 1:
            _saved = gc.get_threshold()
            if _saved[0] and _saved[0] < SERVING_THRESHOLD:  # 0: the host disabled automatic collection
                gc.set_threshold(SERVING_THRESHOLD, *_saved[1:])


def serving_count() -> int:
    """How many emulators of this process serve."""
    return _serving


def stopped() -> None:
    """An emulator stops: the last one puts the host's thresholds back."""
    global _serving, _saved
    with _lock:
        if _serving == 0:
            return
        _serving -= 1
        if _serving == 0 and _saved is not None:
            if gc.get_threshold()[0] == SERVING_THRESHOLD:  # unless the host changed it meanwhile
                gc.set_threshold(*_saved)
            _saved = None


def own_process() -> None:
    """For a process that only serves the emulator, once it serves: freeze start-up's objects and
    collect the older generations less often. Cycles made later are still collected."""
    gc.collect()  # start-up garbage goes now, not into the frozen set
    gc.freeze()
    gc.set_threshold(*OWN_PROCESS_THRESHOLDS)
