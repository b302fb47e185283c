"""A plain `def` webhook handler that never returns must not hold the process at exit (issue 27): sync
defaulters and validators run on daemon threads, which the interpreter abandons at exit, where the
loop's default executor's threads are joined by `asyncio.run` and by the interpreter."""

from __future__ import annotations

import subprocess
import sys
import textwrap

APP = textwrap.dedent(
    """
    import asyncio, threading
    from pyscaffold_op.runtime.webhook.admission import Admission, validating_handler
    from tests.runtime.widgets import Widget

    entered = threading.Event()

    class Hangs:
        def validate_create(self, obj):
            entered.set()
            threading.Event().wait()  # never returns

        def validate_update(self, old, new): ...
        def validate_delete(self, obj): ...

    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u1",
            "kind": {"group": "test.pyop.io", "version": "v1", "kind": "Widget"},
            "resource": {"group": "test.pyop.io", "version": "v1", "resource": "widgets"},
            "operation": "CREATE",
            "object": {"apiVersion": "test.pyop.io/v1", "kind": "Widget", "metadata": {"name": "w"}},
        },
    }

    async def main():
        call = asyncio.ensure_future(Admission(validating_handler(Widget, Hangs()))(review))
        while not entered.is_set():
            await asyncio.sleep(0.01)
        call.cancel()  # the request gives up (a client timeout); the handler's thread hangs on
        print("handler entered; leaving", flush=True)

    asyncio.run(main())
    """
)


def test_a_sync_handler_that_never_returns_does_not_hold_the_process_at_exit() -> None:
    # the timeout only bounds a failure: a held process never exits (the old executor hung here)
    done = subprocess.run([sys.executable, "-c", APP], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "handler entered; leaving\n"


async def test_the_pool_hands_back_results_errors_and_context_and_bounds_its_threads() -> None:
    import asyncio
    import contextvars
    import threading

    from pyscaffold_op.runtime.webhook.daemonthreads import DaemonThreadPool, run_in_daemon_thread

    request_id = contextvars.ContextVar("request_id", default="")
    request_id.set("r1")

    def where() -> tuple[str, bool]:
        return request_id.get(), threading.current_thread().daemon

    assert await run_in_daemon_thread(where) == ("r1", True)

    def fails() -> None:
        raise KeyError("x")

    try:
        await run_in_daemon_thread(fails)
    except KeyError as err:
        assert err.args == ("x",)
    else:
        raise AssertionError("the handler's error was lost")

    pool = DaemonThreadPool(max_workers=2, name="t")
    release = threading.Event()
    blocked = [pool.submit(lambda: release.wait(30)) for _ in range(3)]
    names = {t.name for t in threading.enumerate() if t.name.startswith("t-")}
    assert names == {"t-1", "t-2"}  # the third waits for a free thread
    release.set()
    assert [await asyncio.wrap_future(f) for f in blocked] == [True, True, True]
