"""`kubectl logs -f`: a pods/log stream that follows the container until it stops running."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyscaffold_op.envtest.storage.objectstore import Event, Store

PODS = ("", "pods")
POLL_SECONDS = 0.25


def _running(pod: dict[str, Any], container: str) -> bool:
    if pod["metadata"].get("deletionTimestamp") or (pod.get("status") or {}).get("phase") != "Running":
        return False
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        if cs.get("name") == container:
            return "running" in (cs.get("state") or {})
    return False


async def follow(
    store: Store, pod: dict[str, Any], container: str, text: Callable[[dict[str, Any]], str | None]
) -> AsyncGenerator[bytes, None]:
    """What the container has logged, then what it logs next, until it is no longer running (it
    ended, restarts, or the Pod is deleted), as the kubelet's follow stream ends."""
    ns, name, uid = pod["metadata"].get("namespace", ""), pod["metadata"]["name"], pod["metadata"]["uid"]
    changed = asyncio.Event()

    def on_change(ev: Event) -> None:
        if ev.gr == PODS and ev.obj["metadata"]["uid"] == uid:
            changed.set()

    store.on_change.append(on_change)
    sent = 0
    try:
        current: dict[str, Any] | None = pod
        while True:
            logged = text(current) or "" if current is not None else ""
            if len(logged) > sent:
                yield logged[sent:].encode()
                sent = len(logged)
            if current is None or not _running(current, container):
                return
            # a running container's output grows as its script's clock goes: look again soon
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), POLL_SECONDS)
            changed.clear()
            found = store.find(PODS, ns, name)
            current = found if found is not None and found["metadata"]["uid"] == uid else None
    finally:
        store.on_change.remove(on_change)
