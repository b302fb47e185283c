"""core/v1 and events.k8s.io/v1 Events share storage, converted field by field like the real server."""

from __future__ import annotations

import asyncio
import json

import httpx2

CORE = "/api/v1/namespaces/default/events"
NEW = "/apis/events.k8s.io/v1/namespaces/default/events"


async def test_events_both_groups(http: httpx2.AsyncClient) -> None:
    core = {
        "metadata": {"name": "e1"},
        "involvedObject": {"kind": "At", "name": "example", "namespace": "default"},
        "reason": "Created",
        "message": "pod created",
        "type": "Normal",
        "count": 1,
        "source": {"component": "at-controller"},
        "reportingComponent": "at-controller",
    }
    assert (await http.post(CORE, json=core)).status_code == 201
    got = (await http.get(f"{NEW}/e1")).json()
    assert got["apiVersion"] == "events.k8s.io/v1" and got["kind"] == "Event"
    assert got["regarding"]["name"] == "example" and got["note"] == "pod created"
    assert got["deprecatedCount"] == 1 and got["reportingController"] == "at-controller"
    rv = (await http.get(NEW)).json()["metadata"]["resourceVersion"]

    async def first_event() -> dict:
        async with http.stream(
            "GET",
            NEW,
            params={"watch": "1", "resourceVersion": rv, "fieldSelector": "regarding.name=example"},
        ) as r:
            async for line in r.aiter_lines():
                return json.loads(line)
        raise AssertionError("no event")

    watch = asyncio.create_task(first_event())  # from `rv`: it sees e2 whenever it connects
    new = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "e2"},
        "regarding": {"kind": "At", "name": "example", "namespace": "default"},
        "note": "done",
        "reason": "Completed",
        "type": "Normal",
        "action": "Reconcile",
        "reportingController": "c",
        "reportingInstance": "c-1",
        "eventTime": "2026-12-02T15:00:00.000000Z",
    }
    r = await http.post(NEW, json=new)
    assert r.status_code == 201 and r.json()["note"] == "done"
    ev = await asyncio.wait_for(watch, 3)
    assert ev["type"] == "ADDED" and ev["object"]["apiVersion"] == "events.k8s.io/v1"
    assert ev["object"]["note"] == "done"
    as_core = (await http.get(f"{CORE}/e2")).json()
    assert as_core["message"] == "done" and as_core["involvedObject"]["name"] == "example"
    listed = (await http.get(NEW, params={"fieldSelector": "regarding.name=example"})).json()
    assert [i["metadata"]["name"] for i in listed["items"]] == ["e1", "e2"]
    merge = {"content-type": "application/merge-patch+json"}
    r = await http.patch(f"{NEW}/e2", json={"note": "patched"}, headers=merge)
    assert r.status_code == 422  # an events.k8s.io/v1 Event's note is immutable there (as on the server)
    assert r.json()["details"]["causes"][0]["message"] == 'Invalid value: "patched": field is immutable'
    r = await http.patch(f"{CORE}/e2", json={"message": "patched"}, headers=merge)  # core/v1 allows it
    assert r.json()["message"] == "patched"
    assert (await http.get(f"{NEW}/e2")).json()["note"] == "patched"
    assert (await http.delete(f"{NEW}/e2")).status_code == 200
    assert (await http.get(f"{CORE}/e2")).status_code == 404
