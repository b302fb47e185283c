"""Moving a live cluster: a real kopf operator (kopf from PyPI, in a child process) handles objects and
leaves its marks on them; it stops; a deletion then hangs on kopf's finalizer; pyop's takeover
controller (takeover.py) reconciles the objects and removes the marks, and deletion works again."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
import takeover
from kopfexample import KopfExample, kopf_example

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Client, KopfMarks, NotFound
from pyscaffold_op.runtime.controller.fromkopf import KOPF_FINALIZER
from pyscaffold_op.testing import eventually

pytest.importorskip("kopf", reason="kopf is not installed: pip install -e '.[test]'")
pytestmark = pytest.mark.slow

KOPF_OPERATOR = """
import kopf

@kopf.on.create("kopf.dev", "v1", "kopfexamples")
def create_fn(spec, **_):
    if spec.get("field") == "fail":
        raise kopf.TemporaryError("not yet", delay=600)  # leaves its progress annotation behind

@kopf.on.update("kopf.dev", "v1", "kopfexamples")
def update_fn(**_):
    pass

@kopf.on.delete("kopf.dev", "v1", "kopfexamples")  # a deletion handler: kopf puts its finalizer on
def delete_fn(**_):
    pass
"""
LAST_HANDLED = "kopf.zalando.org/last-handled-configuration"


async def _raw(client: Client, name: str) -> dict[str, Any]:
    """The object as the server sends it: kopf's status keys and annotations included (the typed
    KopfExample has no `status.create_fn`)."""
    data = await client.transport.request("GET", f"/apis/kopf.dev/v1/namespaces/default/kopfexamples/{name}")
    result: dict[str, Any] = json.loads(data)
    return result


async def test_a_kopf_operators_objects_are_taken_over(
    envtest: Environment, client: Client, running: Any, tmp_path: Path
) -> None:
    for name, field in (("kex-ok", "value"), ("kex-fail", "fail"), ("kex-stuck", "value")):
        await client.create(kopf_example(name, field=field))
    script = tmp_path / "kopf_operator.py"
    script.write_text(KOPF_OPERATOR)
    kopf = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kopf", "run", "--standalone", "--namespace=default", str(script),
        env={**os.environ, "KUBECONFIG": str(envtest.kubeconfig_path)},
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:

        async def kopf_handled() -> bool:
            ok, failing, stuck = [await _raw(client, n) for n in ("kex-ok", "kex-fail", "kex-stuck")]
            return (
                all(KOPF_FINALIZER in o["metadata"].get("finalizers", []) for o in (ok, failing, stuck))
                and LAST_HANDLED in ok["metadata"].get("annotations", {})
                and "kopf.zalando.org/create_fn" in failing["metadata"].get("annotations", {})
            )

        await eventually(kopf_handled, timeout=60)
    finally:
        kopf.send_signal(signal.SIGTERM)
        _out, err = await asyncio.wait_for(kopf.communicate(), 60)
    assert kopf.returncode == 0, err.decode()[-2000:]

    # kopf is gone: a deletion now waits for ever on its finalizer
    await client.delete(KopfExample, "kex-stuck", namespace="default")
    await asyncio.sleep(1.0)
    stuck = await _raw(client, "kex-stuck")
    assert stuck["metadata"].get("deletionTimestamp") and KOPF_FINALIZER in stuck["metadata"]["finalizers"]

    async with running(takeover.setup):

        async def released(name: str) -> dict[str, Any] | None:
            obj = await _raw(client, name)
            return None if KopfMarks().on(obj) else obj

        ok = await eventually(lambda: released("kex-ok"), timeout=20)
        failing = await eventually(lambda: released("kex-fail"), timeout=20)
        for obj in (ok, failing):
            assert not any(k.startswith("kopf.zalando.org/") for k in obj["metadata"].get("annotations", {}))
            assert KOPF_FINALIZER not in obj["metadata"].get("finalizers", [])
            assert obj["status"]["children"]  # adopted: pyop's reconcile ran first
            assert obj["metadata"]["annotations"] == {"someannotation": "somevalue"}  # the user's stay

        async def gone(name: str) -> bool:
            try:
                await _raw(client, name)
            except NotFound:
                return True
            return False

        await eventually(lambda: gone("kex-stuck"), timeout=20)  # its deletion completed
        await client.delete(KopfExample, "kex-ok", namespace="default")
        await eventually(lambda: gone("kex-ok"), timeout=20)
