"""The collector's threshold while emulators serve: raised by the first, restored by the last, and a
host's own choice (automatic collection off, or a threshold changed meanwhile) left alone."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyscaffold_op.envtest import Environment, gctuning


@pytest.fixture(autouse=True)
def host_thresholds() -> Iterator[tuple[int, ...]]:
    assert gctuning.serving_count() == 0  # no other emulator of this process serves now
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield gc.get_threshold()
    gc.set_threshold(*saved)


async def test_raised_while_serving_and_restored_by_the_last_to_stop() -> None:
    async with Environment() as first:
        assert gc.get_threshold() == (gctuning.SERVING_THRESHOLD, 10, 10)
        second = await Environment().start()
        await first.astop()  # the `async with` stops it again below: counted once
        assert gc.get_threshold()[0] == gctuning.SERVING_THRESHOLD  # `second` still serves
        await second.astop()
        assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


async def test_a_host_that_disabled_or_retuned_collection_keeps_its_choice() -> None:
    gc.set_threshold(0)
    async with Environment():
        assert gc.get_threshold()[0] == 0
    gc.set_threshold(700, 10, 10)
    async with Environment():
        gc.set_threshold(5000, 10, 10)
    assert gc.get_threshold() == (5000, 10, 10)


async def test_a_start_that_fails_after_serving_leaves_nothing_serving(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    env = Environment(kubeconfig_path=tmp_path / "a-file" / "kubeconfig")  # unwritable: not a folder
    with pytest.raises(OSError):
        await env.start()
    assert gctuning.serving_count() == 0 and gc.get_threshold() == (700, 10, 10)
    with pytest.raises(OSError):  # and its port is closed
        await asyncio.open_connection("127.0.0.1", env.port)
