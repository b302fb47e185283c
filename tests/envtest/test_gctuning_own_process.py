"""`gctuning.own_process`: what `pyop envtest serve` does to its own collector once it serves. Run in a
child process: the settings are process-wide and must not leak into the test session."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from pyscaffold_op.envtest.gctuning import OWN_PROCESS_THRESHOLDS

CHILD = textwrap.dedent(
    """
    import gc, json, weakref
    from pyscaffold_op.envtest.gctuning import own_process

    before = gc.get_freeze_count()
    tracked = len(gc.get_objects())  # the emulator's modules, classes and functions, imported above
    own_process()
    frozen = gc.get_freeze_count()

    class Node:
        pass

    a, b = Node(), Node()
    a.peer, b.peer = b, a  # a cycle made after tuning: only the cyclic collector can free it
    ref = weakref.ref(a)
    del a, b
    gc.collect()
    print(json.dumps({"before": before, "tracked": tracked, "frozen": frozen,
                      "thresholds": gc.get_threshold(), "cycle_freed": ref() is None,
                      "enabled": gc.isenabled()}))
    """
)


def test_freezes_start_up_objects_and_raises_thresholds_but_still_collects_cycles() -> None:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True).stdout
    got = json.loads(out)
    assert got["before"] == 0
    # what start-up made is frozen (how much that is depends on the environment: 8,700 objects in a
    # bare venv, 12,000 beside the test tools)
    assert got["frozen"] >= got["tracked"] // 2 > 1_000
    assert tuple(got["thresholds"]) == OWN_PROCESS_THRESHOLDS
    assert got["enabled"] and got["cycle_freed"]
