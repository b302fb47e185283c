"""Watch: from a resourceVersion, bookmarks, timeouts, selectors, 410 Gone after compaction, drops."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2

from pyscaffold_op.envtest import Environment
from pyscaffold_op.testing import eventually
from tests.envtest.lightkube_client import lightkube_client

from .conftest import cm

CMS = "/api/v1/namespaces/default/configmaps"


async def events(
    http: httpx2.AsyncClient,
    path: str,
    n: int | None = None,
    wait: float = 5,
    **params: Any,
) -> list[dict[str, Any]]:
    """Read watch events until `n` arrived or the server ends the stream."""
    out: list[dict[str, Any]] = []

    async def read() -> None:
        async with http.stream("GET", path, params={"watch": "true", **params}) as r:
            assert r.status_code == 200
            assert r.headers["content-type"] == "application/json"
            async for line in r.aiter_lines():
                if line:
                    out.append(json.loads(line))
                    if n is not None and len(out) >= n:
                        return

    await asyncio.wait_for(read(), wait)
    return out


async def test_watch_from_resource_version_replays_only_later(http: httpx2.AsyncClient) -> None:
    first = (await http.post(CMS, json=cm("w1"))).json()
    await http.post(CMS, json=cm("w2"))
    await http.delete(f"{CMS}/w1")
    evs = await events(http, CMS, 2, resourceVersion=first["metadata"]["resourceVersion"])
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in evs] == [("ADDED", "w2"), ("DELETED", "w1")]
    deleted = evs[1]["object"]
    assert int(deleted["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    assert deleted["kind"] == "ConfigMap" and deleted["apiVersion"] == "v1"


async def test_watch_without_rv_starts_with_current_state(http: httpx2.AsyncClient) -> None:
    await http.post(CMS, json=cm("s1"))
    task = asyncio.create_task(events(http, CMS, 2))
    await http.post(CMS, json=cm("s2"))  # before or after the watch connects: ADDED either way
    evs = await task
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in evs] == [("ADDED", "s1"), ("ADDED", "s2")]


async def test_send_initial_events_ends_with_bookmark(http: httpx2.AsyncClient) -> None:
    await http.post(CMS, json=cm("i1"))
    evs = await events(
        http,
        CMS,
        2,
        sendInitialEvents="true",
        resourceVersionMatch="NotOlderThan",
        allowWatchBookmarks="true",
    )
    assert evs[0]["type"] == "ADDED"
    assert evs[1]["type"] == "BOOKMARK"
    assert evs[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


async def test_bookmarks_and_timeout(http: httpx2.AsyncClient) -> None:
    rv = (await http.get(CMS)).json()["metadata"]["resourceVersion"]
    evs = await events(http, CMS, None, resourceVersion=rv, allowWatchBookmarks="true", timeoutSeconds="1")
    assert evs and all(e["type"] == "BOOKMARK" for e in evs)
    assert evs[0]["object"] == {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": rv}}
    # without bookmarks, a timeout simply ends the stream
    assert await events(http, CMS, None, resourceVersion=rv, timeoutSeconds="1") == []


async def test_label_selector_transitions(http: httpx2.AsyncClient) -> None:
    rv = (await http.get(CMS)).json()["metadata"]["resourceVersion"]
    await http.post(CMS, json=cm("t", labels={"app": "x"}))
    await http.patch(
        f"{CMS}/t",
        json={"metadata": {"labels": {"app": "y"}}},
        headers={"content-type": "application/merge-patch+json"},
    )
    await http.patch(
        f"{CMS}/t",
        json={"metadata": {"labels": {"app": "x"}}},
        headers={"content-type": "application/merge-patch+json"},
    )
    evs = await events(http, CMS, 3, resourceVersion=rv, labelSelector="app=x")
    assert [e["type"] for e in evs] == ["ADDED", "DELETED", "ADDED"]


async def test_compaction_gives_410_gone(env: Environment, http: httpx2.AsyncClient) -> None:
    rv = (await http.post(CMS, json=cm("c1"))).json()["metadata"]["resourceVersion"]
    await http.post(CMS, json=cm("c2"))
    env.compact()
    evs = await events(http, CMS, 1, resourceVersion=rv)
    assert evs == [
        {
            "type": "ERROR",
            "object": {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": f"too old resource version: {rv} ({env.store.rv})",
                "reason": "Expired",
                "code": 410,
            },
        }
    ]
    # a continue token from before the compaction is 410 too
    await http.post(CMS, json=cm("c3"))
    page = (await http.get(CMS, params={"limit": 1})).json()
    await http.post(CMS, json=cm("c4"))
    env.compact()
    r = await http.get(CMS, params={"limit": 1, "continue": page["metadata"]["continue"]})
    assert r.status_code == 410 and r.json()["reason"] == "Expired"


async def test_bounded_history() -> None:
    async with Environment(history=5) as env, httpx2.AsyncClient(base_url=env.url) as http:
        rv = (await http.post(CMS, json=cm("h0"))).json()["metadata"]["resourceVersion"]
        for i in range(1, 8):
            await http.post(CMS, json=cm(f"h{i}"))
        evs = await events(http, CMS, 1, resourceVersion=rv)
        assert evs[0]["type"] == "ERROR" and evs[0]["object"]["code"] == 410


async def test_drop_watches_ends_streams(env: Environment, http: httpx2.AsyncClient) -> None:
    rv = (await http.get(CMS)).json()["metadata"]["resourceVersion"]
    task = asyncio.create_task(events(http, CMS, None, resourceVersion=rv))
    await http.post(CMS, json=cm("d1"))  # replayed from `rv` if the watch connects later
    await eventually(lambda: any(env.store._watchers.values()))  # the watch is registered
    env.drop_watches()
    evs = await asyncio.wait_for(task, 2)
    assert [e["object"]["metadata"]["name"] for e in evs] == ["d1"]


async def test_watch_namespace_and_field_selector(http: httpx2.AsyncClient) -> None:
    await http.post("/api/v1/namespaces", json={"metadata": {"name": "other"}})
    rv = (await http.get(CMS)).json()["metadata"]["resourceVersion"]
    await http.post("/api/v1/namespaces/other/configmaps", json=cm("o"))
    await http.post(CMS, json=cm("f1"))
    await http.post(CMS, json=cm("f2"))
    evs = await events(http, CMS, 1, resourceVersion=rv, fieldSelector="metadata.name=f2")
    assert [e["object"]["metadata"]["name"] for e in evs] == ["f2"]
    evs = await events(http, "/api/v1/configmaps", 3, resourceVersion=rv)
    assert [e["object"]["metadata"]["name"] for e in evs] == ["o", "f1", "f2"]


async def test_lightkube_watch_in_process(env: Environment) -> None:
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ConfigMap

    client = lightkube_client(env)
    created = await client.create(ConfigMap(metadata=ObjectMeta(name="lw")))

    async def first() -> tuple[str, str]:
        async for typ, obj in client.watch(ConfigMap, namespace="default", resource_version="0"):
            return typ, obj.metadata.name
        raise AssertionError("no event")

    assert await asyncio.wait_for(first(), 3) == ("ADDED", "lw")
    await client.delete(ConfigMap, created.metadata.name)
    await client.close()


async def test_watch_fan_out(env: Environment, http: httpx2.AsyncClient) -> None:
    rv = (await http.get(CMS)).json()["metadata"]["resourceVersion"]
    tasks = [asyncio.create_task(events(http, CMS, 5, resourceVersion=rv)) for _ in range(20)]
    # from `rv`: each watch sees the five creates whenever it connects
    for i in range(5):
        await http.post(CMS, json=cm(f"fan{i}"))
    results = await asyncio.gather(*tasks)
    assert all([e["object"]["metadata"]["name"] for e in r] == [f"fan{i}" for i in range(5)] for r in results)


def test_unresponsive_watcher_is_cut_off() -> None:
    from pyscaffold_op.envtest.storage.objectstore import Store
    from pyscaffold_op.envtest.storage.watch import Watcher

    store = Store()
    info = store.info("", "v1", "configmaps")
    w = Watcher("v1", None, None)
    w.MAX_BACKLOG = 3
    store.watch(w, info.bucket, None)
    for i in range(5):
        store.create(info, "default", cm(f"slow{i}"))
    assert w.closed and w.queue.qsize() == 4  # three events, then the end of the stream
