"""CPU per object of the runtime's watch path, in process (issue 18).

    python benchmarks/bench_watch_path.py [--objects 5000] [--rounds 5]
    PYTHONPATH=/path/to/other/checkout python benchmarks/bench_watch_path.py   # the same for another tree

Feeds an informer the watch lines a `for_()` controller gets per object in `bench_vs_kopf.py` (the
ADDED of a new BenchItem, then the MODIFIED of its own status write, managedFields included) through
the builder's default chain (`IgnoreStatusChanges`, `EnqueueRequestForObject`) into a queue, and
reports the process CPU per object (min and median of the rounds). No server, no HTTP.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from pyscaffold_op.runtime.cache.informer import Informer
from pyscaffold_op.runtime.controller.handler import EnqueueRequestForObject
from pyscaffold_op.runtime.controller.predicate import IgnoreStatusChanges
from pyscaffold_op.runtime.controller.source import _InformerAdapter
from pyscaffold_op.runtime.objects.kinds import info_for

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_vs_kopf import bench_item_model

BenchItem = bench_item_model()  # the side-by-side benchmark's kind, as its operator decodes it


def wire(i: int, rv: int, status: dict[str, Any] | None = None) -> dict[str, Any]:
    """A BenchItem as the emulator sends it."""
    managed = [
        {
            "manager": "bench",
            "operation": "Update",
            "apiVersion": "bench.pyop.io/v1",
            "time": "2026-12-03T10:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:tier": {}}}, "f:spec": {}},
        }
    ]
    obj: dict[str, Any] = {
        "apiVersion": "bench.pyop.io/v1",
        "kind": "BenchItem",
        "metadata": {
            "name": f"item-{i:05d}",
            "namespace": "default",
            "labels": {"app": "bench", "tier": "x"},
            "uid": f"uid-{i:032d}",
            "resourceVersion": str(rv),
            "generation": 1,
            "creationTimestamp": "2026-12-03T10:00:00Z",
            "managedFields": managed,
        },
        "spec": {"value": i, "sentAt": 1764756000.123, "owner": "bench"},
    }
    if status is not None:
        obj["status"] = status
        managed.append({**managed[0], "manager": "op", "subresource": "status", "fieldsV1": {"f:status": {}}})
    return obj


class Counter:
    def __init__(self) -> None:
        self.n = 0

    def add(self, item: object) -> None:
        self.n += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    n = args.objects
    lines = [json.dumps({"type": "ADDED", "object": wire(i, 2 * i + 10)}).encode() for i in range(n)]
    status = {"observed": 1, "handledAt": 1.5}
    lines += [
        json.dumps({"type": "MODIFIED", "object": wire(i, 2 * i + 11, status)}).encode() for i in range(n)
    ]
    per_object = []
    for _ in range(args.rounds):
        informer = Informer(None, info_for(BenchItem))  # type: ignore[arg-type]  # lines come by hand
        queue = Counter()
        adapter = _InformerAdapter(EnqueueRequestForObject(), queue, (IgnoreStatusChanges(),))
        informer.add_event_handler(adapter)
        informer._synced.set()
        gc.collect()
        started = time.process_time()
        for line in lines:
            informer._handle_line(line)
        per_object.append((time.process_time() - started) / n * 1e6)
        assert queue.n == n, f"{queue.n} requests for {n} objects: the status writes were not all dropped"
    print(
        f"watch path per object (ADDED + its status write's MODIFIED): min {min(per_object):.1f} µs, "
        f"median {statistics.median(per_object):.1f} µs ({n} objects, {args.rounds} rounds)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
