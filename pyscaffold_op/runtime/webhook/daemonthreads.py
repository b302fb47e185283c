"""Where plain `def` defaulters and validators run: a bounded pool of daemon threads.

Why not `asyncio.to_thread` (the loop's default executor): its worker threads are not daemons, and
both `asyncio.run` (`shutdown_default_executor`) and the interpreter's exit join them, so one handler
that never returns held the whole process at exit. A daemon thread is abandoned at exit instead, as a
Go webhook's goroutine is when its process ends. The pool has the default executor's bound
(min(32, cores + 4)) and reuses idle threads, so a burst of requests does not start a thread each.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import os
import queue
import threading
from collections.abc import Callable
from typing import Any

_Work = tuple[concurrent.futures.Future[Any], Callable[[], Any]]


class DaemonThreadPool:
    """`submit(fn)` runs `fn()` on one of at most `max_workers` daemon threads."""

    def __init__(self, max_workers: int, name: str = "pyop-webhook") -> None:
        self.max_workers, self.name = max_workers, name
        self._work: queue.SimpleQueue[_Work] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)  # one count per thread waiting for work
        self._lock = threading.Lock()
        self._threads = 0

    def submit(self, fn: Callable[[], Any]) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._work.put((future, fn))
        if not self._idle.acquire(blocking=False):  # no idle thread took the count: maybe start one
            with self._lock:
                if self._threads < self.max_workers:
                    self._threads += 1
                    name = f"{self.name}-{self._threads}"
                    threading.Thread(target=self._worker, name=name, daemon=True).start()
        return future

    def _worker(self) -> None:
        while True:
            future, fn = self._work.get()
            if future.set_running_or_notify_cancel():
                try:
                    result = fn()
                except BaseException as err:  # handed to the awaiting request, as an executor does
                    future.set_exception(err)
                else:
                    future.set_result(result)
                del future, fn  # drop the request's objects while idle
            self._idle.release()


@functools.cache
def shared_pool() -> DaemonThreadPool:
    return DaemonThreadPool(min(32, (os.cpu_count() or 1) + 4))


async def run_in_daemon_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """`await asyncio.to_thread(fn, *args)`, on a daemon thread (context variables included)."""
    ctx = contextvars.copy_context()
    return await asyncio.wrap_future(shared_pool().submit(functools.partial(ctx.run, fn, *args)))
